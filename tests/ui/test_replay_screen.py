"""Replay mode in the TUI (Pilot): n/p/g/]/[ step through recorded calls; the card, the cost lines and
the budget panel follow; the prompt box stays disabled except to type a jump."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.widgets import Input

from tests.shared import SMALLEST_LOG
from tests.replay.test_replay_core import compacting_log
from tui_agent.core.recordings.replay import open_replay
from tui_agent.ui.replay_app import ReplayApp
from tui_agent.ui.budget_model import fmt_k, fmt_usd
from tui_agent.ui.screens.replay import HINT, ReplayScreen
from tui_agent.ui.widgets.budget_meter import BudgetMeter
from tui_agent.ui.widgets.history_rows import HistoryRows
from tui_agent.ui.widgets.replay_card import ReplayCard

SMALLEST = SMALLEST_LOG  # the smallest real log in ../shared, else the long synthetic one: never skipped


def make(path: Path, **kwargs) -> ReplayApp:
    app = ReplayApp(open_replay(path), session_label="test", show_durations=False, **kwargs)
    app.animation_level = "none"
    return app


def card_text(app: ReplayApp) -> str:
    return str(app.screen.query_one(ReplayCard).render())


def cost_row(app: ReplayApp, label: str) -> str:
    """The strategy's row of the cost table (the last line that starts with its label)."""
    return [line for line in card_text(app).splitlines() if line.startswith(label + " ")][-1]


def amount(replay, units: float) -> str:
    """A cost as the card's table writes it: dollars at the recorded model's price, else units."""
    usd = replay.cost_usd(units)
    return fmt_usd(usd) if usd is not None else fmt_k(round(units))


async def jump(pilot, text: str) -> None:
    await pilot.press("g")
    for key in text:
        await pilot.press(key)
    await pilot.press("enter")
    await pilot.app.workers.wait_for_complete()  # a jump replays the calls before it in a worker
    await pilot.pause()


@pytest.mark.parametrize("source", ["shared", "synthetic"])
async def test_stepping_through_a_real_session_updates_the_card_panel_and_costs(source: str) -> None:
    from tests.shared import SYNTHETIC_TRANSCRIPT

    app = make(SMALLEST if source == "shared" else SYNTHETIC_TRANSCRIPT)
    replay = app.replay
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        prompt = screen.query_one("#replay-prompt", Input)
        assert prompt.disabled and prompt.placeholder == HINT
        assert card_text(app).startswith(f"Call 1 of {replay.calls}")
        first_cost = cost_row(app, "ours")
        assert len(screen.query_one(HistoryRows).index.rows) == replay.step(0).history_len
        assert app.session.history == replay.history  # replay shows a part, never cuts the list

        for _ in range(3):
            await pilot.press("n")
        await pilot.pause()
        step = replay.step(3)
        assert screen.current == 3 and card_text(app).startswith(f"Call 4 of {replay.calls}")
        assert f"{step.real_tokens:,} tok" in card_text(app)
        assert cost_row(app, "ours") != first_cost  # the running cost grew
        panel_rows = screen.query_one(HistoryRows)
        assert len(panel_rows.index.rows) == step.history_len
        assert app.session.history == replay.history
        assert panel_rows.view is not None and panel_rows.view.plan.digest == step.plan.digest  # the step's plan...
        assert panel_rows.view.plan.estimated_tokens == round(step.ours_tokens)  # ...on the replay's one ruler
        meter = screen.query_one(BudgetMeter).meter
        assert meter is not None and meter.label == "Call #4"
        assert f"call {step.number}/{replay.calls}" in screen.sub_title

        await pilot.press("p")
        await pilot.pause()
        assert screen.current == 2 and len(panel_rows.index.rows) == replay.step(2).history_len
        assert app.session.history == replay.history  # stepping back deletes nothing

        await jump(pilot, str(replay.calls))
        last = replay.step(replay.calls - 1)
        assert screen.current == replay.calls - 1
        assert len(panel_rows.index.rows) == last.history_len
        assert prompt.disabled  # closed again after the jump
        row = cost_row(app, "ours").split()
        assert row[1:3] == [amount(replay, last.costs["v2"].cost), amount(replay, last.costs["v2"].total_cost)]
        assert cost_row(app, "append-only").split()[2] == amount(replay, last.costs["none"].total_cost)
        assert set(panel_rows.index.rows[i].index for i in range(last.history_len)) == set(range(last.history_len))

        await pilot.press("n")  # past the end: stays on the last call
        await pilot.pause()
        assert screen.current == replay.calls - 1

        await jump(pilot, "999")  # not a call: a warning, nothing moves
        assert screen.current == replay.calls - 1
        assert any("Not a call or an event" in str(n.message) for n in app._notifications)

        await pilot.press("c")  # the panel's exact count asks nobody in replay mode
        await pilot.pause()


async def test_events_jump_to_where_the_agent_compacted(tmp_path: Path) -> None:
    app = make(compacting_log(tmp_path / "c.jsonl"))
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("right_square_bracket")
        await app.workers.wait_for_complete()  # an event search replays on in a worker
        await pilot.pause()
        assert screen.current == 5
        text = card_text(app)
        assert "compacted before this call" in text and "boundary" in text
        assert "events at calls 6 (agent boundary)" in text
        await pilot.press("n", "n")
        await pilot.pause()
        assert "compacted 1× so far (last before call 6)" in card_text(app)
        await pilot.press("left_square_bracket")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.current == 5
        await jump(pilot, "1")
        assert screen.current == 0
        recorded = app.replay.history
        assert app.session.history == recorded and len(app.session.history) > app.replay.step(0).history_len
        assert len(screen.query_one(HistoryRows).index.rows) == app.replay.step(0).history_len
        await jump(pilot, "e1")
        assert screen.current == 5
        await pilot.press("g")
        await pilot.press("escape")
        await pilot.pause()
        assert screen.query_one("#replay-prompt", Input).disabled


async def test_escape_sequences_in_a_log_never_reach_the_terminal(tmp_path: Path) -> None:
    from tests.replay.jsonl import Log, text

    log = Log().user("hi")
    log.assistant([text("\x1b]0;pwned\x07\x1b[2Jclean reply")], input_tokens=4_000, model="claude-\x1b[31mx")
    log.user("This session is being continued from a previous conversation \x1b]52;c;Y2xpcA==\x07",
             isCompactSummary=True)
    log.assistant([text("ok")], input_tokens=4_100)
    app = make(log.write(tmp_path / "esc.jsonl"))
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert "\x1b" not in card_text(app) and "clean reply" in card_text(app)
        await pilot.press("n")
        await pilot.pause()
        assert "\x1b" not in card_text(app) and "compacted before this call" in card_text(app)
        assert "\x1b" not in app.screen.sub_title


async def test_the_replay_view_is_read_only() -> None:
    """Issue 18: the read-only panel offered p / x / e."""
    app = make(SMALLEST)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        rows = screen.query_one(HistoryRows)
        rows.enter_on_purpose()
        await pilot.pause()
        keys = {b.binding.description for b in screen.active_bindings.values() if b.binding.show}
        assert "Pin" not in keys and "Exclude" not in keys and "Prev event" in keys
        legend = str(screen.query_one("#budget-legend").render())
        assert "read-only" in legend and "p pin" not in legend


async def test_a_far_jump_that_takes_long_shows_a_progress_line(monkeypatch) -> None:
    from textual.widgets import Static

    monkeypatch.setattr("tui_agent.ui.screens.replay.PROGRESS_AFTER", 0.0)  # as if replaying took long
    monkeypatch.setattr("tui_agent.ui.screens.replay.CHUNK", 3)
    app = make(SMALLEST)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ReplayScreen) and screen.last_progress == ""
        last = screen.replay.calls
        await jump(pilot, str(last))
        assert screen.current == last - 1 and f"call {last}/{last}" in screen.sub_title
        assert re.fullmatch(rf"replaying call \d+/{last}…", screen.last_progress), screen.last_progress
        assert not screen.query_one("#replay-progress", Static).has_class("-active")  # gone once there


async def test_a_quick_jump_shows_no_progress_line(monkeypatch) -> None:
    monkeypatch.setattr("tui_agent.ui.screens.replay.PROGRESS_AFTER", 1e9)  # as if replaying were quick
    app = make(SMALLEST)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await jump(pilot, str(app.screen.replay.calls))
        assert app.screen.current == app.screen.replay.calls - 1 and app.screen.last_progress == ""


async def test_an_event_search_that_replays_long_shows_the_progress_line_too(monkeypatch) -> None:
    monkeypatch.setattr("tui_agent.ui.screens.replay.PROGRESS_AFTER", 0.0)
    monkeypatch.setattr("tui_agent.ui.screens.replay.CHUNK", 1)
    app = make(SMALLEST)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("right_square_bracket")
        await app.workers.wait_for_complete()
        await pilot.pause()
        calls = screen.replay.calls
        assert re.fullmatch(rf"replaying call \d+/{calls}…", screen.last_progress), screen.last_progress
        assert screen.replay.made > 1  # it replayed on to look for our next event


async def test_history_and_sent_are_on_the_one_ruler_of_the_replay() -> None:
    """Issue 16 (one ruler in replay): with nothing dropped, cut or masked the request sends the whole
    history, so "history ≈X → sent ≈X" (the history was on chars/4 and sent on the fitted ruler:
    "history ≈10.2k → sent ≈15.5k")."""
    app = make(SMALLEST)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        step = app.screen.replay.step(app.screen.current)
        assert not step.plan.cuts and not step.plan.masks and step.plan.dropped_count == 0
        text = str(app.screen.query_one(BudgetMeter).render())
        found = re.search(r"history ≈(\S+) · .* → sent ≈(\S+) ·", text)
        assert found is not None, text
        assert found.group(1) == found.group(2), text
