"""Compaction 2.0: the tiered, sticky compactor. Properties over random agent sessions, then each tier."""

from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, given, settings, strategies as st

from tui_agent.compact import Compactor, CompactPolicy, render
from tui_agent.core.compaction import newest_round_start
from tui_agent.core.messages import protocol_errors, tool_result_block, tool_uses, user_text
from tests.core.helpers import split_turn


def dumps(messages) -> list[str]:
    return [one(m) for m in messages]


def one(message) -> str:
    return json.dumps(message, sort_keys=True)


def use(tool_id: str, name: str = "Read", path: str = "src/a.py", text: str = "") -> dict:
    content = [{"type": "text", "text": text}] if text else []
    key = "command" if name == "Bash" else "file_path"
    content.append({"type": "tool_use", "id": tool_id, "name": name, "input": {key: path}})
    return {"role": "assistant", "content": content}


def result(tool_id: str, content, is_error: bool = False) -> dict:
    return {"role": "user", "content": [tool_result_block(tool_id, content, is_error)]}


@st.composite
def sessions(draw):
    """A random agent session as the sequence of histories its model calls see, plus user actions."""
    history: list[dict] = []
    calls: list[tuple[int, list[tuple[str, int]]]] = []
    n_prompts = draw(st.integers(1, 4))
    counter = 0
    for p in range(n_prompts):
        history.append(user_text(f"prompt {p}: " + "please " * draw(st.integers(0, 30))))
        rounds = draw(st.integers(0, 6))
        for _ in range(rounds):
            calls.append((len(history), draw(st.lists(st.tuples(st.sampled_from(["pin", "exclude", "expand"]),
                                                                  st.integers(0, 60)), max_size=1))))
            k = draw(st.integers(1, 3))
            ids = [f"t{counter + j}" for j in range(k)]
            counter += k
            names = [draw(st.sampled_from(["Read", "Grep", "Bash", "Edit"])) for _ in ids]
            said = "thinking aloud " * draw(st.integers(0, 5))
            # no blank text block: the API refuses one, and assembly never keeps one (issue 9 item 8)
            content = [{"type": "text", "text": said}] if said else []
            content += [{"type": "tool_use", "id": i, "name": n,
                         "input": {"command": f"ls {i}"} if n == "Bash" else {"file_path": f"src/{i}.py"}}
                        for i, n in zip(ids, names)]
            history.append({"role": "assistant", "content": content})
            results = []
            for i in ids:
                size = draw(st.sampled_from([10, 500, 3000, 9000, 24000]))
                as_list = draw(st.booleans())
                body = "r" * size
                results.append(tool_result_block(i, [{"type": "text", "text": body}] if as_list else body,
                                                 draw(st.booleans())))
            history.append({"role": "user", "content": results})
        calls.append((len(history), []))
        history.append({"role": "assistant", "content": [{"type": "text", "text": f"answer {p}"}]})
    return history, calls


SMALL = dict(context_window=30_000, max_output_tokens=4_000, enabled=True)


def replay(history, calls, policy=None, observe=None):
    compactor = Compactor(policy or CompactPolicy(**SMALL), baseline_tokens=500)
    out = []
    for length, actions in calls:
        for action, index in actions:
            if index < length:
                getattr(compactor, action)(index)
        prefix = history[:length]
        result = compactor.compact(prefix)
        out.append((prefix, result))
        if observe:
            compactor.observe_usage(observe(result))
    return compactor, out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions())
def test_properties_valid_unmutated_deterministic_sticky(session):
    history, calls = session
    snapshot = copy.deepcopy(history)
    _, first = replay(history, calls)
    _, second = replay(history, calls)
    assert history == snapshot, "the history is never mutated"
    previous = None
    for (prefix, result), (_, again) in zip(first, second):
        plan = result.plan
        assert protocol_errors(result.messages) == [], "every request is valid"
        assert dumps(result.messages) == dumps(again.messages), "deterministic"
        assert dumps(render(prefix, plan)) == dumps(result.messages), "render(history, plan) is the request"
        # the newest round is always intact (unless it alone is over the window: then the plan says so)
        newest = newest_round_start(prefix)
        if not plan.over_budget and not any(c.hard for cuts in plan.cuts.values() for c in cuts):
            assert dumps(result.messages[-(len(prefix) - newest):]) == dumps(prefix[newest:])
        # pins are sent verbatim; excluded messages are not sent
        for i in plan.pins:
            if i < len(prefix) and i not in plan.excluded:
                assert one(prefix[i]) in dumps(result.messages)
        for i in plan.excluded:
            ids = {u["id"] for u in tool_uses(prefix[i])}
            sent_ids = {u["id"] for m in result.messages for u in tool_uses(m)}
            assert not ids & sent_ids
        # budget met, unless impossible (then the plan says so)
        assert plan.estimated_tokens <= plan.budget_tokens or plan.over_budget
        # sticky: between events the request only appends
        if previous is not None and plan.event is None:
            assert dumps(result.messages[: len(previous)]) == dumps(previous)
        previous = result.messages


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions())
def test_export_import_gives_the_same_next_request(session):
    history, calls = session
    # real usage that differs from the estimate, so measured sizes are part of the state
    compactor, out = replay(history, calls[:-1], observe=lambda r: round(1.37 * r.plan.message_tokens_after) + 900)
    state = json.loads(json.dumps(compactor.export_state()))  # JSON-safe, as the journal stores it
    length = calls[-1][0]
    twin = Compactor(CompactPolicy(**SMALL), baseline_tokens=500)
    twin.import_state(history[:out[-1][0].__len__()] if out else [], state)
    expected = compactor.compact(history[:length])
    got = twin.compact(history[:length])
    assert dumps(got.messages) == dumps(expected.messages)
    assert got.plan.estimated_tokens == expected.plan.estimated_tokens


def long_turn(rounds: int, size: int = 12_000, name: str = "Read") -> list[dict]:
    """One prompt, then `rounds` tool rounds and no user text at all (a long autonomous run)."""
    history = [user_text("port the whole project")]
    for i in range(rounds):
        history.append(use(f"t{i}", name, f"src/f{i}.py", text=f"step {i}"))
        history.append(result(f"t{i}", f"{i}:" + "x" * size))
    return history


def run_calls(compactor, history, start=1, step=2):
    results = []
    for length in range(start, len(history) + 1, step):
        results.append(compactor.compact(history[:length]))
    return results


def test_cut_on_read_cuts_once_and_freezes_the_copy():
    # the cut mechanism under the old rule, now an explicit option (`cut_always`): issue 17 replaced "cut
    # every long result once read" with "no loss without pressure" (tests/core/compaction/test_cut_pricing.py)
    history = long_turn(3, size=10_000)
    compactor = Compactor(CompactPolicy(context_window=1_000_000, max_output_tokens=10_000, enabled=True,
                                        cut_always=True))
    first = compactor.compact(history[:3])  # the result is the newest round: whole
    assert first.messages[2]["content"][0]["content"] == history[2]["content"][0]["content"]
    second = compactor.compact(history[:5])  # read by the model now: cut, with a note saying so
    cut = second.messages[2]["content"][0]["content"]
    assert len(cut) < 3000 and "cut after it was read" in cut and "call Read again" in cut
    assert second.plan.op(2).kind == "cut" and "already read" in second.plan.op(2).reason
    assert second.plan.event is not None and second.plan.event.kinds == ("cut",) and not second.plan.event.major
    third = compactor.compact(history[:7])  # the next result is cut now; what came before is unchanged
    assert dumps(third.messages[:4]) == dumps(second.messages[:4])
    assert third.messages[2] is second.messages[2]  # the frozen cut copy is the very same object
    assert third.plan.cached_messages == 4


def test_drop_works_inside_one_long_agentic_turn_and_leaves_a_recap():
    history = long_turn(100)
    compactor = Compactor(CompactPolicy(context_window=60_000, max_output_tokens=8_000, enabled=True,
                                        mask=False))  # the drop tier itself (ranked masks would fit the reads)
    results = run_calls(compactor, history, start=3)
    drops = [r for r in results if r.plan.event is not None and "drop" in r.plan.event.kinds]
    assert drops, "the window fills inside one turn, so old rounds must be dropped"
    last = results[-1]
    assert last.plan.estimated_tokens <= 60_000 - 8_000
    assert len(last.messages) < len(history)
    recap = last.messages[last.plan.recap_position]["content"][0]["text"]
    request = json.dumps(last.messages)
    assert "port the whole project" in request  # the prompt (in the head or the recap)
    assert all(f"src/f{i}.py" in request for i in range(100))  # every file read is named somewhere
    dropped = [i for i in range(len(history)) if not last.plan.is_sent(i) and history[i]["role"] == "assistant"]
    assert dropped and all(history[i]["content"][1]["input"]["file_path"] in recap for i in dropped)
    assert protocol_errors(last.messages) == []
    event = drops[0].plan.event
    assert event.loss.clean and event.dropped > 0 and "high-water" in event.reason
    assert "dropped" in event.line() and "recap keeps" in event.line()


def test_head_of_the_conversation_stays_first_and_cached_across_events():
    history = long_turn(200, size=6_000)
    compactor = Compactor(CompactPolicy(context_window=60_000, max_output_tokens=8_000, enabled=True, keep_head=0.1,
                                        mask=False))  # the drop tier itself (ranked masks would fit the reads)
    results = run_calls(compactor, history, start=3)
    drops = [r for r in results if r.plan.event is not None and "drop" in r.plan.event.kinds]
    assert len(drops) >= 2
    heads = {tuple(dumps(r.messages[: r.plan.drop_from])) for r in drops}
    assert len(heads) == 1 and drops[0].plan.drop_from > 0
    assert drops[1].plan.cached_messages >= drops[1].plan.drop_from  # the head is read from the cache


def test_mask_replaces_old_rerunnable_results_with_a_placeholder():
    history = [user_text("look around")]
    for i in range(30):
        history.append(use(f"g{i}", "Grep", f"pattern{i}"))
        history.append(result(f"g{i}", "match\n" * 600))
    history = split_turn(history, every=10)  # an event masks finished turns' results, never the one in progress
    policy = CompactPolicy(context_window=40_000, max_output_tokens=4_000, enabled=True, cut_on_read=False,
                           mask_protect_tokens=2_000, keep_head=0, low_water=0.30, high_water=0.6)  # (a low mark that keeps
    compactor = Compactor(policy)  # masked results in the request: at 10 % the same event's drop takes them)
    results = run_calls(compactor, history, start=3)
    masked = [r for r in results if r.plan.event is not None and "mask" in r.plan.event.kinds]
    assert masked
    plan = masked[0].plan
    index = next(iter(plan.masks))
    text = masked[0].messages[plan.position(index)]["content"][0]["content"]
    assert text.startswith("[Grep pattern") and "cleared from context" in text and "call Grep again" in text


def test_user_prompts_and_paths_are_never_lost():
    history = []
    for p in range(12):
        history.append(user_text(f"prompt number {p} about widgets"))
        for r in range(3):
            tid = f"p{p}r{r}"
            history.append(use(tid, "Edit" if r == 1 else "Read", f"pkg/m{p}_{r}.py"))
            history.append(result(tid, "y" * 8000))
        history.append({"role": "assistant", "content": [{"type": "text", "text": f"done {p}"}]})
    compactor = Compactor(CompactPolicy(context_window=40_000, max_output_tokens=4_000, enabled=True))
    for length in range(1, len(history) + 1):
        if history[length - 1]["role"] == "assistant":
            continue
        result_ = compactor.compact(history[:length])
        request = json.dumps(result_.messages)
        for m in history[:length]:
            if m["role"] == "user" and m["content"][0]["type"] == "text":
                assert m["content"][0]["text"] in request
            for u in tool_uses(m):
                assert u["input"]["file_path"] in request


def test_pin_brings_a_dropped_message_back_verbatim_and_exclude_leaves_it_out():
    history = long_turn(90, size=8_000)
    compactor = Compactor(CompactPolicy(context_window=40_000, max_output_tokens=4_000, enabled=True, keep_head=0,
                                        mask=False))  # the drop tier itself (ranked masks would fit the reads)
    results = run_calls(compactor, history, start=3)
    plan = results[-1].plan
    dropped = next(i for i in range(len(history)) if not plan.is_sent(i) and history[i]["role"] == "assistant")
    compactor.pin(dropped)
    pinned = compactor.compact(history)
    assert one(history[dropped]) in dumps(pinned.messages)
    assert one(history[dropped + 1]) in dumps(pinned.messages)  # its results come with it
    assert pinned.plan.op(dropped).kind == "pinned" and "pin" in pinned.plan.event.kinds
    assert protocol_errors(pinned.messages) == []
    sent = max(i for i in range(len(history) - 4) if pinned.plan.is_sent(i) and history[i]["role"] == "assistant")
    compactor.exclude(sent)
    excluded = compactor.compact(history)
    assert excluded.plan.op(sent).kind == "excluded" and not excluded.plan.is_sent(sent + 1)
    assert one(history[sent]) not in dumps(excluded.messages)
    assert protocol_errors(excluded.messages) == []


def test_expand_sends_a_cut_result_whole_again():
    history = long_turn(3, size=10_000)
    compactor = Compactor(CompactPolicy(context_window=1_000_000, max_output_tokens=10_000, enabled=True))
    compactor.compact(history[:5])
    compactor.expand(2)
    again = compactor.compact(history[:5])
    assert again.messages[2] == history[2] and again.plan.op(2).kind == "kept"
    assert compactor.compact(history[:7]).messages[2] == history[2]  # and it stays whole


def test_estimate_is_anchored_on_usage_and_separates_the_baseline():
    history = long_turn(20, size=4_000)
    compactor = Compactor(CompactPolicy(context_window=1_000_000, max_output_tokens=10_000, enabled=True),
                          baseline_tokens=10_000)
    # a provider whose real count is 15,000 for the baseline plus 1.5× chars/4 for messages
    real = lambda r: round(15_000 + 1.5 * r.plan.message_tokens_after)  # noqa: E731
    for length in range(3, len(history) + 1, 2):
        result_ = compactor.compact(history[:length])
        if length > 5:
            assert abs(result_.plan.estimated_tokens - real(result_)) / real(result_) < 0.01
        compactor.observe_usage(real(result_))
        assert compactor.compact.__self__.tokens.estimate() == real(result_)  # exact for what it measured
    assert 14_000 < compactor.tokens.baseline < 16_000


def test_prompt_too_long_lowers_the_window_and_forces_an_event():
    history = long_turn(30, size=8_000)
    compactor = Compactor(CompactPolicy(context_window=200_000, max_output_tokens=8_000, enabled=True,
                                        mask=False))  # the drop tier itself (ranked masks would fit the reads)
    before = compactor.compact(history)
    assert before.plan.event is None or "drop" not in before.plan.event.kinds
    compactor.too_long(history, 90_000, 60_000)
    after = compactor.compact(history)
    assert "drop" in after.plan.event.kinds and after.plan.estimated_tokens < 30_000


def test_off_sends_everything():
    history = long_turn(30, size=8_000)
    compactor = Compactor(CompactPolicy(context_window=20_000, max_output_tokens=2_000, enabled=False))
    result_ = compactor.compact(history)
    assert result_.messages == history and result_.plan.mode == "off" and not result_.plan.changed


async def test_summary_tier_writes_the_summary_into_the_recap_with_the_demo_model(tmp_path):
    from tui_agent.core import events as ev
    from tui_agent.core.compaction import CompactPolicy as Policy
    from tui_agent.core.providers.demo import DemoProvider
    from tui_agent.core.agent.session import Session
    from tui_agent.core.tools import ToolRegistry
    from tui_agent.core.tools.glob import GlobTool
    from tui_agent.core.tools.read import ReadTool

    for i in range(6):
        (tmp_path / f"big_{i}.py").write_text("\n".join(f"x_{n} = {n}  # " + "pad " * 20 for n in range(400)))
    session = Session(DemoProvider(workspace=tmp_path, context_window=16_000), ToolRegistry([GlobTool(), ReadTool()]), tmp_path,
                      # marks in tokens: the demo pages long files (small reads), so a low mark makes the event
                      compact_policy=Policy(summary=True, enabled=True, high_water=3000, low_water=1500))
    heard: list = []
    session.listeners.append(heard.append)  # the background summary tells the listeners, not the turn
    events = []
    for prompt in ("what is in this repo?", "tell me about big_3.py", "and big_5.py?", "what about the rest?",
                   "and big_1.py?"):  # the summary written in the background is swapped in at a later turn
        events += [e async for e in session.run_turn(prompt)]
    written = [e for e in heard if isinstance(e, ev.SummaryWritten)]
    assert written and written[0].summary and written[0].summary.startswith("Summary (extractive")
    reported = [e for e in events if isinstance(e, ev.CompactionReported)]
    drop = next(k for k, e in enumerate(reported) if e.plan.event is not None and "drop" in e.plan.event.kinds)
    assert reported[drop].plan.recap.summary is None, "the call that dropped did not wait for the summary"
    later = [e for e in reported[drop + 1:] if e.plan.recap is not None and e.plan.recap.summary]
    assert later, "a later call carries the summary in its recap"
    plan = later[0].plan
    recap = later[0].messages[plan.recap_position]["content"][0]["text"]
    assert "Summary of that part:" in recap and "what is in this repo?" in recap
    assert plan.op(0 if plan.drop_from == 0 else plan.drop_from).kind == "summarised"
    assert protocol_errors(session.history) == []


async def test_compact_command_runs_the_summary_now_and_the_breaker_stops_after_three_failures(tmp_path):
    from tui_agent.core.compaction import CompactPolicy as Policy
    from tui_agent.core.providers.scripted import ScriptedProvider
    from tui_agent.core.agent.session import Session
    from tui_agent.core.tools import ToolRegistry

    history = long_turn(12, size=3_000)
    history.append({"role": "assistant", "content": [{"type": "text", "text": "all read"}]})
    from tui_agent.core.providers.base import ProviderError
    from tui_agent.core.providers.scripted import text_reply, tool_reply

    provider = ScriptedProvider(replies=[text_reply("The user asked to port the project; src/f0..f11 were read."),
                                 ProviderError("overloaded"), tool_reply("Read", {"file_path": "x"}, "t"),
                                 text_reply("   ")])
    session = Session(provider, ToolRegistry([]), tmp_path, compact_policy=Policy(summary=True, enabled=True))
    session.history.extend(history)
    text = await session.compact_now("the port")
    assert text.startswith("Compacted now") and "dropped" in text and "background" in text
    assert (await session.wait_summary()).state == "attached"
    request = provider.requests[0]
    assert request.messages[-1]["content"][0]["text"].endswith("Focus on: the port")
    assert request.messages[:-1] == [m for m in history]  # the summary call repeats the cached prefix
    assert "Summary of that part:\nThe user asked to port" in session.next_request().messages[
        session.plan_call().plan.recap_position]["content"][0]["text"]
    # three failures in a row (an error, a tool call instead of a summary, an empty reply) stop the tier
    for k in range(3):
        session.history.append(user_text(f"next task {k}"))
        for i in range(12):
            session.history += [use(f"k{k}_{i}", path=f"lib/g{k}_{i}.py"), result(f"k{k}_{i}", "z" * 3_000)]
        assert (await session.compact_now()).startswith("Compacted now")
        assert (await session.wait_summary()).state == "stale"  # failed, and counted by the breaker
    assert session.compactor.state.summary_failures == 3
    assert not session.compactor.summary_enabled  # the breaker: events no longer ask for a summary


def test_recap_keeps_typed_prompts_verbatim_even_after_a_huge_paste():
    from tui_agent.core.compaction.recap import choose_prompts

    prompts = [(0, "first question"), (1, "log: " + "e" * 90_000), (2, "second question"), (3, "x" * 1_999)]
    chosen = dict(choose_prompts(prompts, budget_chars=80_000, max_chars=2_000))
    assert chosen[0] == "first question" and chosen[2] == "second question" and chosen[3] == "x" * 1_999
    assert chosen[1].startswith("log: eee") and len(chosen[1]) < 600 and "chars in all" in chosen[1]
    # over the budget, the newest prompts win
    many = [(i, f"prompt {i} " + "p" * 1_000) for i in range(100)]
    kept = choose_prompts(many, budget_chars=20_000, max_chars=2_000)
    assert [i for i, _ in kept] == list(range(100 - len(kept), 100)) and 15 <= len(kept) <= 20


def test_an_emergency_event_says_its_limit_is_the_window_less_the_output_reserve():
    """Issue 18: "over the 11.9k window" while the meter said 16.0k (the limit is window − reserve)."""
    history = long_turn(1, size=200_000)
    compactor = Compactor(CompactPolicy(context_window=16_000, max_output_tokens=4_096, enabled=True))
    event = compactor.compact(history).plan.event
    assert event is not None and "window −" in event.reason and "output reserve" in event.reason, event and event.reason
