"""The core budget ledger: the figures every face shows, fed by engine events (no Textual here)."""

from __future__ import annotations

from pathlib import Path

from tui_agent.core import events as ev
from tui_agent.core.agent.system_prompt import base_breakdown
from tui_agent.core.agent.budget import BudgetLedger, first_difference, recap_tokens, request_diff
from tui_agent.core.compaction import Compactor, CompactPolicy
from tui_agent.core.messages import tool_result_block, user_text
from tui_agent.core.providers.base import UsageInfo
from tui_agent.core.models import cost_usd
from tui_agent.core.providers.scripted import ScriptedProvider
from tui_agent.core.agent.session import Session
from tui_agent.core.agent.system_prompt import build_system_prompt
from tui_agent.core.tokens import message_tokens
from tui_agent.core.tools import ToolRegistry, builtin_tools

PRICED = "claude-sonnet-4-5"


def long_turn(rounds: int, size: int = 12_000) -> list[dict]:
    history = [user_text("port the whole project")]
    for i in range(rounds):
        history.append({"role": "assistant", "content": [
            {"type": "text", "text": f"step {i}"},
            {"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {"file_path": f"src/f{i}.py"}}]})
        history.append({"role": "user", "content": [tool_result_block(f"t{i}", f"{i}:" + "x" * size)]})
    return history


def calls_until_drop(compactor: Compactor, history: list[dict]):
    """Compact growing prefixes of `history` until an event drops messages: (previous, dropping) results."""
    previous = None
    for length in range(3, len(history) + 1, 2):
        result = compactor.compact(history[:length])
        if result.plan.event is not None and "drop" in result.plan.event.kinds:
            return previous, result
        previous = result
    raise AssertionError("no drop event in the whole history")


def test_a_drop_event_reports_the_cached_prefix_it_really_keeps():
    """Before the fix an event's plan kept the previous request's length as its cached prefix, so the
    panel drew the cache band over messages the event had just rewritten."""
    # a drop event (ranked masks, issue 17, would fit these re-runnable reads without one)
    compactor = Compactor(CompactPolicy(context_window=60_000, max_output_tokens=8_000, enabled=True, mask=False))
    previous, dropping = calls_until_drop(compactor, long_turn(100))
    same = 0
    while (same < min(len(previous.messages), len(dropping.messages))
           and previous.messages[same] == dropping.messages[same]):
        same += 1
    assert dropping.plan.cached_messages == same < len(previous.messages)


def _report(call: int, result, base: int = 1000) -> ev.CompactionReported:
    return ev.CompactionReported(call, result.plan, result.plan.history_len, base // 2, base - base // 2,
                                 result.messages)


def test_ledger_splits_each_call_into_cached_and_new_and_prices_it():
    compactor = Compactor(CompactPolicy(context_window=200_000, max_output_tokens=8_000, enabled=True))
    compactor.set_baseline(1000)
    history = long_turn(3, size=500)
    ledger = BudgetLedger()
    ledger.configure(PRICED, 200_000, 8_000)
    first = compactor.compact(history[:3])
    ledger.feed(_report(1, first))
    one = ledger.current
    assert one.cached == 0 and one.new == one.total  # nothing was cached before the first call
    ledger.feed(ev.Usage(1, input_tokens=10, output_tokens=20, cache_creation_input_tokens=1490))  # it wrote
    second = compactor.compact(history[:5])
    ledger.feed(_report(2, second))
    two = ledger.current
    assert two.cached_messages == second.plan.cached_messages == 3
    assert two.cached + two.new == two.total and two.cached > two.new > 0
    new_raw = sum(message_tokens(m) for m in second.messages[3:])
    assert abs(two.new - new_raw * two.total / (1000 + second.plan.message_tokens_after)) <= 1
    assert two.price_usd == cost_usd(PRICED, UsageInfo(0, 0, two.new, two.cached))
    usage = ev.Usage(2, input_tokens=300, output_tokens=40, cache_read_input_tokens=1600)
    ledger.feed(usage)
    assert ledger.current.exact_total == 1900 and ledger.current.cached == 1600  # the API's own split
    assert ledger.calls == {1: 1500, 2: 1900} and ledger.exact_calls == {1, 2}
    expected = cost_usd(PRICED, UsageInfo(10, 20, 1490)) + cost_usd(PRICED, UsageInfo(300, 40, 0, 1600))
    assert abs(ledger.cost - expected) < 1e-12 and ledger.cost_known
    room = ledger.current.budget  # the one denominator: the budget the marks are shares of, not the window
    assert room == 168_000 and ledger.context_line() == f"ctx {1900 * 100 // room}% of 168k · ${ledger.cost:.4f}"
    ledger.feed(ev.SessionCleared(5))
    assert ledger.calls == {} and ledger.current is None and ledger.model == PRICED


def test_after_a_call_that_cached_nothing_the_next_call_claims_no_cache():
    """Issue 40: "cached ≈49.2k · next call ≈$0.0050" above "nothing cached … ≈$0.0983". The API reported
    neither a read nor a write: the next call reads nothing, writes nothing, and is priced all uncached."""
    compactor = Compactor(CompactPolicy(context_window=200_000, max_output_tokens=8_000, enabled=True))
    compactor.set_baseline(1000)
    history = long_turn(3, size=500)
    ledger = BudgetLedger()
    ledger.configure(PRICED, 200_000, 8_000)
    ledger.feed(_report(1, compactor.compact(history[:3])))
    ledger.feed(ev.Usage(1, input_tokens=1500, output_tokens=20))  # no cache read, no cache write
    ledger.feed(_report(2, compactor.compact(history[:5])))
    two = ledger.current
    assert two.cached == 0 and two.new == two.total > 0
    assert two.cost.units == two.total and two.price_usd == cost_usd(PRICED, UsageInfo(two.total, 0))
    assert not ledger.caches
    # OpenAI caches on its own and reports reads only: a first call without a read says nothing of the next
    openai = BudgetLedger()
    openai.configure("gpt-5", 200_000, 8_000)
    openai.feed(_report(1, compactor.compact(history[:3])))
    openai.feed(ev.Usage(1, input_tokens=1500, output_tokens=20))
    openai.feed(_report(2, compactor.compact(history[:5])))
    assert openai.caches and openai.current.cached > 0


def test_unpriced_model_gives_cache_units_and_no_session_cost():
    compactor = Compactor(CompactPolicy(context_window=100_000, max_output_tokens=8_000, enabled=True))
    ledger = BudgetLedger()
    ledger.configure("some-local-model", 100_000, 8_000)
    ledger.feed(_report(1, compactor.compact(long_turn(1, size=400))))
    ledger.feed(ev.Usage(1, input_tokens=900, output_tokens=10))
    figures = ledger.current
    assert figures.price_usd is None and not ledger.cost_known
    # priced as the API bills it (the reported usage: 900 uncached), in the unit every face says
    assert figures.cost.units == 900 and figures.cost.text() == "≈900 new-token equivalents"
    assert "$" not in ledger.context_line()


def test_events_carry_their_loss_report_and_request_diff():
    # a drop event (ranked masks, issue 17, would fit these re-runnable reads without one)
    compactor = Compactor(CompactPolicy(context_window=60_000, max_output_tokens=8_000, enabled=True, mask=False))
    history = long_turn(100)
    ledger = BudgetLedger()
    ledger.configure(PRICED, 60_000, 8_000)
    call = 0
    for length in range(3, len(history) + 1, 2):
        call += 1
        ledger.feed(_report(call, compactor.compact(history[:length])))
        if any("drop" in e.event.kinds for e in ledger.events):
            break
    entry = next(e for e in ledger.events if "drop" in e.event.kinds)
    assert entry.line.startswith(f"call {entry.event.call} · ") and "dropped" in entry.line
    changes = request_diff(entry)
    removed = [c.index for c in changes if c.kind == "removed"]
    assert removed and set(removed) <= set(entry.event.loss.left_request)
    assert any(c.kind == "added" and c.index is None for c in changes)  # the recap joined the request
    assert recap_tokens(entry.plan, entry.messages) == message_tokens(entry.messages[entry.plan.recap_position])
    first = first_difference(entry.plan)
    assert first is not None and not entry.plan.is_sent(first) or first in entry.plan.cuts
    assert all(entry.plan.op(i).kind == "kept" for i in range(first))


def test_base_breakdown_names_each_part_of_the_system_prompt_and_tools(tmp_path: Path):
    (tmp_path / "AGENTS.md").write_text("Always run the tests.\n" * 40, encoding="utf-8")

    class McpTool(builtin_tools()[0].__class__):
        name = "mcp__tracker__create_issue"

    session = Session(ScriptedProvider(), ToolRegistry([*builtin_tools(), McpTool()]), tmp_path,
                      system_prompt_builder=build_system_prompt)
    base = base_breakdown(session)
    system, tools = session.baseline_tokens()
    assert base.system == system and base.tools == tools
    assert base.project_context >= 200 and base.mcp_tools > 0 and base.builtin_tools > base.mcp_tools
    assert base.system_prompt > 0 and [name for name, _ in base.parts()] == [
        "system prompt", "built-in tools", "MCP tools", "project context", "skills"]


async def test_headless_prints_the_ledgers_figures(tmp_path: Path):
    import io

    from tui_agent.core.agent.budget import fmt_usd
    from tui_agent.core.providers.scripted import text_reply
    from tui_agent.faces.headless import consume

    usage = UsageInfo(input_tokens=800, output_tokens=30, cache_read_input_tokens=12_000)
    provider = ScriptedProvider(replies=[text_reply("Hi.")], model=PRICED, usage=usage, reports_usage=True)
    session = Session(provider, ToolRegistry(builtin_tools()), tmp_path)
    out, err = io.StringIO(), io.StringIO()
    ended = await consume(session, "hello", out, err)
    assert ended is not None and ended.reason == "completed"
    line = [x for x in err.getvalue().splitlines() if x.startswith("[budget] ")]
    assert line == [f"[budget] 1 call · last 12.8k tok (cached 12.0k · new 800) · 0 compaction events · "
                    f"session {fmt_usd(cost_usd(PRICED, usage))}"]
    assert session.listeners == []  # the ledger leaves with the run


def test_the_chat_notice_names_a_users_own_change_as_such():
    """A pin is not "older turns no longer sent": before the fix the notice said so for every event."""
    from tui_agent.core.agent.planned_call import event_notice

    # a drop event (ranked masks, issue 17, would fit these re-runnable reads without one)
    compactor = Compactor(CompactPolicy(context_window=60_000, max_output_tokens=8_000, enabled=True, mask=False))
    history = long_turn(100)
    _, dropping = calls_until_drop(compactor, history)
    assert event_notice(dropping.plan).startswith("Older turns are no longer sent in full: ")
    compactor.pin(dropping.plan.drop_from + 1)
    pinned = compactor.compact(history[:dropping.plan.history_len])
    assert pinned.plan.event is not None and "pin" in pinned.plan.event.kinds
    notice = event_notice(pinned.plan)
    assert notice.startswith("Your pins, excludes or expands apply from this call on: call ")
    assert "no longer sent" not in notice


def test_the_ledger_lets_the_requests_of_old_events_go_and_keeps_their_lines():
    """A watch over a long session (`BudgetLedger.let_go`): each event's entry held its request and the
    previous call's; let go, the line, the sizes and the event stay, and the major list is the same entries."""
    from tui_agent.core.recordings.watch_feed import slim_plan

    compactor = Compactor(CompactPolicy(context_window=60_000, max_output_tokens=8_000, enabled=True, mask=False))
    history = long_turn(100)
    ledger = BudgetLedger()
    ledger.configure(PRICED, 60_000, 8_000)
    for call, length in enumerate(range(3, len(history) + 1, 2), start=1):
        ledger.feed(_report(call, compactor.compact(history[:length])))
    lines = [e.line for e in ledger.events]
    sizes = [(e.plan.call, e.plan.estimated_tokens, e.plan.dropped_count) for e in ledger.events]
    assert len(ledger.major_events) >= 2 and all(e.messages for e in ledger.events)
    newest = ledger.events[-1].plan.call
    ledger.let_go(lambda call: call == newest, slim_plan)
    assert [e.line for e in ledger.events] == lines
    assert [(e.plan.call, e.plan.estimated_tokens, e.plan.dropped_count) for e in ledger.events] == sizes
    assert all(not e.messages and e.plan.outbound_indices == () for e in ledger.events[:-1])
    assert ledger.events[-1].messages and not ledger.events[-1].previous_messages  # the call before it went
    assert all(any(e is m for e in ledger.events) for m in ledger.major_events)
    assert ledger.current_messages  # the call shown is not the ledger's to let go


async def test_a_continued_run_says_this_run_and_the_sessions_cost(tmp_path: Path):
    """Issue 28 §4: `--continue -p` printed "session $0.33" for a session that had cost $3.84 (the ledger
    sees this run's calls only). It says "this run" and gives the session's cost beside it."""
    import io

    from tui_agent.core import events as ev
    from tui_agent.core.agent.budget import fmt_usd
    from tui_agent.core.providers.scripted import text_reply
    from tui_agent.faces.headless import consume

    usage = UsageInfo(input_tokens=800, output_tokens=30, cache_read_input_tokens=12_000)
    provider = ScriptedProvider(replies=[text_reply("Hi.")], model=PRICED, usage=usage, reports_usage=True)
    session = Session(provider, ToolRegistry(builtin_tools()), tmp_path)
    earlier = ev.Usage(call=1, input_tokens=100_000, output_tokens=2_000)  # what a resume puts back
    session.usage_history.append(earlier)
    err = io.StringIO()
    await consume(session, "hello", io.StringIO(), err)
    line = next(x for x in err.getvalue().splitlines() if x.startswith("[budget] "))
    run = cost_usd(PRICED, usage)
    before = cost_usd(PRICED, UsageInfo(input_tokens=100_000, output_tokens=2_000))
    assert line.endswith(f"this run {fmt_usd(run)} (session {fmt_usd(run + before)})"), line


async def test_a_routine_cut_is_an_event_in_the_ledger_as_in_the_journal(tmp_path: Path):
    """Issue 28 §4: the panel said "6 compaction events" where the journal and export had 8, and "no
    compaction event yet: 2 read results cut" beside a journal that recorded one: the cut-only events were
    left out of the ledger. Every event the call reports is counted, the same number everywhere."""
    import io

    from tui_agent.core import events as ev
    from tui_agent.core.providers.scripted import text_reply, tool_reply
    from tui_agent.faces.headless import consume

    (tmp_path / "huge.txt").write_text(("a line of a huge file " * 4 + "\n") * 1_500)  # 130k chars: cut at once
    replies = [tool_reply("Read", {"file_path": "huge.txt"}, "r1"), text_reply("Read it."), text_reply("Hi.")]
    session = Session(ScriptedProvider(replies=replies), ToolRegistry(builtin_tools()), tmp_path)
    events: list = []
    session.listeners.append(events.append)
    for prompt in ("read huge.txt", "hello"):
        err = io.StringIO()
        await consume(session, prompt, io.StringIO(), err)
    reported = [e.plan.event for e in events if isinstance(e, ev.CompactionReported) and e.plan.event is not None]
    assert reported and all(set(event.kinds) == {"cut"} for event in reported), reported
    line = next(x for x in err.getvalue().splitlines() if x.startswith("[budget] "))
    assert f"· {len(reported)} compaction event" in line, line


def test_a_cold_first_call_reads_nothing_from_the_cache_whatever_its_plan_says():
    from dataclasses import replace

    compactor = Compactor(CompactPolicy(context_window=100_000, max_output_tokens=8_000, enabled=True))
    result = compactor.compact(long_turn(1, size=400))
    plan = replace(result.plan, cached_messages=2, estimated_tokens=result.plan.estimated_tokens + 37)
    ledger = BudgetLedger()
    ledger.configure(PRICED, 100_000, 8_000)
    ledger.feed(ev.CompactionReported(1, plan, len(result.messages), 1000, 0, result.messages))
    figures = ledger.current
    assert figures is not None and figures.cached == 0 and figures.new == figures.total
