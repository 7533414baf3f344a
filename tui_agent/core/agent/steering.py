"""The user's steering of what is sent: pin, exclude or expand one history row, `/compact` now, and the
summary draft edited and swapped into the recap.

Its own concept because it changes only the outbound copy (the compactor's sticky decisions and the
recap), never the history, and always ends the same way: the change is told (`CompactionChanged`) and the
next request announced (`NextRequestChanged`), so the journal and the panel follow. The `Session` keeps
the conversation and its turns; its `pin`/`exclude`/`expand`/`compact_now`/`edit_summary_draft` are
these functions on itself (a `SteeringHost`: what steering may ask of its session).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from tui_agent.core import events as ev
from tui_agent.core.agent.call import CallPlan, plan_call
from tui_agent.core.agent.compaction_control import nothing_to_compact

if TYPE_CHECKING:
    from tui_agent.core.agent.loop_state import LoopState
    from tui_agent.core.agent.summary_draft import BackgroundSummaries
    from tui_agent.core.compaction.protocol import CompactorProtocol
    from tui_agent.core.messages import Message
    from tui_agent.core.providers.base import Provider
    from tui_agent.core.tools.base import ToolRegistry


class SteeringHost(Protocol):
    """What steering reads and tells of its session (the `Session` satisfies it; mypy checks)."""

    history: list[Message]
    compactor: CompactorProtocol
    provider: Provider
    tools: ToolRegistry
    compact_mode: str
    running: bool
    state: LoopState
    summaries: BackgroundSummaries

    @property
    def next_call(self) -> int: ...

    def system_prompt(self) -> str: ...

    def plan_call(self) -> CallPlan: ...

    def announce_next(self, why: str) -> None: ...

    def emit(self, event: Any) -> None: ...


def steered(host: SteeringHost, index: int) -> int:
    """`index` when it names a message of the history; else a ValueError that says so. Stored as it came,
    an index outside the history (-1) made the saved state unreadable, so a resumed session planned from
    scratch and sent another request than the old one would have."""
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(host.history):
        held = f"messages 0–{len(host.history) - 1}" if host.history else "no messages yet"
        raise ValueError(f"There is no message #{index} to pin, exclude or expand: the history holds {held}.")
    return index


def pin(host: SteeringHost, index: int, on: bool = True) -> None:
    """Always send message `index` verbatim (never cut, masked, dropped or summarised)."""
    host.compactor.pin(steered(host, index), on)
    host.emit(ev.CompactionChanged("pin", index, on))
    host.announce_next("pin")


def exclude(host: SteeringHost, index: int, on: bool = True) -> None:
    """Never send message `index` (with its tool_use/tool_result partner)."""
    host.compactor.exclude(steered(host, index), on)
    host.emit(ev.CompactionChanged("exclude", index, on))
    host.announce_next("exclude")


def expand(host: SteeringHost, index: int, on: bool = True) -> None:
    """Send message `index`'s cut or masked results whole in the next request."""
    host.compactor.expand(steered(host, index), on)
    host.emit(ev.CompactionChanged("expand", index, on))
    host.announce_next("expand")


async def compact_now(host: SteeringHost, focus: str = "") -> str:
    """`/compact [focus]`: a compaction event now, with the model's summary of what it drops (the
    summary tier, whatever the setting), written in the background: the next call sends the recap at
    once and the summary joins it when it is ready (`summary_draft()`). Returns what happened."""
    if host.running:
        return "A turn is running: /compact can run once it ends."
    if not host.history:
        return "Nothing to compact yet."
    if not host.compactor.steerable:
        return f"/compact needs the tiered compactor; this session uses --compact {host.compact_mode}."
    system, schemas = host.system_prompt(), host.tools.schemas()
    host.compactor.request_event("summary")
    # Planned for the next call's number and kept (the pending request is used up either way); what
    # it keeps besides a drop is what that call would decide anyway.
    planned = plan_call(host.compactor, host.provider, system, schemas, host.history, host.next_call, keep=True)
    event = planned.plan.event
    if event is None or "drop" not in event.kinds:
        host.state.asked_event = event  # (a prompt too large clipped: still this call's event)
        host.announce_next("/compact")
        return nothing_to_compact(planned.plan)
    host.summaries.start(host.compactor, host.provider, system, schemas, planned, focus)
    host.state.last_plan, host.state.asked_event = None, event
    host.announce_next("/compact")
    return (f"Compacted now: {event.line()}. The summary is being written in the background and joins the "
            "recap when it is ready (/summary shows it, /summary edit changes it).")


def edit_summary_draft(host: SteeringHost, text: str) -> str:
    """The user's text replaces the draft; between turns it is in the next request at once."""
    problem = host.summaries.edit(text)
    if problem is not None:
        return problem
    if not host.running:
        swap_summary(host, "summary edited")
    draft = host.summaries.draft
    assert draft is not None
    return f"Summary draft edited ({len(draft.text):,} chars): {draft.line()}"


def swap_summary(host: SteeringHost, why: str) -> bool:
    """At a turn boundary: a ready draft joins the recap if it still covers it; True when it did."""
    draft = host.summaries.draft
    if draft is None or draft.state not in ("ready", "failed"):
        return False
    recap = host.plan_call().plan.recap
    # The compactor knows the history up to its last kept plan (the last call, or /compact's): the
    # summary joins that plan, and the next call takes in what came after, as it always does.
    last = host.state.last_plan
    known = host.history[: last.history_len] if last is not None else host.history
    result = host.summaries.swap(host.compactor, known, host.next_call, recap.covers if recap else None)
    if result is None:
        return False
    host.announce_next(why)
    return True
