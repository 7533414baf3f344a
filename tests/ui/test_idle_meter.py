"""The idle policy's choice on the meter (`--idle`, `core/agent/idle_policy.py`): what it chose, what that costs
and what the others would have cost, and one quiet chat line when the choice changes. Real HTTP: the fake
Anthropic server with its prompt cache on a clock the test moves (no sleeping, no wall-clock assert)."""

from __future__ import annotations

from tests.fakes.fake_anthropic import FakeAnthropic, text
from tests.fakes.prompt_cache import MovingClock
from tests.providers.conftest import FAST_RETRY
from tests.providers.test_idle_policy import GONE, MODEL, Moves
from tui_agent.core.agent.idle_policy import install_idle_policy
from tui_agent.core.agent.session import Session
from tui_agent.core.idle import PRIOR
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.tools.base import ToolRegistry
from tui_agent.ui.widgets.budget_meter import BudgetMeter
from tui_agent.ui.widgets.notice_line import NoticeLine

from .support import frozen, make_app, make_repo, reading_tools, send, wait_for


def _chat(app) -> list[str]:
    return [n.text for n in app.screen.query(NoticeLine) if "idle" in n.text]


async def test_the_meter_says_the_idle_choice_and_the_chat_says_when_it_changes(tmp_path) -> None:
    clock = MovingClock()
    fake = FakeAnthropic(model=lambda body: text("Hi."), clock=clock)
    with fake:
        provider = AnthropicProvider(api_key="test-key", base_url=fake.base_url, model=MODEL, retry=FAST_RETRY)
        session = frozen(Session(provider, ToolRegistry(reading_tools()), make_repo(tmp_path)))
        session.state.clock = clock
        moves = Moves(clock)
        policy = install_idle_policy(session, "auto", prior=PRIOR, sleep=moves.sleep)
        app = make_app(session)
        async with app.run_test(size=(140, 44)) as pilot:
            meter = app.screen.query_one(BudgetMeter)
            await send(pilot, "hello")
            await wait_for(pilot, lambda: meter.idle_line, "the choice on the meter")
            line = meter.idle_line
            assert line.startswith("idle: ping ≈$0.0") and "(cheapest)" in line, line
            assert " · compact " in line and " · cold ≈$0.0" in line and " · back " in line
            assert line in str(meter.render())
            (said,) = _chat(app)  # the first choice is said once, in words, with the others' prices
            assert said.startswith("At the next idle moment the session keeps the prompt cache warm: ≈$0.0")
            moves.release()  # the moment comes: the same choice, acted on (a ping), nothing more said
            await wait_for(pilot, lambda: session.ledger.pings == 1, "the ping")
            assert len(_chat(app)) == 1 and meter.idle_line.startswith("idle: ping ")
            policy.prior = GONE  # this person, it turns out, never comes back: the next moment lets it go cold
            moves.release()
            await wait_for(pilot, lambda: meter.idle_line.startswith("idle: cold"), "the new choice")
            await wait_for(pilot, lambda: len(_chat(app)) == 2, "its chat line")
            assert _chat(app)[1].startswith("While idle the session lets the prompt cache go cold: ≈$0.0000")
            assert not any("Stopped keeping" in n.text for n in app.screen.query(NoticeLine))  # said once, above
            app.save_screenshot(str(tmp_path / "idle.svg"))
            assert session.ledger.pings == 1
    assert fake.violations == []


async def test_an_idle_compaction_is_an_event_on_the_timeline_and_in_the_chat(tmp_path) -> None:
    from tests.fakes.fake_anthropic import reader_model
    from tests.providers.test_compaction_real_sdk import make_files
    from tui_agent.ui.widgets.budget_panel import BudgetPanel

    clock = MovingClock()
    repo = make_repo(tmp_path)
    fake = FakeAnthropic(model=reader_model(make_files(repo, 4, 6_000)), clock=clock)
    with fake:
        provider = AnthropicProvider(api_key="test-key", base_url=fake.base_url, model=MODEL, retry=FAST_RETRY)
        session = frozen(Session(provider, ToolRegistry(reading_tools()), repo))
        session.state.clock = clock
        moves = Moves(clock)
        install_idle_policy(session, "compact", prior=PRIOR, sleep=moves.sleep)
        app = make_app(session)
        async with app.run_test(size=(140, 44)) as pilot:
            meter = app.screen.query_one(BudgetMeter)
            await send(pilot, "Read the modules.")
            moves.release()
            await wait_for(pilot, lambda: session.ledger.pings == 1, "the idle event's write")
            await wait_for(pilot, lambda: any("compacted while idle" in t for t in _chat(app)), "its line")
            (entry,) = session.ledger.major_events
            assert entry.event.reason.startswith("compacted while idle") and "drop" in entry.event.kinds
            (line,) = [t for t in _chat(app) if "compacted while idle" in t]
            assert line == f"{entry.event.line()}." and line.startswith("call 6 · compacted while idle, before the")
            panel = app.screen.query_one(BudgetPanel)
            assert panel._pending_event is None  # on the timeline once, not again as the next call's
            figures = meter.meter  # the next call reads what the idle write cached: all but its new prompt
            assert figures.call is None and figures.cached >= figures.total - 50, (figures.cached, figures.total)
            assert meter.idle_line.startswith("idle: compact ≈$") and meter.idle_line in str(meter.render())
    assert fake.violations == []


async def test_resume_in_a_running_tui_shows_the_resumed_sessions_idle_choice(tmp_path) -> None:
    """`/resume` in a running TUI restored the ledger's idle choice but the meter kept the old session's line
    until the next choice; now it shows the resumed session's at once (and none when it had none)."""
    from tui_agent.core.journal.reader import read_journal
    from tui_agent.core.journal.writer import journal_of, start_journal
    from tui_agent.ui.session_actions import resume_load

    clock = MovingClock()
    fake = FakeAnthropic(model=lambda body: text("Hi."), clock=clock)
    environ = {"TUI_AGENT_DATA_DIR": str(tmp_path / "data")}
    with fake:
        provider = AnthropicProvider(api_key="test-key", base_url=fake.base_url, model=MODEL, retry=FAST_RETRY)
        old = frozen(Session(provider, ToolRegistry(reading_tools()), make_repo(tmp_path)))
        old.state.clock = clock
        start_journal(old, environ=environ)
        moves = Moves(clock)
        install_idle_policy(old, "ping", prior=PRIOR, sleep=moves.sleep)
        from tests.providers.conftest import run

        await run(old, "hello")
        moves.release()
        from tests.waiting import wait_until

        await wait_until(lambda: old.ledger.idle is not None and not old.ledger.idle.ahead, what="the choice")
        journal_of(old).close()
        await old.aclose()
        load = read_journal(journal_of(old).path)
        assert load.idle is not None and load.idle.choice == "ping"

        session = frozen(Session(AnthropicProvider(api_key="test-key", base_url=fake.base_url, model=MODEL,
                                                   retry=FAST_RETRY), ToolRegistry(reading_tools()), tmp_path))
        session.state.clock = clock
        install_idle_policy(session, "cold", prior=PRIOR, sleep=Moves(clock).sleep)
        app = make_app(session)
        async with app.run_test(size=(140, 44)) as pilot:
            meter = app.screen.query_one(BudgetMeter)
            await send(pilot, "hi there")
            await wait_for(pilot, lambda: meter.idle_line.startswith("idle: cold"), "this session's own choice")
            await resume_load(app.screen, load)
            await pilot.pause()
            assert meter.idle_line == load.idle.line and meter.idle_line.startswith("idle: ping"), meter.idle_line
    assert fake.violations == []
