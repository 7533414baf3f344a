"""Slash commands over ACP: what is advertised, and what running one changes and says.

Why its own module: the commands act on the engine itself (`/clear` and `/compact` change what the next
request holds, `/undo-compaction` takes an event back, `/summary edit` rewrites a summary before it is sent,
`/approve` turns on the compaction permission request), and each may owe the client a compaction update; the
agent only sends what `run_command` returns, then the next request's usage.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from acp import schema

if TYPE_CHECKING:
    from tui_agent.core.agent.session import Session
    from tui_agent.faces.acp.acp_session import AcpSession

# Commands that make sense without a screen: (name, description, input hint or "").
COMMANDS = (
    ("compact", "compact the context now, with a summary of what is dropped (the focus steers the summary)",
     "focus (optional)"),
    ("context", "what the next request holds: tokens, window, compaction", ""),
    ("clear", "start a new conversation (the history is replaced, the next request is empty)", ""),
    ("approve", "toggle approve-before-compacting: you are asked (compact now or postpone) before each event", ""),
)
APPROVE_ON = ("Approve before compacting: on. Before a compaction event you are asked (a permission request with "
              "the next request's size): compact now, or postpone it for that call. /compact FOCUS compacts with "
              "your focus, /summary edit TEXT rewrites a summary before it is sent, /undo-compaction takes the last "
              "event back.")
APPROVE_OFF = "Approve before compacting: off. Compaction events run when they are due."


@dataclass
class CommandOutcome:
    """What a command says (an agent message) and the updates it owes the client (compaction entities)."""

    text: str
    updates: list[Any] = field(default_factory=list)


async def run_command(state: "AcpSession", line: str) -> CommandOutcome | None:
    """Run `line` (`/name args`) on the session; None when it is not a command that answers here (an
    unknown name, a skill's prompt: sent to the model as typed)."""
    from tui_agent.core.agent.compaction_control import undoable_event
    from tui_agent.core.agent.context_report import status_text

    session = state.session
    name, _, args = line.lstrip("/").partition(" ")
    if name == "clear":
        from tui_agent.faces.acp.opening import save_now

        session.clear()
        save_now(session)  # the client's id loads the new conversation, said something or not
        closed = state.compactions.close_pending("completed", "stopped: /clear started a new conversation")
        return CommandOutcome("Cleared: a new conversation; the next request holds no messages.", closed)
    if name == "compact":
        return await _compact(state, args.strip())
    if name == "context":
        return CommandOutcome(status_text(session.context_view()))
    if name == "approve":
        session.approve_compaction = not session.approve_compaction
        return CommandOutcome(APPROVE_ON if session.approve_compaction else APPROVE_OFF)
    undone = undoable_event(session) if name == "undo-compaction" else None
    result = await session.commands.run(session, line)
    if result is None or result.prompt is not None:
        return None
    outcome = CommandOutcome(result.text)
    if undone is not None and result.text.startswith("Took back"):
        outcome.updates = state.compactions.undone(undone.call)
    draft = session.summary_draft()
    if name == "summary" and args.strip().startswith("edit") and draft is not None and draft.edited:
        outcome.updates = state.compactions.summary_updates(draft.call, draft.text)
    return outcome


async def _compact(state: "AcpSession", focus: str) -> CommandOutcome:
    """`/compact [focus]`: the event now; reported (manual, timed) with its summary still being written."""
    from tui_agent.faces.acp.compaction import CompactionReport

    session = state.session
    before, call, started = state.next_request, session.next_call, time.monotonic()
    text = await session.compact_now(focus)
    after = state.next_request
    if not text.startswith("Compacted now") or before is None or after is None:
        return CommandOutcome(text)
    report = CompactionReport(state.compactions.next_id(), "manual", before.plan.plan.estimated_tokens,
                              after.plan.plan.estimated_tokens, text.split(". ")[0],
                              round((time.monotonic() - started) * 1000), {"focus": focus, "call": call})
    # registered before any await: the summary's SummaryWritten finds its compaction
    return CommandOutcome(text, state.compactions.updates(report, call, summary_coming=True))


def advertised(session: "Session") -> list[schema.AvailableCommand]:
    """The commands an editor lists after `/`: ours, then the engine's that need no screen."""
    ours = [schema.AvailableCommand(name=name, description=description,
                                    input=schema.AvailableCommandInput(schema.UnstructuredCommandInput(hint=hint))
                                    if hint else None) for name, description, hint in COMMANDS]
    taken = {name for name, _, _ in COMMANDS}
    engine = [schema.AvailableCommand(name=command.name, description=command.description,
                                      input=schema.AvailableCommandInput(schema.UnstructuredCommandInput(
                                          hint=command.args_hint)) if command.args_hint else None)
              for command in session.commands.all() if command.name not in taken]
    return ours + engine


def prompt_text(blocks: list[Any]) -> str:
    """The prompt's text: text blocks as they are, an embedded resource as its text, a link by its URI."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource" and hasattr(block.resource, "text"):
            parts.append(f"<file uri={block.resource.uri!r}>\n{block.resource.text}\n</file>")
        elif kind == "resource_link":
            parts.append(block.uri)
    return "\n".join(parts)


__all__ = ["APPROVE_OFF", "APPROVE_ON", "COMMANDS", "CommandOutcome", "advertised", "prompt_text", "run_command"]
