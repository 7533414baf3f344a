"""The one pure mapping from engine events to ACP session updates, on its own."""

from __future__ import annotations

from tui_agent.core import events as ev
from tui_agent.core.agent.budget import BudgetLedger
from tui_agent.core.compaction import Compactor, CompactPolicy
from tui_agent.core.messages import user_text
from tui_agent.faces.acp.compaction import (
    CompactionReport,
    CompactionReporter,
    declares_compaction,
    tool_lifecycle,
)
from tui_agent.faces.acp.updates import session_updates, usage_update


def test_text_thinking_and_tools_map_to_their_update_kinds() -> None:
    ledger = BudgetLedger()
    assert [u.session_update for u in session_updates(ev.TextDelta("hi"), ledger)] == ["agent_message_chunk"]
    thought = session_updates(ev.AssistantMessage({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "let me see", "signature": "s"}, {"type": "text", "text": "x"}]}, 1), ledger)
    assert [(u.session_update, u.content.text) for u in thought] == [("agent_thought_chunk", "let me see")]
    started = session_updates(ev.ToolStarted("toolu_1", "Read", {"file_path": "/w/app.py"}, "app.py"), ledger)[0]
    assert (started.session_update, started.kind, started.title, started.status) == \
        ("tool_call", "read", "Read app.py", "in_progress")
    assert [loc.path for loc in started.locations] == ["/w/app.py"]
    failed = session_updates(ev.ToolFinished("toolu_1", "Read", "no such file", True, 0.1, 12), ledger)[0]
    assert (failed.session_update, failed.status, failed.content[0].content.text) == \
        ("tool_call_update", "failed", "no such file")
    bash = session_updates(ev.ToolStarted("toolu_2", "Bash", {"command": "ls"}, "ls"), ledger)[0]
    assert bash.kind == "execute" and bash.locations == []
    assert session_updates(ev.Notice("quiet", "info"), ledger) == []


def test_usage_update_is_the_ledgers_meter_with_the_last_calls_cache_split() -> None:
    ledger = BudgetLedger()
    ledger.configure("claude-sonnet-4-5", 200_000, 8_000)
    assert usage_update(ledger) is None  # no call yet: nothing to report
    assert session_updates(ev.Usage(1, 100, 10, 50, 2_000), ledger) == []  # no figures yet: said nothing
    compactor = Compactor(CompactPolicy(context_window=200_000, max_output_tokens=8_000, enabled=True))
    result = compactor.compact([user_text("hello " * 500)])
    ledger.feed(ev.CompactionReported(2, result.plan, 1, 500, 500, result.messages))
    ledger.feed(ev.Usage(2, 400, 20, 600, 2_500))
    update = session_updates(ev.Usage(2, 400, 20, 600, 2_500), ledger)[0]
    assert (update.session_update, update.used, update.size) == ("usage_update", 3_500, 200_000)
    assert update.used == ledger.current.shown_total and update.size == ledger.window
    assert update.field_meta["tuiAgent"]["cachedReadTokens"] == 2_500
    assert update.field_meta["tuiAgent"]["cachedWriteTokens"] == 600
    assert update.cost is not None and update.cost.currency == "USD" and update.cost.amount == round(ledger.cost, 6)
    assert "idle" not in update.field_meta["tuiAgent"]
    ledger.feed(ev.IdleChosen("ping", "auto", 0.0012, float("inf"), 0.0031, 270.0, 0.8))  # the idle policy chose
    idle = usage_update(ledger).field_meta["tuiAgent"]["idle"]
    assert (idle["choice"], idle["mode"], idle["ping"], idle["compact"], idle["cold"]) == \
        ("ping", "auto", "≈$0.0012", "n/a (nothing to drop)", "≈$0.0031")
    assert idle["line"] == "idle: ping ≈$0.0012 (cheapest) · compact n/a (nothing to drop) · cold ≈$0.0031 · back 80%"


def test_a_compaction_is_the_adapters_tool_lifecycle_with_their_context_compaction_keys() -> None:
    """claude-agent-acp #991 and codex-acp #396: kind think, title "Compact conversation",
    `_meta.contextCompaction` = {version 1, trigger manual|automatic, preTokens, postTokens, durationMs?};
    our own figures only under `_meta.tuiAgent`."""
    report = CompactionReport("compaction-1", "manual", 9_000, 2_000, "dropped 3 old messages", 35, {"focus": ""})
    start, done = tool_lifecycle(report)
    assert (start.session_update, start.kind, start.title, start.status) == \
        ("tool_call", "think", "Compact conversation", "in_progress")
    assert (done.session_update, done.status, done.title) == ("tool_call_update", "completed", "Compact conversation")
    assert start.field_meta["contextCompaction"] == {"version": 1, "trigger": "manual", "preTokens": 9_000,
                                                     "postTokens": 2_000, "durationMs": 35}
    assert start.field_meta["tuiAgent"] == {"line": "dropped 3 old messages", "focus": ""}
    assert done.field_meta == start.field_meta


def test_a_client_that_declares_the_rfds_capability_gets_compaction_updates_patched_with_the_summary() -> None:
    assert declares_compaction({"method": "initialize", "params": {
        "clientCapabilities": {"session": {"compaction": {}}}}}) is True
    for params in ({}, {"clientCapabilities": {}}, {"clientCapabilities": {"session": None}},
                   {"clientCapabilities": {"session": {"compaction": None}}}):
        assert declares_compaction({"method": "initialize", "params": params}) is False
    assert declares_compaction({"method": "session/new", "params": {}}) is None
    reporter = CompactionReporter(rfd=True)
    report = CompactionReport(reporter.next_id(), "manual", 9_000, 2_000, "dropped", 35)
    (update,) = reporter.updates(report, call=4)
    assert (update["sessionUpdate"], update["compactionId"], update["status"]) == \
        ("compaction_update", "compaction-1", "completed")
    assert "summary" not in update and update["_meta"]["contextCompaction"]["preTokens"] == 9_000
    (patch,) = reporter.summary_updates(4, "## Retained\nthe user wants X")
    assert patch["compactionId"] == "compaction-1" and patch["status"] == "completed"
    assert patch["summary"] == [{"type": "text", "text": "## Retained\nthe user wants X"}]
    assert reporter.summary_updates(5, "another call's") == [] and reporter.summary_updates(4, None) == []
    assert reporter.next_id() == "compaction-2"  # never reused, even when the call numbers restart
    from tui_agent.faces.acp.compaction import process_prefix

    first, second = CompactionReporter(True, process_prefix()), CompactionReporter(True, process_prefix())
    assert first.next_id() != second.next_id()  # nor by a session loaded in another process
    assert CompactionReporter().summary_updates(4, "x") == []  # the adapters keep the summary internal


def test_an_automatic_compaction_event_is_reported_with_its_tokens_before_and_after() -> None:
    from tests.core.agent.test_budget import calls_until_drop, long_turn

    compactor = Compactor(CompactPolicy(context_window=60_000, max_output_tokens=8_000, enabled=True, mask=False))
    _previous, dropping = calls_until_drop(compactor, long_turn(100))
    event = dropping.plan.event
    reported = ev.CompactionReported(7, dropping.plan, dropping.plan.history_len, 500, 500, dropping.messages)
    start, done = session_updates(reported, BudgetLedger())
    meta = start.field_meta["contextCompaction"]
    assert (start.session_update, start.kind, done.status) == ("tool_call", "think", "completed")
    assert meta["trigger"] == "automatic" and "durationMs" not in meta  # not timed apart: said so by omission
    assert "drop" in start.field_meta["tuiAgent"]["kinds"] and start.field_meta["tuiAgent"]["call"] == event.call
    assert (meta["preTokens"], meta["postTokens"]) == (event.tokens_before, event.tokens_after)
    assert meta["postTokens"] < meta["preTokens"]
    quiet = Compactor(CompactPolicy(context_window=200_000, max_output_tokens=8_000, enabled=True))
    assert session_updates(ev.CompactionReported(1, quiet.compact(long_turn(1)).plan, 3, 1, 1), BudgetLedger()) == []


def test_the_servers_edits_and_a_cache_miss_are_honest_updates() -> None:
    from tui_agent.core.providers.server_report import AppliedEdit, CompactionUsage

    ledger = BudgetLedger()
    ledger.configure("claude-sonnet-4-5", 200_000, 8_000)
    compactor = Compactor(CompactPolicy(context_window=200_000, max_output_tokens=8_000, enabled=True))
    result = compactor.compact([user_text("hello " * 500)])
    ledger.feed(ev.CompactionReported(1, result.plan, 1, 10, 10, result.messages))
    ledger.feed(ev.Usage(1, 100, 10, 900, 40_000))
    edited = ev.ServerEdited(1, 1, (AppliedEdit("clear_tool_uses_20250919", 4, 12_000),))
    start, done = session_updates(edited, ledger)
    # the adapters' keys in contextCompaction, ours (who did it, what it cleared) under _meta.tuiAgent
    meta, ours = start.field_meta["contextCompaction"], start.field_meta["tuiAgent"]
    assert (start.session_update, done.status) == ("tool_call", "completed")
    assert (meta["trigger"], meta["preTokens"], meta["postTokens"]) == ("automatic", 41_000 + 12_000, 41_000)
    assert ours["by"] == "server"
    assert ours["edits"] == [{"type": "clear_tool_uses_20250919", "cleared": 4, "clearedTokens": 12_000}]
    compacted = ev.ServerEdited(1, 1, compacted=True, compaction_usage=CompactionUsage(150_000, 2_000))
    update = session_updates(compacted, ledger)[0]
    meta, ours = update.field_meta["contextCompaction"], update.field_meta["tuiAgent"]
    assert meta["preTokens"] == 150_000 and ours["compactionUsage"] == {"inputTokens": 150_000, "outputTokens": 2_000}
    missed = ev.CacheMissed(1, 50_000, 40_000, "system_changed", "api", extra_cost_usd=0.03)
    update = session_updates(missed, ledger)[0]
    miss = update.field_meta["tuiAgent"]["cacheMiss"]
    assert update.session_update == "usage_update" and update.field_meta["tuiAgent"]["call"] == 1
    assert (miss["reason"], miss["source"], miss["missedTokens"]) == ("system_changed", "api", 10_000)
    assert session_updates(missed, BudgetLedger()) == []  # no figures: nothing to hang it on


def test_an_rfd_compaction_whose_summary_is_coming_is_in_progress_then_ends_exactly_once() -> None:
    """The RFD: `in_progress` while the summary is written, then one terminal update: `completed` with the
    summary, or without it saying why (failed, superseded by a newer summary, /clear), `cancelled` when taken
    back first; a summary edited afterwards patches the completed entity."""
    reporter = CompactionReporter(rfd=True)

    def report(call: int) -> CompactionReport:
        return CompactionReport(reporter.next_id(), "automatic", 9_000, 2_000, f"dropped at {call}")

    (start,) = reporter.updates(report(4), call=4, summary_coming=True)
    assert (start["compactionId"], start["status"]) == ("compaction-1", "in_progress") and "summary" not in start
    (done,) = reporter.summary_updates(4, "## Retained\nX")
    assert (done["status"], done["summary"]) == ("completed", [{"type": "text", "text": "## Retained\nX"}])
    (edited,) = reporter.summary_updates(4, "the user's own words")  # a patch of the completed entity
    assert edited["compactionId"] == "compaction-1" and edited["summary"][0]["text"] == "the user's own words"
    reporter.updates(report(6), call=6, summary_coming=True)
    (failed,) = reporter.summary_updates(6, None, "the model's summary was empty")
    assert failed["status"] == "completed" and "summary" not in failed
    assert failed["_meta"]["tuiAgent"]["summaryState"] == "failed: the model's summary was empty"
    reporter.updates(report(8), call=8, summary_coming=True)
    superseded, started = reporter.updates(report(9), call=9, summary_coming=True)  # the older summary stops
    assert (superseded["compactionId"], superseded["status"]) == ("compaction-3", "completed")
    assert superseded["_meta"]["tuiAgent"]["summaryState"].startswith("superseded")
    assert (started["compactionId"], started["status"]) == ("compaction-4", "in_progress")
    assert reporter.summary_updates(8, "too late") == []  # its entity is closed: no second terminal update
    (undone,) = reporter.undone(9)
    assert (undone["compactionId"], undone["status"]) == ("compaction-4", "cancelled")
    reporter.updates(report(11), call=11, summary_coming=True)
    (cleared,) = reporter.close_pending("completed", "stopped: /clear started a new conversation")
    assert cleared["status"] == "completed" and reporter.pending == {}
    (quiet,) = reporter.updates(report(12), call=12)  # nothing more to come: completed at once
    assert quiet["status"] == "completed"
