"""One call, one price (issue 28): the replay card, the watch card and the budget meter beside them show
the same figure in the same unit for a call (`replay.step_cost`), in dollars when the log's model has a
price and in new-token equivalents when it has none; a cold first call reads nothing from the cache, and
the meter's "sent" count is the request's messages, the card's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shared import SYNTHETIC_TRANSCRIPT
from tests.waiting import wait_until
from tui_agent.core.formats import plural
from tui_agent.core.recordings.economics import default_policy
from tui_agent.core.recordings.replay import open_replay, step_cost
from tui_agent.faces.watch import LogSource
from tui_agent.ui.replay_app import ReplayApp
from tui_agent.ui.budget_model import fmt_k, fmt_usd
from tui_agent.ui.watch_app import WatchApp
from tui_agent.ui.widgets.budget_meter import BudgetMeter
from tui_agent.ui.widgets.replay_card import ReplayCard
from tui_agent.ui.widgets.watch_card import WatchCard

PRICED = "claude-sonnet-4-5-20250929"  # the synthetic log's model
MODELS = [PRICED, "some-local-model"]  # the second has no known price


def log_of(tmp_path: Path, model: str) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text(SYNTHETIC_TRANSCRIPT.read_text().replace(PRICED, model))
    return path


def ours_row(card: str) -> list[str]:
    return [line for line in card.splitlines() if line.startswith("ours ")][-1].split()


@pytest.mark.parametrize("model", MODELS)
async def test_replay_card_and_meter_agree_on_each_call(tmp_path: Path, model: str) -> None:
    replay = open_replay(log_of(tmp_path, model))
    app = ReplayApp(replay, session_label="test", show_durations=False)
    app.animation_level = "none"
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        for k in range(replay.calls):
            screen.show_call(k)
            await pilot.pause()
            step = replay.step(k)
            cost = step_cost(replay, step)
            meter = screen.query_one(BudgetMeter)
            assert meter.meter is not None and meter.meter.cost == cost
            text, card = str(meter.render()), str(screen.query_one(ReplayCard).render())
            assert f"this call {cost.text()}" in text
            assert ours_row(card)[1] == (fmt_usd(cost.usd) if cost.usd is not None else fmt_k(round(cost.units)))
            assert ("$" in text) == (model == PRICED)  # no dollar figure beside a unit, nor the reverse
            assert f"→ sent ≈{fmt_k(meter.meter.messages)} · {plural(step.plan.sent_count, 'msg')}" in text
            assert f"{plural(step.plan.sent_count, 'msg')} sent" in card
            if k == 0:
                assert meter.meter.cached == 0 and "cached ≈0 " in text  # a cold first call reads nothing


@pytest.mark.parametrize("model", MODELS)
async def test_watch_card_and_meter_agree(tmp_path: Path, model: str) -> None:
    log = log_of(tmp_path, model)
    app = WatchApp(LogSource(log, False, False), log, default_policy(), session_label="test", show_durations=False)
    app.animation_level = "none"
    whole = open_replay(log)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        await wait_until(lambda: screen.replay is not None and screen.replay.calls == whole.calls,
                         what="every call", timeout=60, shown=lambda: screen.sub_title)
        await pilot.pause()
        for k in (0, whole.calls - 1):
            screen.show_call(k)
            await pilot.pause()
            cost = step_cost(screen.view, screen.view.step(k))
            meter = screen.query_one(BudgetMeter)
            assert meter.meter is not None and meter.meter.cost == cost
            assert f"this call {cost.text()}" in str(meter.render())
            assert f"ours {cost.text()} this call" in str(screen.query_one(WatchCard).render())
            assert (cost.usd is not None) == (model == PRICED)  # the log's model prices the panel
