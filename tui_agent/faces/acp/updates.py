"""Engine events → ACP session updates: one pure function, so what an editor sees is tested on its own.

The figures come from the session's `BudgetLedger` (the panel's meter), never from a count of our own:
a `usage_update`'s `used`/`size` are the panel's shown total and window for the same call, so an editor's
meter and the TUI's cannot disagree. A compaction event becomes what `compaction.py` says the client
understands: the adapters' synthetic tool call, or the Session Compaction RFD's update.
"""

from __future__ import annotations

from typing import Any, Callable

from acp import schema
from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
)

from tui_agent.core.agent.budget import BudgetLedger, CallFigures
from tui_agent.core.agent.event_wire import WireView, read
from tui_agent.faces.acp.compaction import CompactionReport, CompactionReporter

# The ACP tool kind of each built-in tool (an editor picks its icon from it); MCP tools are "other".
TOOL_KINDS: dict[str, str] = {
    "Read": "read", "Write": "edit", "Edit": "edit", "MultiEdit": "edit", "Bash": "execute",
    "Grep": "search", "Glob": "search", "LS": "search", "WebFetch": "fetch", "WebSearch": "fetch",
    "Context": "think", "TodoWrite": "think",
}
PATH_KEYS = ("file_path", "path", "notebook_path")


def tool_title(name: str, summary: str) -> str:
    """The TUI card's one line: `Read src/app.py` (the tool's own key input), or the bare name."""
    return f"{name} {summary}" if summary else name


def tool_locations(tool_input: dict[str, Any]) -> list[schema.ToolCallLocation]:
    """The file a tool call is about, so the editor can follow along (an absolute path when given one)."""
    for key in PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return [schema.ToolCallLocation(path=value)]
    return []


def result_text(content: str | list[dict[str, Any]]) -> str:
    """A tool result's text (an image result says so instead of sending its bytes)."""
    if isinstance(content, str):
        return content
    parts = [block.get("text", "") if block.get("type") == "text" else f"[{block.get('type', 'block')}]"
             for block in content]
    return "\n".join(parts)


def usage_update(ledger: BudgetLedger, figures: CallFigures | None = None) -> schema.UsageUpdate | None:
    """The RFD's `usage_update` from the ledger: used/size are the panel's meter (its shown total and
    window); cost only when every call had a price; cache read/write of the last call in `_meta`."""
    figures = figures if figures is not None else ledger.current
    if figures is None:
        return None
    cost = schema.Cost(amount=round(ledger.cost, 6), currency="USD") if ledger.cost_known else None
    usage = ledger.usage
    meta = {"tuiAgent": {
        "exact": figures.exact_total is not None, "call": figures.call,
        "cachedReadTokens": usage.cache_read_input_tokens if usage else figures.cached,
        "cachedWriteTokens": usage.cache_creation_input_tokens if usage else figures.new,
        "compactsAt": figures.high, "dropped": figures.dropped,
        # `size` is the window (the RFD's word); the meter's and /context's percentage is of the budget
        "budget": figures.room, "budgetPercent": figures.percent}}
    idle = ledger.idle  # the idle policy's last choice (--idle): the choice and what each would cost
    if idle is not None:
        meta["tuiAgent"]["idle"] = {"choice": idle.choice, "mode": idle.mode, "line": idle.line, "waited": idle.waited,
                                    **{name: idle.price(name) for name in ("ping", "compact", "cold")}}
    return schema.UsageUpdate(session_update="usage_update", used=figures.shown_total, size=figures.window,
                              cost=cost, field_meta=meta)


def server_updates(event: WireView, ledger: BudgetLedger, compactions: CompactionReporter) -> list[Any]:
    """The server's own context management reported as our compactions are (the adapters' tool call, or
    the RFD's update), marked as the server's (`_meta.tuiAgent.by = "server"`). Tokens after: the call's real prompt (the ledger has
    its usage); before: that plus what the edits cleared, or, for a compaction, what the compaction's own
    call read (the context it closed)."""
    call, edits, cost = event["call"], event["edits"], event["compaction_usage"]
    after = ledger.usage.context_tokens if ledger.usage is not None and ledger.usage.call == call else 0
    before = after + sum(edit["tokens"] for edit in edits)
    if event["compacted"] and cost is not None:
        before = max(before, cost["input_tokens"] + cost["cache_read_input_tokens"])
    extra: dict[str, Any] = {"by": "server", "edits": [{"type": e["kind"], "cleared": e["cleared"], "clearedTokens": e["tokens"]}
                                                      for e in edits], "compacted": event["compacted"]}
    if cost is not None:
        extra["compactionUsage"] = {"inputTokens": cost["input_tokens"], "outputTokens": cost["output_tokens"]}
    report = CompactionReport(compactions.next_id(), "automatic", before, after,
                              f"Server managed context: {event.source.line()}", None, {**extra, "call": call})
    return compactions.updates(report, call)


def miss_updates(event: WireView, ledger: BudgetLedger) -> list[Any]:
    """A cache miss is about what the call cost, so it rides on the call's `usage_update` (`_meta.tuiAgent
    .cacheMiss`: why, from whom, the tokens written again and their extra cost); no update without figures."""
    update = usage_update(ledger)
    if update is None:
        return []
    miss = {"reason": event["reason"], "source": event["source"], "why": event.source.why(),
            "missedTokens": event.source.missed, "extraCostUsd": event["extra_cost_usd"],
            "fromMessage": event["from_message"]}
    update.field_meta = {**(update.field_meta or {}),
                         "tuiAgent": {**(update.field_meta or {}).get("tuiAgent", {}), "cacheMiss": miss}}
    return [update]


# -- one row per event kind an editor hears of (the wire's kind names: core/agent/event_wire.EVENTS) ----------
Updates = Callable[[WireView, BudgetLedger, CompactionReporter], list[Any]]


def _text(event: WireView, *_: Any) -> list[Any]:
    return [update_agent_message_text(event["text"])] if event["text"] else []


def _thoughts(event: WireView, *_: Any) -> list[Any]:
    return [update_agent_thought_text(block["thinking"]) for block in _blocks(event["message"])
            if block.get("type") == "thinking" and block.get("thinking")]


def _tool_started(event: WireView, *_: Any) -> list[Any]:
    name, tool_input = event["name"], event["input"]
    return [start_tool_call(event["tool_use_id"], tool_title(name, event["summary"]),
                            kind=TOOL_KINDS.get(name, "other"),  # type: ignore[arg-type]
                            status="in_progress", locations=tool_locations(tool_input), raw_input=tool_input)]


def _tool_finished(event: WireView, *_: Any) -> list[Any]:
    text = result_text(event["content"])
    return [update_tool_call(event["tool_use_id"], status="failed" if event["is_error"] else "completed",
                             content=[tool_content(text_block(text))] if text else None)]


def _compaction(event: WireView, ledger: BudgetLedger, compactions: CompactionReporter) -> list[Any]:
    plan = event["plan"]
    if plan["event"] is None:
        return []
    return compactions.event_updates(plan["event"].source, plan["summary_requested"])


def _usage(event: WireView, ledger: BudgetLedger, *_: Any) -> list[Any]:
    update = usage_update(ledger) if event["purpose"] == "call" else None
    return [update] if update is not None else []


def _server(event: WireView, ledger: BudgetLedger, compactions: CompactionReporter) -> list[Any]:
    if event["since"] is not None:  # a clearing that goes on from an earlier call is no new compaction
        return []
    return server_updates(event, ledger, compactions)


def _notice(event: WireView, *_: Any) -> list[Any]:
    level = event["level"]
    return [update_agent_message_text(f"\n\n[{level}] {event['text']}\n\n")] if level != "info" else []


BY_KIND: dict[str, Updates] = {
    "TextDelta": _text, "AssistantMessage": _thoughts, "ToolStarted": _tool_started, "ToolFinished": _tool_finished,
    "CompactionReported": _compaction, "Usage": _usage, "ServerEdited": _server,
    "CacheMissed": lambda event, ledger, _: miss_updates(event, ledger), "Notice": _notice,
}


def session_updates(event: Any, ledger: BudgetLedger, compactions: CompactionReporter | None = None) -> list[Any]:
    """The ACP session updates one engine event makes (often none), mapped from its wire form (`BY_KIND`).
    `ledger` has already seen `event` (the session feeds it before any face), so a `Usage` reads this call's
    figures. `compactions` is the session's reporter (ids, the shape the client declared); a fresh one when
    none is given."""
    wire = read(event)
    row = BY_KIND.get(wire.kind)
    return row(wire, ledger, compactions or CompactionReporter()) if row is not None else []


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []
