"""Issue 30 item 4 in the TUI: `u` in the steering mode takes back the newer of the last change by hand and the
last compaction event; `/undo-compaction` takes back the event; the chat and the panel say what it costs."""

from __future__ import annotations

from .support import make_app, make_repo, send
from .test_panel_plan import planned_session
from .test_steering import notices
from .test_typing_focus import outbound_changes


def reason(app) -> str:
    return str(app.screen.query_one("#budget-reason").render())


async def test_u_takes_back_the_newer_of_a_pin_and_the_event_and_says_the_cost(tmp_path) -> None:
    from tui_agent.ui.widgets.budget_panel import BudgetPanel
    from tui_agent.ui.widgets.history_rows import HistoryRows

    session = planned_session(make_repo(tmp_path))
    app = make_app(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await send(pilot, "what does the handler do?")
        panel = app.screen.query_one(BudgetPanel)
        event = session.compactor.undoable
        assert panel.ledger.major_events and event is not None, "the planned session has an event to take back"
        changes = outbound_changes(session)
        rows = app.screen.query_one(HistoryRows)
        await pilot.press("f4")
        await pilot.pause()
        assert "u undo last" in str(app.screen.query_one("#budget-title").render())
        rows.cursor = 0
        await pilot.press("p")  # a pin after the event: the newer of the two
        await pilot.pause()
        masked = set(panel.rows.view.plan.masks)
        await pilot.press("u")
        await pilot.pause()
        assert notices(app)[-1].startswith("Undid the last change: unpinned #0"), notices(app)[-1]
        assert session.compactor.undoable is event, "the pin was the newer: the event is still there"
        await pilot.press("u")
        await pilot.pause()
        said = notices(app)[-1]
        assert said.startswith(f"Took back the compaction event of call #{event.call}"), said
        assert "written to the cache again in full" in said and "equivalents once" in said  # the demo has no price
        assert "written to the cache again in full" in reason(app), "the panel says the cost too"
        assert [c.action for c in changes][-1] == "undo-event"
        assert set(panel.rows.view.plan.masks) < masked, "what the event masked is sent again"
        await send(pilot, "/undo-compaction")
        assert notices(app)[-1].startswith("Nothing to undo"), notices(app)[-1]


async def test_the_next_turn_after_an_undo_does_not_compact_again(tmp_path) -> None:
    session = planned_session(make_repo(tmp_path))
    app = make_app(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await send(pilot, "what does the handler do?")
        await send(pilot, "/undo-compaction")
        assert notices(app)[-1].startswith("Took back the compaction event"), notices(app)[-1]
        from tui_agent.core import events as ev

        reported: list[ev.CompactionReported] = []
        session.listeners.append(lambda e: reported.append(e) if isinstance(e, ev.CompactionReported) else None)
        calls = session.state.calls
        await send(pilot, "explain the models")
        first = next(r for r in reported if r.call == calls + 1)
        assert first.plan.event is None or not first.plan.event.major, "held: no event right after the undo"
