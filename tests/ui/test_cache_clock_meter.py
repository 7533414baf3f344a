"""The meter's cache clock line: shown after a call that reported usage, cold once the TTL has passed."""

from __future__ import annotations

from tui_agent.core.providers.scripted import ScriptedProvider, text_reply
from tui_agent.ui.widgets.budget_meter import BudgetMeter

from .support import make_app, make_repo, scripted_session, send
from .test_panel_usage import MODEL, USAGE


async def test_the_meter_says_when_the_cache_goes_cold(tmp_path) -> None:
    provider = ScriptedProvider(model=MODEL, usage=USAGE, reports_usage=True)
    session = scripted_session(make_repo(tmp_path), [text_reply("Hi.")], provider=provider)
    app = make_app(session, show_durations=True)
    async with app.run_test(size=(120, 40)) as pilot:
        meter = app.screen.query_one(BudgetMeter)
        assert meter.clock_line == ""  # no call yet
        await send(pilot, "hello")
        assert meter.clock_line.startswith("cache warm ") and "(5-min TTL)" in meter.clock_line
        assert "writes ≈" in meter.clock_line and "$" in meter.clock_line  # a priced model
        since, price, per_token = meter._clock
        meter._clock = (since - 400, price, per_token)  # as if the user had been away for 400 s
        meter._tick()
        await pilot.pause()
        assert meter.clock_line.startswith("cache cold (idle 6:4") and "again" in meter.clock_line
        assert meter.clock_line in str(meter.render())


async def test_no_clock_where_durations_are_hidden(tmp_path) -> None:
    provider = ScriptedProvider(model=MODEL, usage=USAGE, reports_usage=True)
    session = scripted_session(make_repo(tmp_path), [text_reply("Hi.")], provider=provider)
    app = make_app(session)  # show_durations=False, as in every snapshot
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "hello")
        assert app.screen.query_one(BudgetMeter).clock_line == ""


async def test_a_call_the_api_cached_nothing_of_shows_no_warm_clock(tmp_path) -> None:
    from tui_agent.core.providers.base import UsageInfo

    usage = UsageInfo(input_tokens=14_000, output_tokens=50)  # no cache read, no cache write
    provider = ScriptedProvider(model=MODEL, usage=usage, reports_usage=True)
    session = scripted_session(make_repo(tmp_path), [text_reply("Hi.")], provider=provider)
    app = make_app(session, show_durations=True)
    async with app.run_test(size=(120, 40)) as pilot:
        meter = app.screen.query_one(BudgetMeter)
        await send(pilot, "hello")
        assert meter.clock_line.startswith("nothing cached: the API reported no cache write"), meter.clock_line
        assert "uncached" in meter.clock_line and "$" in meter.clock_line


async def test_the_clock_names_why_the_last_call_missed(tmp_path) -> None:
    from tui_agent.core import events as ev

    provider = ScriptedProvider(model=MODEL, usage=USAGE, reports_usage=True)
    session = scripted_session(make_repo(tmp_path), [text_reply("Hi.")], provider=provider)
    app = make_app(session, show_durations=True)
    async with app.run_test(size=(120, 40)) as pilot:
        meter = app.screen.query_one(BudgetMeter)
        await send(pilot, "hello")
        call = session.ledger.usage.call
        session.ledger.feed(ev.CacheMissed(call, 9_000, 1_000, "system_changed", "api"))
        app.screen.query_one("BudgetPanel").on_server(session.ledger.server_events[-1])
        await pilot.pause()
        assert meter.clock_line.startswith("last call missed 8,000 tok (the API says: the system prompt changed)")
        assert "cache warm" in meter.clock_line
