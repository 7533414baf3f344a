"""What the main screen's panel keys do (`keys.py` binds and describes them): F2 shows or hides the
budget panel, F4 enters or leaves the steering mode, Alt+Y / Alt+L answer an approval that waits.

Why apart from the screen: the keyboard's owner is the prompt, and these actions are the only ones that
may move it. F2 never does (at 120 columns it once entered the steering mode and the next question's
"e", "x" and "p" expanded, excluded and pinned rows); F4 does, on purpose, and says so on the panel's
title; the approval keys answer without touching the focus, so a question typed while a compaction
waits arrives in the prompt whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from tui_agent.ui.widgets.approval_bar import ApprovalBar
from tui_agent.ui.widgets.history_rows import HistoryRows

if TYPE_CHECKING:
    from tui_agent.ui.widgets.budget_panel import BudgetPanel
    from tui_agent.ui.widgets.prompt_area import PromptArea


class PanelKeys:
    """Mixin (first in the bases) of the main screen. A plain class, so it adds no CSS type name."""

    panel: "BudgetPanel"
    prompt: "PromptArea"
    focused: Any
    query_one: Callable[..., Any]
    has_class: Callable[[str], bool]
    add_class: Callable[..., Any]
    remove_class: Callable[..., Any]
    toggle_class: Callable[..., Any]

    def action_toggle_panel(self) -> None:
        """F2: show or hide the panel (under 100 columns: open it over the chat, or close it). The keyboard
        stays where it is; only when it was in the panel being hidden does it come back to the prompt."""
        narrow = self.has_class("-narrow")
        self.toggle_class("-panel-open" if narrow else "-panel-hidden")
        shown = self.has_class("-panel-open") if narrow else not self.has_class("-panel-hidden")
        if not shown and self._keyboard_in_panel():
            self.prompt.focus()

    def action_steer(self) -> None:
        """F4: the steering mode (the panel shown, the keyboard in its rows, the plain keys act); F4 again,
        like Esc, leaves it for the prompt. While an approval waits, this is its Edit."""
        rows = self.query_one(HistoryRows)
        if rows.armed and self.focused is rows:
            self.action_focus_prompt()
            return
        self.show_panel()
        rows.enter_on_purpose()

    def show_panel(self) -> None:
        self.remove_class("-panel-hidden")
        if self.has_class("-narrow"):
            self.add_class("-panel-open")

    def focus_panel(self) -> None:
        """`/context`: the keyboard in the rows to read them (↑/↓, why each is sent); not the steering mode,
        so the next question typed goes to the prompt whole (F4 steers)."""
        self.show_panel()
        self.query_one(HistoryRows).focus()

    def action_focus_prompt(self) -> None:
        self.remove_class("-panel-open")
        self.prompt.focus()

    def _keyboard_in_panel(self) -> bool:
        focused = self.focused
        return focused is not None and (focused is self.panel or self.panel in focused.ancestors)

    # -- an approval that waits (`approval.py`) ------------------------------------------------------
    def action_answer_approval(self, answer: str) -> None:
        """Alt+Y, Alt+L (or `/approve yes|later`): the waiting approval is answered; the focus stays put."""
        said = self.panel.approval.answer(answer)
        if said:
            self.panel.post_message(self.panel.Said(said, "info" if said.startswith("Approved") else "warning"))

    def on_approval_bar_chosen(self, event: ApprovalBar.Chosen) -> None:
        """A click on the bar: the same answer as the keys and `/approve <word>`."""
        event.stop()
        self.action_answer_approval(event.word)

    def on_approval_bar_edit_wanted(self, event: ApprovalBar.EditWanted) -> None:
        """The bar's Edit (or `/approve edit`): the steering mode, the panel opened if it was folded."""
        event.stop()
        rows = self.query_one(HistoryRows)
        if not (rows.armed and self.focused is rows):
            self.action_steer()

    def check_approval_key(self, action: str) -> bool | None:
        """The approval keys exist only while an approval waits (else Alt+Y is the prompt's)."""
        if action == "answer_approval":
            return self.panel.approval.waiting
        return None


__all__ = ["PanelKeys"]
