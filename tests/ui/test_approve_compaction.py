"""Approve before compacting (issue 30 item 4) in the TUI: with the mode on, a due event pauses the turn, the
panel shows the request as it would be and the bar asks; postpone sends this call uncompacted, approve
compacts, edit enters the steering mode and its pin applies to the call once approved.

Issue 40: the wait never takes the keyboard. It is said in the chat (and the folded meter under 100
columns); letters typed meanwhile go to the prompt, all of them, in order; it is answered by Alt+Y, F4,
Alt+L, `/approve yes|edit|later` or a click, never by a letter."""

from __future__ import annotations

import pytest

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


def laid_out_bar(app):
    """The bar once its buttons have a place on the screen (a click before that lands on the header)."""
    bar = bar_of(app)
    buttons = list(bar.query("Button")) if bar is not None else []
    return bar if len(buttons) == 3 and all(b.region.width for b in buttons) else None


async def approve_the_rest(pilot, app, session, after_call: int = 0) -> None:
    """Later calls of the turn ask again: approve each until the turn (past call `after_call`) ends."""
    await approve_until(pilot, app, lambda: not session.running and session.state.calls > after_call)


async def approve_until(pilot, app, done) -> None:
    """Approve every bar that asks until `done()`."""
    while True:
        await wait_until(lambda: bar_of(app) is not None or done(), what="a bar or the end", timeout=30)
        if bar_of(app) is None:
            return
        await pilot.press("alt+y")  # at every width (a folded panel has no bar to click)
        await pilot.pause()


async def test_a_due_event_waits_and_postpone_sends_the_call_whole_then_approve_compacts(tmp_path) -> None:
    session = planned_session(make_repo(tmp_path))
    session.approve_compaction = True
    app = make_app(session)
    async with app.run_test(size=(140, 40)) as pilot:
        seen = reported(session)
        await pilot.press(*"what does the handler do?", "enter")
        bar = await wait_until(lambda: laid_out_bar(app), what="the approval bar")
        assert "compaction due at call #" in str(bar.query_one("#approval-text").render())
        assert session.running, "the turn waits for the answer"
        asked_call = session.state.calls
        await pilot.click("#approval-postpone")
        assert app.screen.focused is app.screen.prompt, "a click on the bar leaves the keyboard in the prompt"
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
        await wait_until(lambda: laid_out_bar(app), what="the approval bar")
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
        assert bar_of(app) is not None and app.screen.focused is app.screen.prompt, "Esc: back to the prompt"
        await pilot.press("alt+y")
        first = await wait_until(lambda: next((r for r in seen if r.call == asked_call), None), what="the call")
        assert 1 in first.plan.pins and first.plan.is_sent(1)
        assert app.screen.prompt.text == "", "Alt+Y answered; it typed nothing"
        await approve_the_rest(pilot, app, session)


@pytest.mark.parametrize("width", [80, 120, 160])
async def test_a_wait_is_said_and_every_key_typed_meanwhile_reaches_the_prompt(tmp_path, width: int) -> None:
    """The question typed while a compaction waits ("explain the pin rule": e, x, p and a were the bar's keys)
    arrives whole in the prompt; the chat says what waits and how to answer; at 80 columns the folded meter
    says it too. Alt+L answers (postpone) without typing an "l"; the question, queued, is sent after the turn."""
    from tui_agent.ui.widgets.context_line import ContextLine

    session = planned_session(make_repo(tmp_path))
    session.approve_compaction = True
    app = make_app(session)
    async with app.run_test(size=(width, 40)) as pilot:
        seen = reported(session)
        await pilot.press(*"what does the handler do?", "enter")
        await wait_until(lambda: bar_of(app), what="the approval bar")
        asked_call = session.state.calls
        said = await wait_until(lambda: [n for n in notices(app) if n.startswith(
            "Waiting for your answer: compaction due at call #")], what="the chat's line")
        assert len(said) == 1 and "next request ≈" in said[0] and "/approve yes (Alt+Y)" in said[0], notices(app)
        assert "/approve later (Alt+L)" in said[0] and "/approve edit (F4)" in said[0]
        folded = app.screen.query_one(ContextLine)
        if width < 100:
            assert folded.display and "compaction waits" in str(folded.render()), str(folded.render())
        prompt = app.screen.prompt
        assert app.screen.focused is prompt, "the wait never takes the keyboard"
        await pilot.press(*"explain the pin rule")
        await pilot.pause()
        assert prompt.text == "explain the pin rule" and app.screen.focused is prompt
        assert bar_of(app) is not None and session.running, "no letter answered the bar"
        await pilot.press("alt+l")
        first = await wait_until(lambda: next((r for r in seen if r.call == asked_call), None), what="the call")
        assert "you postponed" in first.plan.quiet_reason
        assert prompt.text == "explain the pin rule", "Alt+L answered; it typed nothing"
        await pilot.press("enter")  # the turn still runs: the question is queued, sent once it ends
        def answered() -> bool:
            return not session.running and not app.screen.queued.texts and any(
                m["role"] == "user" and "explain the pin rule" in str(m["content"]) for m in session.history)

        await approve_until(pilot, app, answered)
        typed = [m for m in session.history if m["role"] == "user" and "explain the pin rule" in str(m["content"])]
        assert len(typed) == 1 and str(typed[0]["content"]).count("explain the pin rule") == 1
        if width < 100:
            assert "compaction waits" not in str(folded.render()), "the folded meter forgets an answered wait"


async def test_the_approve_command_answers_and_says_when_nothing_waits(tmp_path) -> None:
    """`/approve yes|edit|later`: the answers by command; with nothing waiting, one line says so (the mode
    stays as it was)."""
    session = planned_session(make_repo(tmp_path))
    session.approve_compaction = True
    app = make_app(session)
    async with app.run_test(size=(120, 40)) as pilot:
        seen = reported(session)
        await pilot.press(*"/approve later", "enter")
        await pilot.pause()
        assert notices(app)[-1].startswith("Nothing waits for your approval") and session.approve_compaction
        await pilot.press("alt+y", "alt+l")  # with nothing waiting, the shortcuts type no letter either
        assert app.screen.prompt.text == ""
        await pilot.press(*"what does the handler do?", "enter")
        await wait_until(lambda: bar_of(app), what="the approval bar")
        asked_call = session.state.calls
        await pilot.press(*"/approve edit", "enter")
        await pilot.pause()
        rows = app.screen.query_one("#budget-rows")
        assert rows.armed and app.screen.focused is rows, "edit: the steering mode"
        await pilot.press("escape")
        await pilot.press(*"/approve yes", "enter")
        first = await wait_until(lambda: next((r for r in seen if r.call == asked_call), None), what="the call")
        assert first.plan.event is not None and first.plan.event.major, "approved: the call compacts"
        assert any(n == f"Approved: call #{asked_call} compacts." for n in notices(app))
        await approve_the_rest(pilot, app, session)
