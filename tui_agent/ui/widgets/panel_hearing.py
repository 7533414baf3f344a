"""What the budget panel hears from its session between the turn's own events: a listener the panel holds.

The turn's events reach the panel through the app; what the session says outside a turn (the next request
changed, a keep-warm ping or its stop, the idle policy's choice, a summary written in the background, an
undone event) reaches it here, at once. A panel showing another ledger than the session's (a replay's) has
that ledger fed here too, and lets go of both when it leaves.
"""

from __future__ import annotations

from typing import Any, Protocol

from tui_agent.core import events as ev


class Hearer(Protocol):
    """What the listener asks of the panel that holds it (the budget panel is one)."""

    session: Any
    ledger: Any
    meter: Any
    Said: Any

    def show_next_call(self, event: ev.NextRequestChanged) -> None: ...
    def post_message(self, message: Any) -> bool: ...
    def cost_changed(self) -> None: ...
    def events_changed(self) -> None: ...


class SessionHearing:
    def __init__(self, panel: Hearer) -> None:
        self.panel = panel
        self._feeds = False  # this listener added the panel's own ledger's feed (a replay's ledger)

    def attach(self) -> None:
        panel, listeners = self.panel, self.panel.session.listeners
        # the session feeds its own ledger before any face sees an event; another (a replay's) is fed here
        if panel.ledger is not panel.session.ledger and panel.ledger.feed not in listeners:
            listeners.append(panel.ledger.feed)
            self._feeds = True
        listeners.append(self.heard)

    def detach(self) -> None:
        panel, listeners = self.panel, self.panel.session.listeners
        if self._feeds and panel.ledger.feed in listeners:
            listeners.remove(panel.ledger.feed)
        listeners[:] = [x for x in listeners if x != self.heard]

    def heard(self, event: object) -> None:
        """The engine's word that the next request changed is drawn at once; the meter hears the rest."""
        panel = self.panel
        if isinstance(event, ev.NextRequestChanged):
            panel.show_next_call(event)
            if event.why == "idle compact" and event.plan.plan.event is not None:  # the idle policy's own event
                panel.post_message(panel.Said(f"{event.plan.plan.event.line()}."))  # "call 6 · compacted while idle…"
        elif isinstance(event, (ev.CacheKeptWarm, ev.KeepWarmStopped, ev.IdleChosen)):  # the meter's clock, the cost
            said = panel.meter.heard_warm(event, panel.ledger, panel.session.state.warm_since)
            panel.cost_changed()
            if said:  # a stop and its reason, the idle choice when it changes, a refused max_tokens 0: once
                panel.post_message(panel.Said(said))
        elif isinstance(event, ev.Usage) and event.purpose == "summary":  # /compact's summary, written after it:
            panel.cost_changed()  # its price is the session's at once (the title lagged the ledger by it)
        elif isinstance(event, ev.CompactionChanged) and event.action == "undo-event":  # listed, not counted
            panel.events_changed()
