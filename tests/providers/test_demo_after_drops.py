"""The demo model on this repository, through several prompts: every compaction tier shows (cut, mask, a
drop that keeps the head, the summary), the prompt being worked on and the first prompt are always sent
as typed, and after a drop the demo answers the newest prompt the user typed, never the recap."""

from __future__ import annotations

import re
from pathlib import Path

from tui_agent.core import events as ev
from tui_agent.core.compaction.recap import build_recap, facts_of
from tui_agent.core.compaction.marks import is_compactor_text, is_recap, is_user_prompt, recap_prompts
from tui_agent.core.agent.factory import build_session
from tui_agent.core.messages import protocol_errors, text_of, user_text
from tui_agent.core.providers.demo_turn import current_turn, earlier_prompts

REPO = Path(__file__).resolve().parents[2]
# "what did we do so far?" ends a turn at once: the summary the drop before it asked for joins the recap
# then (an unasked event takes nothing of the turn in progress, issue 28 §3, so every long turn's first
# call drops the turn before it, and a summary written meanwhile covers less than the new recap)
EXPLORING = ("what is in this repo?", "how does compaction work?", "where are the tests?",
             "how does the journal work?", "what did we do so far?", "explain the permissions",
             "how are themes loaded?")


class Run:
    """A demo session on this repository; every call's plan and request, by the prompt it served."""

    def __init__(self) -> None:
        self.session, _ = build_session(REPO, model="demo", headless=True)
        self.calls: list[tuple[str, ev.CompactionReported]] = []
        self.prompts: list[str] = []

    async def ask(self, prompt: str) -> list:
        self.prompts.append(prompt)
        events = [e async for e in self.session.run_turn(prompt)]
        assert events[-1].reason == "completed", events[-1]
        self.calls += [(prompt, e) for e in events if isinstance(e, ev.CompactionReported)]
        return events

    def dropped(self) -> bool:
        return any(e.plan.drop_until > e.plan.drop_from for _, e in self.calls)


def tools(events) -> list[tuple[str, dict]]:
    return [(e.name, e.input) for e in events if isinstance(e, ev.ToolStarted)]


def answer(events) -> str:
    return "".join(e.text for e in events if isinstance(e, ev.TextDelta))


async def explore_until_a_drop(run: Run) -> None:
    for prompt in EXPLORING:
        await run.ask(prompt)
        if run.dropped():
            return
    raise AssertionError(f"no drop within {len(EXPLORING)} prompts on this repository")


async def test_every_tier_shows_within_a_few_prompts_and_the_prompts_stay():
    run = Run()
    for prompt in EXPLORING:
        await run.ask(prompt)
    kinds = {kind for _, e in run.calls if e.plan.event for kind in e.plan.event.kinds}
    # the summary is written in the background and joins the recap at a later call
    kinds |= {"summary" for _, e in run.calls if e.plan.recap is not None and e.plan.recap.summary}
    assert {"cut", "mask", "drop", "summary"} <= kinds, kinds
    drops = [e.plan for _, e in run.calls if e.plan.event and "drop" in e.plan.event.kinds]
    assert all(plan.drop_from > 0 for plan in drops), "a drop keeps the head (the task as first stated)"
    assert all(plan.low_tokens > plan.baseline_tokens for _, e in run.calls for plan in [e.plan])
    # issue 17 (replaces "the configured protection fits in what the low mark leaves after the base": the
    # demo's low mark is 0.4 now, and the protection is measured at each event against what the drop keeps,
    # `ranking.mask_protection`): masking reaches the request, a result masked at an event is sent after it
    masking = [e.plan for _, e in run.calls if e.plan.event and "mask" in e.plan.event.kinds]
    assert any(plan.is_sent(i) for plan in masking for i, per in plan.masks.items()
               if any(m.call == plan.call for m in per)), "masked results reach the request"
    for prompt, e in run.calls:
        sent = [text_of(m) for m in e.messages if is_user_prompt(m)]
        assert prompt in sent, f"call {e.call}: the prompt of the turn in progress was dropped"
        assert sent[0] == EXPLORING[0], f"call {e.call}: the first prompt left the head"
    assert protocol_errors(run.session.history) == []


async def test_after_a_drop_grep_for_two_words_greps_both():
    run = Run()
    await explore_until_a_drop(run)
    events = await run.ask("grep for TODO and FIXME")
    assert [(name, i["pattern"]) for name, i in tools(events)] == [("Grep", "TODO"), ("Grep", "FIXME")]
    text = answer(events)
    assert "`TODO`:" in text and "`FIXME`:" in text and "conversation" not in text


async def test_after_a_drop_a_recap_lists_the_real_prompts_and_hello_counts_them():
    run = Run()
    await explore_until_a_drop(run)
    asked = list(run.prompts)
    events = await run.ask("hello")
    assert tools(events) == []
    assert f"You have asked me {len(asked)} things before this" in answer(events)
    events = await run.ask("what did we do so far?")
    assert tools(events) == []
    text = answer(events)
    assert "Context recap" not in text and "[" not in text.split("\n\n")[1]
    listed = [line.split("“", 1)[1].rstrip("”") for line in text.splitlines() if line[:1].isdigit()]
    assert listed == asked + ["hello"], "every real prompt, the first one included, oldest first"


async def test_a_named_file_after_a_drop_is_the_one_read():
    run = Run()
    await explore_until_a_drop(run)
    events = await run.ask("what does tui_agent/core/agent/budget.py do?")
    name, tool_input = tools(events)[0]
    assert (name, tool_input["file_path"]) == ("Read", "tui_agent/core/agent/budget.py")
    assert "as you asked" in answer(events)


async def test_what_is_in_this_repo_takes_a_few_calls():
    run = Run()
    events = await run.ask("what is in this repo?")
    # issue 28 §3: the top level and every file's line count at once, then the README (AGENTS.md is in the
    # system prompt already): the layout shows the folders first with their sizes, then the loose files
    assert [name for name, _ in tools(events)] == ["Glob", "Grep", "Read", "Read"]
    assert ("Read", "README.md") in [(name, i.get("file_path")) for name, i in tools(events)]
    assert ("Read", "AGENTS.md") not in [(name, i.get("file_path")) for name, i in tools(events)]
    text = answer(events)
    assert len(run.calls) == 3 and "`README.md`" in text
    folders = re.findall(r"^- `([\w.-]+/)`: ([\d,]+) files?, ([\d,]+) lines?$", text, flags=re.MULTILINE)
    assert {"tui_agent/", "tests/", "bench/", "docs/", "themes/"} <= {name for name, _, _ in folders}, text
    sizes = [int(lines.replace(",", "")) for _, _, lines in folders]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] > 0, "largest folder first, each with its lines"
    loose = text.index("Loose files at the top level")
    assert text.index("`tui_agent/`") < loose and "`pyproject.toml`" in text[loose:], "folders first, then loose files"


def test_the_recap_is_recognised_by_the_mark_its_builder_writes():
    """The mark lives in one place (compaction.marks); the recap's own builder must start with it."""
    history = [user_text("first prompt"), {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
               user_text("second prompt"), {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    _, recap = build_recap([facts_of(m) for m in history], 4, frozenset(), prompt_chars=10_000,
                            prompt_max_chars=2_000, call=1)
    assert is_recap(recap) and is_compactor_text(recap) and not is_user_prompt(recap)
    assert recap_prompts(recap) == ["first prompt", "second prompt"]
    request = [recap, user_text("what did we do so far?")]
    assert current_turn(request).prompt == "what did we do so far?"
    assert earlier_prompts(request) == ["first prompt", "second prompt"]
    # A recap that came last (the current prompt is older than it) is still not taken for the prompt.
    assert current_turn([user_text("newest real prompt"), recap]).prompt == "newest real prompt"


async def test_a_long_file_is_read_as_its_first_lines(tmp_path):
    """One Read must not fill the demo's small window (an emergency drop would take the prompt with it)."""
    (tmp_path / "long.py").write_text("".join(f"line_{n} = {n}\n" for n in range(20_000)))
    (tmp_path / "short.py").write_text("x = 1\n")
    session, _ = build_session(tmp_path, model="demo", headless=True)
    events = await session_turn(session, "what do long.py and short.py do?")
    reads = {i["file_path"]: i for name, i in tools(events) if name == "Read"}
    assert reads["short.py"] == {"file_path": "short.py"}
    assert 20 <= reads["long.py"]["limit"] < 1000
    sent = [e for e in events if isinstance(e, ev.CompactionReported)]
    assert all(e.plan.estimated_tokens < e.plan.budget_tokens for e in sent)


async def session_turn(session, prompt):
    return [e async for e in session.run_turn(prompt)]


def test_a_pasted_prompt_of_several_lines_does_not_end_the_recaps_prompt_list():
    """"what did we do so far?" on the athena transcript listed 33 of 79 prompts: prompt 33 was a pasted
    screen of several lines, and the recap's list ended at its second line. The list ends at the recap's
    next section now (the prompts stay verbatim), and the prompts after it are read too."""
    pasted = "🔄 Monitor\n📁 Project: /x\n\nPress 'q' + Enter to quit"
    texts = ["first prompt", pasted, "the one after it"]
    history = []
    for text in texts:
        history += [user_text(text), {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    _, recap = build_recap([facts_of(m) for m in history], len(history), frozenset(), prompt_chars=10_000,
                            prompt_max_chars=2_000, call=1)
    assert recap_prompts(recap) == texts
    assert earlier_prompts([recap, user_text("what did we do so far?")]) == texts
