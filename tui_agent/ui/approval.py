"""Approve before compacting, on the budget panel: the engine asks (`session.ask_approval`), the panel shows the
next request as it would be, and the approval bar under it waits for approve / edit / postpone.

A mixin of the panel (like `steering.SteeringActions`) so the panel module stays one concept. While the bar
waits, the turn is paused on purpose: the steering mode may pin and exclude (its changes apply to this very
call once approved), and leaving the steering mode comes back to the bar, not to the prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from tui_agent.core import events as ev
from tui_agent.core.agent.system_prompt import base_breakdown
from tui_agent.ui.widgets.approval_bar import Answer, ApprovalBar

if TYPE_CHECKING:
    from tui_agent.core.agent.call import CallPlan
    from tui_agent.core.agent.session import Session


def question(preview: "CallPlan") -> str:
    """"compaction due at call #12 (over the 7.7k mark: masked 1 old result · 9.9k → 9.5k tok)."""
    event = preview.plan.event
    what = event.line().split(" · ", 1)[-1] if event is not None else "an event"
    return f"compaction due at call #{preview.call}: {what}. The rows above show the request as it would be."


class ApprovalActions:
    """Mixin (first in the bases) of the budget panel: `ask_approval` is what the TUI hands the session."""

    session: "Session"
    rows: Any
    query_one: Callable[..., Any]
    mount: Callable[..., Any]
    show_next_call: Callable[[ev.NextRequestChanged], None]
    approval: ApprovalBar | None = None

    @property
    def approving(self) -> bool:
        """A decision is awaited: the steering mode may change the call being asked about."""
        return self.approval is not None

    async def ask_approval(self, preview: "CallPlan") -> Answer:
        """Show `preview` (the call with its event) and wait for the user's answer on the bar."""
        self.show_next_call(ev.NextRequestChanged(preview, base_breakdown(self.session), "approval asked"))
        bar = ApprovalBar(question(preview), id="approval-bar")
        self.approval = bar
        await self.mount(bar, before=self.query_one("#budget-reason"))
        try:
            return await bar.answer
        finally:
            self.approval = None
            await bar.remove()

    def on_approval_bar_edit_wanted(self, event: ApprovalBar.EditWanted) -> None:
        event.stop()
        self.rows.enter_on_purpose()

    def back_to_the_bar(self) -> bool:
        """Leaving the steering mode while a decision is awaited: focus the bar (True when it did)."""
        bar = self.approval
        if bar is None or self.rows.armed:
            return False
        bar.call_after_refresh(bar.focus_approve)
        return True


__all__ = ["ApprovalActions", "question"]
