"""The panel's API-backed numbers: exact counting on demand, the running session cost, the cache split
of the last call and the calibrated estimate of the next one."""

from __future__ import annotations

from dataclasses import dataclass

from tui_agent.core.providers.base import ModelRequest, ProviderError, UsageInfo
from tui_agent.core.models import cost_usd
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply
from tui_agent.ui.budget_model import fmt_usd
from tui_agent.ui.widgets.budget_meter import BudgetMeter
from tui_agent.ui.widgets.budget_panel import BudgetPanel
from tui_agent.ui.widgets.history_rows import HistoryRows

from .support import make_app, make_repo, scripted_session, send

USAGE = UsageInfo(input_tokens=800, output_tokens=50, cache_creation_input_tokens=1200, cache_read_input_tokens=12300)
MODEL = "claude-sonnet-4-5"  # a model with a known price


@dataclass
class CountingProvider(ScriptedProvider):
    """Counts like `messages.count_tokens` would: 12,345 first, then one more per request."""

    counted: list[int] | None = None

    async def count_tokens(self, request: ModelRequest) -> int | None:
        self.counted = (self.counted or []) + [12_345 + len(self.counted or [])]
        return self.counted[-1]


@dataclass
class FailingCountProvider(ScriptedProvider):
    async def count_tokens(self, request: ModelRequest) -> int | None:
        raise ProviderError("count_tokens failed: 529 overloaded, try again")


def meter_text(app) -> str:
    return str(app.screen.query_one(BudgetMeter).render())


async def context(pilot) -> None:
    await send(pilot, "/context")


async def test_context_and_c_count_exactly_beside_the_estimate(tmp_path) -> None:
    provider = CountingProvider(model=MODEL)
    session = scripted_session(make_repo(tmp_path), [text_reply("Hi.")], provider=provider)
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await context(pilot)
        assert "nothing to count yet" in meter_text(app)  # no history: nothing to ask about
        await send(pilot, "hello")
        await context(pilot)
        text = meter_text(app)
        assert "exact 12,345 (count_tokens)" in text and "Next call ≈" in text  # beside the estimate
        assert app.screen.focused is app.screen.query_one(HistoryRows)  # /context focuses the panel...
        await pilot.press("f4", "c")  # ...where, in the steering mode, c counts again (issue 28: not before)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "exact 12,346 (count_tokens)" in meter_text(app)
        assert provider.counted == [12_345, 12_346]
        await send(pilot, "again")  # a new call: the old count no longer applies
        assert "exact" not in meter_text(app)


async def test_count_when_the_provider_cannot_or_fails(tmp_path) -> None:
    session = scripted_session(make_repo(tmp_path), [text_reply("Hi.")])
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "hello")
        await context(pilot)
        assert "exact count: scripted can't count tokens (≈ only)" in meter_text(app)
        session.provider = FailingCountProvider()
        await context(pilot)
        assert "exact count failed: count_tokens failed: 529 overloaded, try again" in meter_text(app)


async def test_usage_gives_cost_cache_split_and_calibrated_estimate(tmp_path) -> None:
    provider = ScriptedProvider(model=MODEL, usage=USAGE, reports_usage=True)
    session = scripted_session(make_repo(tmp_path), [text_reply("Hi."), text_reply("Again.")], provider=provider)
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        panel = app.screen.query_one(BudgetPanel)
        assert "$" not in str(panel.query_one("#budget-title").render()) and "$" not in app.screen.sub_title
        await send(pilot, "hello")
        await send(pilot, "more")
        cost = fmt_usd(2 * cost_usd(MODEL, USAGE))
        assert cost in str(panel.query_one("#budget-title").render())
        assert app.screen.sub_title.endswith(f"· {cost}")
        text = meter_text(app)
        assert "cached 12.3k · written 1.2k · uncached 800" in text
        assert "call #2 input 14.3k · 86% read from cache" in text
        assert session.calibration != 1.0  # the real usage is far from the estimate
        system, tools = session.baseline_tokens()
        expected = session.calibrated(system + tools + session.plan_call().plan.message_tokens_after)
        assert f"Next call ≈{expected:,} " in text and "calibrated" in text  # calibrated, still ≈


async def test_unknown_price_shows_no_cost(tmp_path) -> None:
    provider = ScriptedProvider(usage=USAGE, reports_usage=True)  # model "scripted": no price
    session = scripted_session(make_repo(tmp_path), [text_reply("Hi.")], provider=provider)
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "hello")
        panel = app.screen.query_one(BudgetPanel)
        assert "$" not in str(panel.query_one("#budget-title").render()) and "$" not in app.screen.sub_title
        assert "cached 12.3k" in meter_text(app)  # the cache split does not need a price
        await send(pilot, "/clear")
        assert "cached" not in meter_text(app)
