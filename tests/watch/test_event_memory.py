"""The watch's memory does not grow with the number of our compaction events (issue 20 item 5): the view
holds a constant number of our requests in full however many events and recorded compactions the log has.
An event's call and the call before it, and the calls after a recorded compaction, are let go like any
other old call; what the card and the panel read of them without being asked stays (the event, its line,
the sizes), and what they read when asked is made again and equals a fresh replay of the finished file.
The coverage after a recorded compaction keeps its calls' entity sets only, narrowed once final, and
comes out as with the requests themselves."""

from __future__ import annotations

import json
from dataclasses import replace

from tests.replay.jsonl import Log, rounds
from tests.waiting import wait_until
from tui_agent.core.recordings import watch_feed
from tui_agent.core.agent.budget import EventEntry
from tui_agent.core.recordings.strategy_table import default_policy as window_policy
from tui_agent.core.recordings.follow import Batch
from tui_agent.core.recordings.forgot import coverage_after
from tui_agent.core.messages import to_json
from tui_agent.core.recordings.replay import open_replay
from tui_agent.core.recordings.replay_json import step_json
from tui_agent.core.recordings.watch import FIT_CALLS
from tui_agent.core.recordings.watch_feed import CallsView, WatchFeed

STRATEGIES = ("none", "v2")
WINDOW = 30_000  # a small window: our compactor makes an event every ten calls or so
KEEP = 5


def default_policy(window: int):
    """The window's policy at compaction 4's marks (60 % / 10 %): events often enough to hold many."""
    return replace(window_policy(window), high_water=0.6, low_water=0.1)
BEFORE, AFTER = 40, 80  # rounds before and after the recorded agent's own compaction


def _log(path):
    """Rounds, Claude Code's own compaction (boundary + summary), rounds again: many of our events."""
    log = Log().user("Read every file, please.")
    rounds(log, BEFORE, size=3_000, prefix="a")
    log.record(type="system", subtype="compact_boundary", content="Conversation compacted", parentUuid=None,
               compactMetadata={"trigger": "auto", "preTokens": 155_554})
    log.user("This session is being continued from a previous conversation that ran out of context. "
             "Summary: read src/file0.py to src/file9.py.", isCompactSummary=True, isVisibleInTranscriptOnly=True)
    rounds(log, AFTER, size=3_000, prefix="b")
    log.write(path)
    return log.lines


def _requests(view: CallsView) -> int:
    return sum(1 for s in view.steps if s.messages)


def _ours_coverage(replay, compaction):
    """The coverage after `compaction` from a replay's own requests (every step made, none let go)."""
    upto = min(compaction.call - 1 + watch_feed.COVERAGE_CALLS, replay.calls)
    recorded = replay.recorded
    return coverage_after(replay.history, recorded.calls, recorded.segment_start, compaction.call,
                          [replay.step(j).messages for j in range(upto)])


def test_the_view_holds_a_constant_number_of_requests_however_many_events(tmp_path, monkeypatch):
    monkeypatch.setattr(watch_feed, "KEEP_REQUESTS", KEEP)
    path = tmp_path / "events.jsonl"
    lines = _log(path)
    feed = WatchFeed(path, default_policy(WINDOW), STRATEGIES)
    view = CallsView(path)
    originals = {}
    for at in range(0, len(lines), 5):
        arrival = feed.feed(Batch(lines=lines[at:at + 5]))
        if arrival is None:
            continue
        view.apply(arrival)
        originals.update({s.number - 1: (json.dumps([to_json(m) for m in s.messages]), s.event_line)
                          for s in arrival.steps})
        assert sum(map(view.held, range(view.calls))) <= KEEP and _requests(view) <= KEEP
        assert len(view._entities) - len(view._narrowed) <= 2 * watch_feed.COVERAGE_CALLS  # sets not yet narrowed
        assert len(view._indexes) <= 1  # the entity index of the compaction whose calls are arriving
    total = BEFORE + AFTER
    assert view.calls == total and not view._indexes
    events = [k for k, s in enumerate(view.steps) if s.event_line]
    assert len(events) >= 10 and events[0] < total - KEEP  # many events, most of them let go
    for k in events:  # the event and its line stay on the slim step (the events list, `]`/`[`, `g e3`)
        assert view.step(k).event_line == originals[k][1] and view.step(k).plan.event is not None
    assert [k for k, _ in view.event_calls() if _ == "ours"] == events
    # an old event's call and the one before it, made again: the requests they had
    old = events[0]
    view.wanted = {old - 1, old}  # as the screen asks before it opens the event
    for k in (old - 1, old):
        assert not view.held(k)
        again = feed.remake(view.generation, k)
        assert again is not None and view.restore(view.generation, again) and view.held(k)
        assert json.dumps([to_json(m) for m in view.step(k).messages]) == originals[k][0]
    view.wanted = set()  # the event is open: its calls go at the next `let_go` (an arrival, or the screen's)
    view.let_go()
    assert not view.held(old - 1) and not view.held(old) and _requests(view) <= KEEP
    # the coverage after the recorded compaction, from the kept sets, equals the one from the requests
    whole = open_replay(path, STRATEGIES, default_policy(WINDOW), fit_calls=FIT_CALLS)
    compaction = whole.agent_compactions[0]
    first = compaction.call - 1
    assert all(not view.held(j) for j in range(first, first + watch_feed.COVERAGE_CALLS))
    sets = [view.coverage_request(j) if j >= first else frozenset() for j in range(first + watch_feed.COVERAGE_CALLS)]
    assert all(sets[j] is not None for j in range(first, len(sets)))
    assert set(range(first, first + watch_feed.COVERAGE_CALLS)) <= view._narrowed
    kept = coverage_after(view.history, view.recorded.calls, view.recorded.segment_start, compaction.call, sets)
    assert kept == _ours_coverage(whole, compaction) and kept.calls == tuple(range(first + 1, first + 11))
    assert 0 < kept.ours.wanted


async def test_an_old_event_is_shown_and_explained_as_a_fresh_replay_of_the_finished_file(tmp_path, monkeypatch):
    """The TUI (Pilot): a log written in pieces, the view and the panel's ledger hold a constant number of
    requests; `g` to an old event's call shows what a fresh replay shows, its event view (Enter on the
    events list) the same loss report and diff, the recorded compaction's card the same coverage."""
    from textual.widgets import Static

    from tests.watch.test_watch_worker import all_calls_in
    from tui_agent.core.sanitize import strip_controls
    from tui_agent.ui.screens.event_view import EventScreen, loss_report_text
    from tui_agent.ui.watch_app import WatchApp
    from tui_agent.ui.widgets.replay_card import ReplayCard, card_content
    from tui_agent.ui.widgets.watch_card import WatchCard, watch_content
    from tui_agent.faces.watch import LogSource

    monkeypatch.setattr(watch_feed, "KEEP_REQUESTS", KEEP)
    source = tmp_path / "source.jsonl"
    lines = _log(source)
    data = source.read_bytes()
    log = tmp_path / "live.jsonl"
    log.write_bytes(b"")
    total = BEFORE + AFTER
    policy = default_policy(WINDOW)
    app = WatchApp(LogSource(log, False, False), log, policy, session_label="test", show_durations=False)
    app.animation_level = "none"
    async with app.run_test(size=(150, 45)) as pilot:
        screen = app.screen
        ledger = screen.panel.ledger
        for i in range(1, 9):  # in pieces cut mid-line
            with open(log, "ab") as handle:
                handle.write(data[len(data) * (i - 1) // 8: len(data) * i // 8])
            await wait_until(lambda: screen.replay is not None and screen.view.calls >= total * i // 10,
                             what="the piece's calls", timeout=60, shown=lambda: screen.sub_title)
            await pilot.pause()
            held = {id(e.messages) for e in ledger.events if e.messages}
            held |= {id(e.previous_messages) for e in ledger.events if e.previous_messages}
            assert len(held) <= KEEP + 1 and _requests(screen.view) <= KEEP + 1  # + the call shown
        await all_calls_in(screen, total)
        await pilot.pause()
        assert len(lines) and len(ledger.major_events) >= 10
        whole = open_replay(log, STRATEGIES, policy, fit_calls=FIT_CALLS)
        for k in range(total):  # the finished file replayed to its end: every event of ours is known
            whole.step(k)
        view = screen.view
        # an old event that dropped messages (its loss report shows the recap kept), both calls let go
        old = next(k for k, s in enumerate(view.steps) if s.event_line and s.plan.drop_until > s.plan.drop_from
                   and not view.held(k) and not view.held(k - 1))

        # stepping to the old event's call: made again, then shown as the fresh replay shows it
        await pilot.press("g", *str(old + 1), "enter")
        await wait_until(lambda: view.held(old) and screen.current == old and str(
            screen.query_one(ReplayCard).render()).startswith(f"Call {old + 1} of {total}"),
            what=f"call {old + 1} made again and shown", timeout=60, shown=lambda: screen.sub_title)
        await pilot.pause()
        fresh = whole.step(old)
        assert step_json(view, view.step(old)) == step_json(whole, fresh)
        assert view.step(old).messages == fresh.messages
        assert str(screen.query_one(ReplayCard).render()) == str(card_content(whole, fresh))
        assert screen.panel.rows.view is not None and screen.panel.rows.view.messages == fresh.messages

        # its event view: the call before it is made again too, and the report is the fresh replay's
        events = screen.panel.events
        position = next(i for i, e in enumerate(events.entries) if e is not None and e.event.call == old + 1)
        events.take_focus()
        events.highlighted = position
        await pilot.press("enter")
        await wait_until(lambda: isinstance(app.screen, EventScreen), what="the event view", timeout=60)
        rows = screen.panel.index.rows

        def describe(i: int) -> str:
            return rows[i].what if 0 <= i < len(rows) else ""

        now, before = whole.reported(whole.step(old)), whole.reported(whole.step(old - 1))
        expected = EventEntry(now.plan.event, now.plan, now.messages, before.plan, before.messages)
        shown = str(app.screen.query_one("#event-text", Static).render())
        assert shown == strip_controls(loss_report_text(expected, describe))
        assert f"Request diff against call {old}" in shown and "The recap kept" in shown
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        screen.set_focus(None)  # the keys are the screen's again (the events list had the keyboard)

        # the recorded compaction's call: its coverage from the kept sets is the one from the requests
        compaction = whole.agent_compactions[0]
        first = compaction.call - 1
        assert not any(view.held(j) for j in range(first + 1, first + watch_feed.COVERAGE_CALLS))
        await pilot.press("g", *str(compaction.call), "enter")
        await wait_until(lambda: screen.current == first and view.held(first), what="the compaction's call",
                         timeout=60, shown=lambda: screen.sub_title)
        await pilot.pause()
        card = str(screen.query_one(WatchCard).render())
        assert card == str(watch_content(screen.figures_at(first), _ours_coverage(whole, compaction)))
        assert "coverage  calls" in card

        # a set that was not kept (its request let go first): the calls are made again and it comes out the same
        screen.show_call(total - 1)
        for j in range(first, first + watch_feed.COVERAGE_CALLS):
            view._entities.pop(j, None)
        assert view.coverage_request(first + 1) is None
        screen.show_call(first)
        await wait_until(lambda: "coverage  calls" in str(screen.query_one(WatchCard).render()),
                         what="the coverage drawn again", timeout=60, shown=lambda: screen.sub_title)
        assert str(screen.query_one(WatchCard).render()) == card
        # browsing the finished log (no arrival to let go at) gathered no requests: the newest and the one shown
        assert sum(map(view.held, range(total))) <= KEEP + 1 and _requests(view) <= KEEP + 1
        held = {id(m) for e in ledger.events for m in (e.messages, e.previous_messages) if m}
        assert len(held) <= KEEP + 1
