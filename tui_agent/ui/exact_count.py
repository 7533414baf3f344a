"""Counting the next call exactly (`c` in the panel, or `/context`), beside its estimate.

The provider's counting endpoint answers in a worker (it is a network call); under our own strategies
the note also says what the API's own context editing (server-clear) would have sent, so the two can be
compared on the same request. A mixin of the budget panel, which owns the meter the note goes to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.content import Content

from tui_agent.core.agent.server_compare import server_clear_line
from tui_agent.core.agent.budget import CallFigures
from tui_agent.ui.themes import MUTED
from tui_agent.ui.widgets.budget_meter import BudgetMeter, exact_note

if TYPE_CHECKING:
    from tui_agent.core.agent.session import Session


class ExactCountActions:
    """Needs `session` and the panel's `meter`."""

    session: "Session"
    meter: BudgetMeter

    def action_count_exact(self) -> None:
        """`c` in the panel, or `/context`: count the next call exactly, beside its estimate."""
        if self.session.running:
            self.meter.exact = Content.styled("exact count: after this turn ends", MUTED)
            return
        if not self.session.history:
            self.meter.exact = Content.styled("exact count: nothing to count yet", MUTED)
            return
        self.meter.exact = Content.styled("exact count: asking the provider…", MUTED)
        self._count_exact(self.meter.meter)

    @work(group="count", exclusive=True, exit_on_error=False)
    async def _count_exact(self, shown: CallFigures | None) -> None:
        try:
            exact = await self.session.count_next_tokens()
        except Exception as error:  # noqa: BLE001 - ProviderError or a transport failure: show it
            note = Content.assemble(("exact count failed: ", "$text-error"), str(error) or type(error).__name__)
        else:
            note = exact_note(exact, shown.total if shown is not None else None, self.session.provider.name)
            server = await server_clear_line(self.session, exact)  # ours beside the API's own context editing
            note = Content.assemble(note, "\n", (server, MUTED)) if server is not None else note
        if self.meter.meter is shown:  # still the call it measured
            self.meter.exact = note

