"""Counting the next call exactly (`c` in the panel, or `/context`), beside its estimate.

The provider's counting endpoint answers in a worker (it is a network call); under our own strategies
the note also says what the API's own context editing (server-clear) would have sent, so the two can be
compared on the same request. An object the budget panel holds (`panel.exact_count`): the panel owns the meter
the note goes to and runs the worker; this object is only the asking and the note.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from textual.content import Content

from tui_agent.core.agent.server_compare import server_clear_line
from tui_agent.core.agent.budget import CallFigures
from tui_agent.ui.themes import MUTED
from tui_agent.ui.widgets.budget_meter import BudgetMeter, exact_note

if TYPE_CHECKING:
    from tui_agent.core.agent.session import Session


class CountingPanel(Protocol):
    """What the exact count needs of the panel that holds it (a Protocol: the panel imports this module)."""

    session: "Session"

    @property
    def meter(self) -> BudgetMeter: ...

    def run_worker(self, work: Any, *, name: str = "", group: str = "default", exclusive: bool = False,
                   exit_on_error: bool = True) -> Any: ...


class ExactCount:
    """The next call counted by the provider, held by the budget panel. The worker runs on the panel (a
    worker needs a DOM node): one count at a time (`exclusive` in the group "count"), and a failure is
    shown in the meter rather than ending the app."""

    def __init__(self, panel: CountingPanel) -> None:
        self.panel = panel

    def ask(self) -> None:
        """`c` in the panel, or `/context`: count the next call exactly, beside its estimate."""
        session, meter = self.panel.session, self.panel.meter
        if session.running:
            meter.exact = Content.styled("exact count: after this turn ends", MUTED)
            return
        if not session.history:
            meter.exact = Content.styled("exact count: nothing to count yet", MUTED)
            return
        meter.exact = Content.styled("exact count: asking the provider…", MUTED)
        self.panel.run_worker(partial(self._count, meter.meter), name="count_exact", group="count", exclusive=True,
                              exit_on_error=False)

    async def _count(self, shown: CallFigures | None) -> None:
        session, meter = self.panel.session, self.panel.meter
        try:
            exact = await session.count_next_tokens()
        except Exception as error:  # noqa: BLE001 - ProviderError or a transport failure: show it
            note = Content.assemble(("exact count failed: ", "$text-error"), str(error) or type(error).__name__)
        else:
            note = exact_note(exact, shown.total if shown is not None else None, session.provider.name)
            server = await server_clear_line(session, exact)  # ours beside the API's own context editing
            note = Content.assemble(note, "\n", (server, MUTED)) if server is not None else note
        if meter.meter is shown:  # still the call it measured
            meter.exact = note


__all__ = ["CountingPanel", "ExactCount"]
