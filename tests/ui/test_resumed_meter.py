"""A resumed session's budget panel (issue 28): the calls, their cache split and the compaction events
come back from the journal into the ledger, so the meter after `--continue` says what it said before the
quit (not "calls: none yet", not a next call priced as if nothing were cached)."""

from __future__ import annotations

from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.resume import resume_journaled
from tui_agent.core.journal.writer import journal_of, start_journal, stop_journal
from tui_agent.core.providers.base import UsageInfo
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply
from tui_agent.ui.widgets.budget_panel import BudgetPanel

from .support import make_app, make_repo, scripted_session, send


def provider() -> ScriptedProvider:
    return ScriptedProvider(model="claude-sonnet-4-5-20250929",
                            usage=UsageInfo(input_tokens=40, output_tokens=12, cache_creation_input_tokens=300,
                                            cache_read_input_tokens=1_500))


async def test_a_resumed_session_shows_its_calls_cache_split_and_events(tmp_path) -> None:
    repo = make_repo(tmp_path)
    replies = [tool_reply("Read", {"file_path": "src/app.py"}, "toolu_1", "Reading."), text_reply("Read it."),
               text_reply("Still here.")]
    session = scripted_session(repo, replies, provider=provider())
    start_journal(session)
    app = make_app(session)
    async with app.run_test(size=(140, 45)) as pilot:
        await send(pilot, "read the app")
        await send(pilot, "and now?")
        panel = app.screen.query_one(BudgetPanel)
        before = panel.ledger
        calls, events, cost = dict(before.calls), len(before.major_events), before.cost
        preview = before.current
        spark = str(panel.query_one("#budget-spark").render())
    path = journal_of(session).path
    stop_journal(session)
    assert len(calls) == 3 and preview is not None and preview.call is None

    again = scripted_session(repo, [], provider=provider())
    notices = resume_journaled(again, read_journal(path))[1]
    app = make_app(again, startup_notices=notices, resumed=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        panel = app.screen.query_one(BudgetPanel)
        ledger = panel.ledger
        assert ledger.calls == calls and ledger.exact_calls == set(calls)
        assert len(ledger.major_events) == events and abs(ledger.cost - cost) < 1e-12
        now = ledger.current
        assert now is not None and now.call is None
        assert (now.cached, now.new) == (preview.cached, preview.new)  # the split as it was before the quit
        assert str(panel.query_one("#budget-spark").render()) == spark
        assert "calls: none yet" not in spark


async def test_a_resumed_session_counts_its_compaction_events(tmp_path) -> None:
    from tests.ui.test_panel_plan import planned_session

    prompts = ("what does the handler do?", "explain the models")

    repo = make_repo(tmp_path)
    session = planned_session(repo)
    start_journal(session)
    app = make_app(session)
    async with app.run_test(size=(140, 45)) as pilot:
        for prompt in prompts:
            await send(pilot, prompt)
        before = app.screen.query_one(BudgetPanel).ledger
        events, event_calls = before.event_count, set(before.event_calls)
        calls = len(before.calls)
    path = journal_of(session).path
    stop_journal(session)
    assert events > 0  # the small window made events

    again = planned_session(repo)
    notices = resume_journaled(again, read_journal(path))[1]
    app = make_app(again, startup_notices=notices, resumed=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        panel = app.screen.query_one(BudgetPanel)
        assert panel.ledger.event_count == events and panel.ledger.event_calls == event_calls
        assert len(panel.ledger.calls) == calls
        listed = [str(text) for text in panel.events._texts]
        assert [line for line in listed if "(before the resume)" in line] == [
            f"{words} (before the resume)" for _, words in panel.ledger.earlier_events[-len(listed):]]
