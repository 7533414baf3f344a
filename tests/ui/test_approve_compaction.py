"""Approve before compacting (issue 30 item 4) in the TUI: with the mode on, a due event pauses the turn, the
panel shows the request as it would be and the bar asks; postpone sends this call uncompacted, approve
compacts, edit enters the steering mode and its pin applies to the call once approved."""

from __future__ import annotations

from tests.waiting import wait_until
from tui_agent.core import events as ev

from .support import make_app, make_repo
from .test_panel_plan import planned_session
from .test_steering import notices


def reported(session) -> list[ev.CompactionReported]:
    seen: list[ev.CompactionReported] = []
    session.listeners.append(lambda e: seen.append(e) if isinstance(e, ev.CompactionReported) else None)
    return seen


def bar_of(app):
    from tui_agent.ui.widgets.approval_bar import ApprovalBar

    found = app.screen.query(ApprovalBar)
    return found.first() if found else None


async def approve_the_rest(pilot, app, session, after_call: int = 0) -> None:
    """Later calls of the turn ask again: approve each until the turn (past call `after_call`) ends."""
    while True:
        await wait_until(lambda: bar_of(app) is not None or (not session.running and session.state.calls > after_call),
                         what="a bar or the turn's end")
        if bar_of(app) is None:
            return
        await pilot.click("#approval-approve")
        await pilot.pause()


async def test_a_due_event_waits_and_postpone_sends_the_call_whole_then_approve_compacts(tmp_path) -> None:
    session = planned_session(make_repo(tmp_path))
    session.approve_compaction = True
    app = make_app(session)
    async with app.run_test(size=(140, 40)) as pilot:
        seen = reported(session)
        await pilot.press(*"what does the handler do?", "enter")
        bar = await wait_until(lambda: bar_of(app), what="the approval bar")
        assert "compaction due at call #" in str(bar.query_one("#approval-text").render())
        assert session.running, "the turn waits for the answer"
        asked_call = session.state.calls
        await pilot.click("#approval-postpone")
        first = await wait_until(lambda: next((r for r in seen if r.call == asked_call), None), what="the call")
        assert first.plan.event is None or not first.plan.event.major, "postponed: this call goes out uncompacted"
        assert "you postponed" in first.plan.quiet_reason
        await approve_the_rest(pilot, app, session)
        calls = session.state.calls
        await pilot.press(*"explain the models", "enter")  # a second turn: its due events are approved
        await approve_the_rest(pilot, app, session, calls)
        assert any(r.plan.event is not None and r.plan.event.major for r in seen), "approved events ran"
        assert any(n.startswith(f"Compaction postponed for call #{asked_call}") for n in notices(app))


async def test_edit_pins_a_row_for_the_call_being_asked_about(tmp_path) -> None:
    session = planned_session(make_repo(tmp_path))
    session.approve_compaction = True
    app = make_app(session)
    async with app.run_test(size=(140, 40)) as pilot:
        seen = reported(session)
        await pilot.press(*"what does the handler do?", "enter")
        await wait_until(lambda: bar_of(app), what="the approval bar")
        asked_call = session.state.calls
        await pilot.click("#approval-edit")
        await pilot.pause()
        rows = app.screen.query_one("#budget-rows")
        assert rows.armed and "STEERING" in str(app.screen.query_one("#budget-title").render())
        rows.cursor = 1
        await pilot.press("p")
        await pilot.pause()
        assert 1 in session.compactor.pins, "the pin applies while the turn waits"
        await pilot.press("escape")
        await pilot.pause()
        assert bar_of(app) is not None and app.screen.focused is bar_of(app).query_one("#approval-approve")
        await pilot.press("a")
        first = await wait_until(lambda: next((r for r in seen if r.call == asked_call), None), what="the call")
        assert 1 in first.plan.pins and first.plan.is_sent(1)
        await approve_the_rest(pilot, app, session)
