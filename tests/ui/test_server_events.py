"""What the server did on its own, in the TUI: a response that reports cleared tool uses and one that
carries a compaction block show as lines of the panel's events list and the chat (real SDK, fake API)."""

from __future__ import annotations

from tests.fakes.fake_anthropic import reader_model
from tests.fakes.fake_context import SUMMARY, FakeContextAnthropic
from tests.providers.test_compaction_real_sdk import make_files, session_on
from tui_agent.core import events as ev
from tui_agent.core.compaction import CompactPolicy
from tui_agent.ui.widgets.events_list import EventsList
from tui_agent.ui.widgets.notice_line import NoticeLine

from .support import make_app, send


def _lines(app) -> list[str]:
    events = app.screen.query_one(EventsList)
    return [str(events.get_option_at_index(i).prompt) for i in range(events.option_count)]


def _notices(app) -> list[str]:
    return [str(n.render()) for n in app.screen.query(NoticeLine)]


async def test_cleared_tool_uses_show_in_the_events_list_and_the_chat(tmp_path):
    names = make_files(tmp_path, 8, 6_000)
    fake = FakeContextAnthropic(model=reader_model(names))
    with fake:
        policy = CompactPolicy(high_water=4_000.0, low_water=2_000.0)
        session = session_on(fake, tmp_path, 100_000, 20, compact_mode="server-clear", compact_policy=policy)
        app = make_app(session)
        async with app.run_test(size=(160, 45)) as pilot:
            await send(pilot, "Read the modules.")
            lines = _lines(app)
            notices = _notices(app)
        await session.aclose()
    assert fake.violations == []
    cleared = [line for line in lines if "server cleared" in line]
    assert cleared and "tool uses" in cleared[-1]
    assert any("server cleared" in n for n in notices)
    # what the server did, and the cache miss its first clearing caused (it moved the prefix): nothing else
    assert all(isinstance(e, ev.ServerEdited) or e.reason == "server_edit" for e in session.ledger.server_events)
    assert sum(isinstance(e, ev.ServerEdited) for e in session.ledger.server_events) == 1  # one clearing, one line
    assert len(cleared) == 1 and sum("server cleared" in n for n in notices) == 1


async def test_a_compaction_block_shows_with_its_own_usage(tmp_path):
    names = make_files(tmp_path, 14, 16_000)
    fake = FakeContextAnthropic(model=reader_model(names))
    with fake:
        session = session_on(fake, tmp_path, 200_000, 20, compact_mode="server-compact")
        session.compactor.trigger_tokens = 50_000
        app = make_app(session)
        async with app.run_test(size=(160, 45)) as pilot:
            await send(pilot, "Read the modules.")
            lines = _lines(app)
        await session.aclose()
    assert fake.violations == [] and fake.compactions >= 1
    compacted = [line for line in lines if "server compacted" in line]
    assert compacted and "its own call:" in compacted[0]
    kept = [m for m in session.history if m["role"] == "assistant" and m["content"][0].get("type") == "compaction"]
    assert kept and kept[0]["content"][0]["content"] == SUMMARY


async def test_context_shows_what_server_clear_would_send_beside_our_count(tmp_path):
    from tui_agent.ui.widgets.budget_meter import BudgetMeter

    names = make_files(tmp_path, 8, 6_000)
    fake = FakeContextAnthropic(model=reader_model(names))
    with fake:
        policy = CompactPolicy(high_water=4_000.0, low_water=2_000.0)
        session = session_on(fake, tmp_path, 100_000, 20, compact_policy=policy)  # our own strategy (v2)
        app = make_app(session)
        async with app.run_test(size=(160, 45)) as pilot:
            await send(pilot, "Read the modules.")
            await send(pilot, "/context")
            shown = str(app.screen.query_one(BudgetMeter).exact)
        await session.aclose()
    assert fake.violations == []
    assert "(count_tokens)" in shown and "server-clear would send" in shown and "cleared" in shown


async def test_a_miss_our_own_event_caused_is_in_the_events_list_not_again_in_the_chat(tmp_path):
    names = make_files(tmp_path, 8, 6_000)
    fake = FakeContextAnthropic(model=reader_model(names))
    with fake:
        policy = CompactPolicy(high_water=4_000.0, low_water=2_000.0)
        session = session_on(fake, tmp_path, 100_000, 20, compact_policy=policy)
        app = make_app(session)
        async with app.run_test(size=(160, 45)) as pilot:
            await send(pilot, "Read the modules.")
            lines, notices = _lines(app), _notices(app)
        await session.aclose()
    assert any("our compaction rewrote from message" in line for line in lines)
    assert not any("cache missed" in n for n in notices)
