"""Approve before compacting, on the budget panel: the engine asks (`session.ask_approval`), the panel shows the
next request as it would be, and the approval bar under it waits for approve / edit / postpone.

An object the panel holds (`panel.approval`), like `steering.Steering`, so the panel module stays one
concept and the wait's state (the bar, the call asked about) lives in one place. While the bar waits, the turn is paused on purpose: the steering mode may pin and exclude (its changes apply to this very
call once approved). The wait is said where the user looks at every width: one line in the chat (what the
event would do, the next request's size, how to answer) and the folded meter under 100 columns. It never
takes the keyboard: the answer is a click, Alt+Y / F4 / Alt+L, or `/approve yes|edit|later`, and
letters typed meanwhile go to the prompt. Once answered, a steering mode entered for it hands the keyboard
back to the prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

from textual.message import Message

from tui_agent.core import events as ev
from tui_agent.core.agent.system_prompt import base_breakdown
from tui_agent.core.formats import fmt_tokens
from tui_agent.ui.keys import APPROVE_KEY, LATER_KEY, STEER_KEY, key_label
from tui_agent.ui.widgets.approval_bar import Answer, ApprovalBar

if TYPE_CHECKING:
    from tui_agent.ui.widgets.history_rows import HistoryRows
    from tui_agent.core.agent.call import CallPlan
    from tui_agent.core.agent.session import Session

ANSWERS: dict[str, str] = {"yes": "approve", "approve": "approve", "edit": "edit", "later": "postpone",
                           "postpone": "postpone"}
HOW_TO_ANSWER = (f"/approve yes ({key_label(APPROVE_KEY)}) compacts · /approve edit ({key_label(STEER_KEY)}) "
                 f"pins or excludes first · /approve later ({key_label(LATER_KEY)}) sends it whole")
NOTHING_WAITS = "Nothing waits for your approval: with /approve on, a compaction that is due asks here first."


def question(preview: "CallPlan") -> str:
    """"compaction due at call #12: masked 1 old result (9.9k → 9.5k tok). The rows above show the request…"."""
    return (f"{what_is_due(preview)}. The rows above show the request as it would be. Approve compacts; Edit pins "
            "or excludes rows first; Later sends this call whole.")


def what_is_due(preview: "CallPlan") -> str:
    """The event the call would make and the next request's size, in the chat's and the bar's words."""
    event = preview.plan.event
    if event is None:
        return f"compaction due at call #{preview.call}"
    return (f"compaction due at call #{preview.call}: {event.changes()} (next request ≈{fmt_tokens(event.tokens_before)}"
            f" → {fmt_tokens(event.tokens_after)} tok, {event.reason})")


def waiting_line(preview: "CallPlan") -> str:
    """The chat's one line while the turn waits: what, how big, how to answer."""
    return f"Waiting for your answer: {what_is_due(preview)}. {HOW_TO_ANSWER}."


class ApprovalPanel(Protocol):
    """What the approval needs of the panel that holds it (a Protocol: the panel imports this module)."""

    session: "Session"

    @property
    def screen(self) -> Any: ...

    @property
    def rows(self) -> "HistoryRows": ...

    def show_next_call(self, told: ev.NextRequestChanged) -> None: ...

    def query_one(self, selector: str) -> Any: ...

    def mount(self, *widgets: Any, before: Any = None) -> Any: ...

    def post_message(self, message: Message) -> bool: ...

    @property
    def Said(self) -> Callable[[str, str], Message]: ...  # the panel's messages: a line for the chat,

    @property
    def Changed(self) -> Callable[[], Message]: ...  # and the figures changed


class Approval:
    """The approval that waits on the panel: `ask` is what the TUI hands the session (through the app), `answer`
    what the bar, Alt+Y / Alt+L and `/approve` call. It holds the bar and the call asked about while a decision
    is awaited, and nothing otherwise."""

    def __init__(self, panel: ApprovalPanel) -> None:
        self.panel = panel
        self.bar: ApprovalBar | None = None
        self.waiting_for: "CallPlan | None" = None

    @property
    def waiting(self) -> bool:
        """A decision is awaited: the steering mode may change the call being asked about."""
        return self.bar is not None

    def prefix(self) -> str:
        """The folded meter's lead while a decision is awaited ("" otherwise)."""
        if self.waiting_for is None:
            return ""
        return f"‖ compaction waits (call #{self.waiting_for.call}): /approve yes|edit|later · "

    async def ask(self, preview: "CallPlan") -> Answer:
        """Show `preview` (the call with its event) and wait for the user's answer on the bar."""
        panel = self.panel
        panel.show_next_call(ev.NextRequestChanged(preview, base_breakdown(panel.session), "approval asked"))
        bar = ApprovalBar(question(preview), id="approval-bar")
        self.bar, self.waiting_for = bar, preview
        await panel.mount(bar, before=panel.query_one("#budget-reason"))
        panel.post_message(panel.Said(waiting_line(preview), "warning"))
        panel.post_message(panel.Changed())
        panel.screen.refresh_bindings()  # the footer offers Alt+Y / Alt+L while it waits
        try:
            return await bar.answer
        finally:
            self.bar = self.waiting_for = None
            await bar.remove()
            panel.post_message(panel.Changed())
            panel.screen.refresh_bindings()
            self._keyboard_back()

    def answer(self, answer: str) -> str:
        """`/approve yes|edit|later`, Alt+Y, Alt+L: answer the waiting bar; returns a line for the chat."""
        wanted = ANSWERS.get(answer.strip().lower())
        bar = self.bar
        if wanted is None:
            return f"Unknown answer {answer!r}: {HOW_TO_ANSWER}."
        if bar is None:
            return NOTHING_WAITS
        if wanted == "edit":
            bar.post_message(ApprovalBar.EditWanted())
            return ""
        call = self.waiting_for.call if self.waiting_for is not None else 0
        bar.decide("postpone" if wanted == "postpone" else "approve")
        return f"Approved: call #{call} compacts." if wanted == "approve" else ""  # the engine says a postpone

    def _keyboard_back(self) -> None:
        """Answered from the steering mode (Edit, then Approve): the keyboard returns to the prompt."""
        rows, screen = self.panel.rows, self.panel.screen
        if rows.armed and screen.focused is rows:
            screen.action_focus_prompt()


__all__ = ["ANSWERS", "HOW_TO_ANSWER", "NOTHING_WAITS", "Approval", "ApprovalPanel", "question", "waiting_line",
           "what_is_due"]
