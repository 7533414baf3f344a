"""The watch's memory stays bounded over a long log (structurally: what it keeps, not a byte count —
bench/bench_watch_memory.py prints tracemalloc's figures over 10,000 calls): the live replay keeps a few
steps and a bounded number of checkpoints, the screen's view every call's figures but our request in full
only for the newest calls (and the one shown); a request let go is made again with the same figures."""

from __future__ import annotations

import json

from tests.replay.jsonl import Log, rounds
from tui_agent.core.recordings import watch, watch_feed
from tui_agent.core.recordings.follow import Batch
from tui_agent.core.messages import to_json
from tui_agent.core.recordings.replay_json import step_json
from tui_agent.core.recordings.watch_feed import CallsView, WatchFeed

CALLS = 120


def _log(tmp_path):
    log = Log().user("Read every file, please.")
    rounds(log, CALLS, size=1_400)
    return tmp_path / "long.jsonl", log.lines


def test_the_live_replay_keeps_a_few_steps_and_bounded_checkpoints(tmp_path, monkeypatch):
    monkeypatch.setattr(watch, "MAX_CHECKPOINTS", 3)
    path, lines = _log(tmp_path)
    live = watch.LiveReplay(path, strategies=("none", "v2"))
    handed = []
    for at in range(0, len(lines), 9):
        live.feed(Batch(lines=lines[at:at + 9]))
        handed += live.ready()
        assert len(live.replay._kept) <= watch.KEEP_STEPS and len(live.replay._checkpoints) <= 3
    handed += live.flush()
    assert [s.number for s in handed] == list(range(1, CALLS + 1)) and live.restarts == 0


def test_the_view_lets_old_requests_go_and_gets_them_made_again(tmp_path, monkeypatch):
    monkeypatch.setattr(watch_feed, "KEEP_REQUESTS", 10)
    path, lines = _log(tmp_path)
    feed = WatchFeed(path, None, ("none", "v2"))
    view = CallsView(path)
    originals, originals_plan = {}, {}
    for at in range(0, len(lines), 7):
        arrival = feed.feed(Batch(lines=lines[at:at + 7]))
        if arrival is not None:
            view.apply(arrival)
            originals.update({s.number - 1: (json.dumps([to_json(m) for m in s.messages]), step_json(view, s))
                              for s in arrival.steps})
            originals_plan.update({s.number - 1: s.plan.estimated_tokens for s in arrival.steps})
        held = sum(view.held(k) for k in range(view.calls))
        assert held <= 10  # the newest only: an event's calls go like any other (tests/watch/test_event_memory.py)
    assert view.calls == CALLS and [f.call for f in view.figures] == list(range(1, CALLS + 1))
    old = next(k for k in range(view.calls) if not view.held(k))
    assert view.step(old).messages == [] and view.step(old).plan.outbound_indices == ()
    assert view.step(old).plan.estimated_tokens == originals_plan[old]  # what the panel's ledger reads stays
    again = feed.remake(view.generation, old)
    assert again is not None and view.restore(view.generation, again) and view.held(old)
    messages, figures = originals[old]
    assert json.dumps([to_json(m) for m in view.step(old).messages]) == messages
    assert step_json(view, again) == figures
    assert feed.remake(view.generation + 1, old) is None  # a generation that is gone


def test_the_live_replays_runs_keep_no_per_call_list(tmp_path):
    """The per-call compaction times and prices are what a report reads; a watch never reports, so its
    runs keep none (they grew by a few hundred bytes a call for as long as the watch ran)."""
    path, lines = _log(tmp_path)
    live = watch.LiveReplay(path, strategies=("none", "v2"))
    for at in range(0, len(lines), 9):
        live.feed(Batch(lines=lines[at:at + 9]))
        live.ready()
    live.flush()
    assert live.replay.made == CALLS
    for run in live.replay._runs.values():
        assert run.result.per_call == [] and run.result.times == [] and run.result.calls == CALLS


def test_the_views_per_call_values_carry_no_instance_dict(tmp_path):
    """A view keeps a step and its figures for every call the log has (the calls list shows them all), so
    each of those values is a slotted one: no dict per step, per strategy's cost, per estimate or per row of
    figures (about a kilobyte a call between them, for as long as the watch runs)."""
    path, lines = _log(tmp_path)
    feed = WatchFeed(path, None, ("none", "v2"))
    view = CallsView(path)
    for at in range(0, len(lines), 11):
        arrival = feed.feed(Batch(lines=lines[at:at + 11]))
        if arrival is not None:
            view.apply(arrival)
    assert view.calls == CALLS
    kept = [*view.steps, *view.figures, *(s.estimate for s in view.steps),
            *(cost for s in view.steps for cost in s.costs.values())]
    assert len(kept) == CALLS * 5 and not [v for v in kept if hasattr(v, "__dict__")]


def test_a_growths_new_messages_are_measured_once_by_the_load(tmp_path, monkeypatch):
    """A watch's load measures each new message (`Recorded.estimates`); the runs pricing the requests
    take those sizes instead of measuring the same messages again (a few percent of a call's CPU)."""
    from types import SimpleNamespace

    from tui_agent.core import tokens as tk
    from tui_agent.core.recordings import replay_checks

    measured: list[dict] = []  # (kept alive: an id is never another's)

    def counting(message):
        measured.append(message)
        return tk.message_tokens(message)

    monkeypatch.setattr(replay_checks, "tk", SimpleNamespace(message_tokens=counting))
    path, lines = _log(tmp_path)
    live = watch.LiveReplay(path, strategies=("none", "v2"))
    for at in range(0, len(lines), 9):
        live.feed(Batch(lines=lines[at:at + 9]))
        live.ready()
    live.flush()
    history = {id(m) for m in live.replay.history}
    assert live.replay.made == CALLS and not [m for m in measured if id(m) in history]
