"""The watch TUI parses and replays off the UI thread: the follower's batches are fed in a worker
thread (`core.watch_feed.WatchFeed`) and only their results reach the screen, as messages. While a
large chunk is being processed the app keeps answering keys, and every call still appears once, in order."""

from __future__ import annotations

import threading
from tests.shared import SMALL_LOG
from tests.waiting import wait_until
from tui_agent.core.recordings.strategy_table import default_policy
from tui_agent.core.recordings.recorded import recorded_transcript
from tui_agent.core.recordings.transcripts import parse_transcript
from tui_agent.core.recordings.watch import FIT_CALLS
from tui_agent.core.recordings.watch_feed import CallsView, WatchFeed
from tui_agent.ui.watch_app import WatchApp
from tui_agent.faces.watch import LogSource

SMALL = SMALL_LOG  # the small real log, else the long synthetic one (tests/shared.py)


def watch_app(log) -> WatchApp:
    """The watch TUI on `log` (no --latest, no --all), with no animation and no durations on screen."""
    app = WatchApp(LogSource(log, False, False), log, default_policy(), session_label="test", show_durations=False)
    app.animation_level = "none"
    return app


async def all_calls_in(screen, total: int) -> None:
    await wait_until(lambda: screen.replay is not None and screen.replay.calls == total,
                     what=f"{total} calls", timeout=60, shown=lambda: screen.sub_title)


def _calls_in(data: bytes) -> int:
    lines = data.decode("utf-8", errors="replace").split("\n")[:-1]
    return len(recorded_transcript(parse_transcript(lines), "x", FIT_CALLS).calls)


async def test_batches_are_fed_off_the_ui_thread_and_keys_are_answered_meanwhile(tmp_path, monkeypatch):
    data = SMALL.read_bytes()
    first = data[: len(data) // 2]
    first = first[: first.rindex(b"\n") + 1]
    log = tmp_path / "live.jsonl"
    log.write_bytes(b"")
    feeders: list[threading.Thread] = []
    inside, release = threading.Event(), threading.Event()
    real_feed = WatchFeed.feed

    def feed(self, batch, progress=None, *args):
        feeders.append(threading.current_thread())
        if batch.lines and not release.is_set():
            inside.set()  # a large chunk is being processed: hold it until the test lets go
            release.wait(timeout=120)
        return real_feed(self, batch, progress, *args)

    applied: list[tuple[int, list[int], list[int]]] = []  # (generation, step numbers, figure numbers)
    real_apply = CallsView.apply

    def apply(self, arrival):
        applied.append((arrival.generation, [s.number for s in arrival.steps], [f.call for f in arrival.figures]))
        return real_apply(self, arrival)

    monkeypatch.setattr(WatchFeed, "feed", feed)
    monkeypatch.setattr(CallsView, "apply", apply)
    app = watch_app(log)
    async with app.run_test(size=(150, 45)) as pilot:
        screen = app.screen
        log.write_bytes(first)
        await wait_until(inside.is_set, what="the worker holding the first chunk")
        await pilot.press("f2")  # answered while the worker is busy: the panel hides
        await pilot.pause()
        assert screen.has_class("-panel-hidden")
        await pilot.press("f2")
        await pilot.pause()
        assert not screen.has_class("-panel-hidden")
        assert screen.replay is None and not applied  # nothing of the chunk reached the screen yet
        release.set()
        await wait_until(lambda: screen.replay is not None and screen.replay.calls == _calls_in(first),
                         what="the first chunk's calls", timeout=60, shown=lambda: screen.sub_title)
        rest = data[len(first):]
        for i in range(1, 5):  # the rest in pieces cut mid-line
            with open(log, "ab") as handle:
                handle.write(rest[len(rest) * (i - 1) // 4: len(rest) * i // 4])
        total = _calls_in(data)
        await wait_until(lambda: screen.replay is not None and screen.replay.calls == total,
                         what=f"{total} calls", timeout=60, shown=lambda: screen.sub_title)
        await pilot.pause()
        assert screen.current == total - 1 and screen.following
        assert [s.number for s in screen.view.steps] == list(range(1, total + 1))
        assert [f.call for f in screen.view.figures] == list(range(1, total + 1))
    assert feeders and all(t is not threading.main_thread() for t in feeders)
    # once the ruler is fixed every call arrives once, in order, in one generation
    last = applied[-1][0]
    numbers = [n for generation, steps, _ in applied if generation == last for n in steps]
    assert numbers == list(range(1, total + 1))
    assert all(steps == figures for _, steps, figures in applied)


async def test_an_old_call_whose_request_was_let_go_is_made_again_and_shown(tmp_path, monkeypatch):
    from tui_agent.core.recordings import watch_feed
    from tui_agent.ui.widgets.replay_card import ReplayCard

    monkeypatch.setattr(watch_feed, "KEEP_REQUESTS", 3)
    log = tmp_path / "live.jsonl"
    log.write_bytes(SMALL.read_bytes())
    total = _calls_in(log.read_bytes())
    app = watch_app(log)
    async with app.run_test(size=(150, 45)) as pilot:
        screen = app.screen
        await all_calls_in(screen, total)
        old = next(k for k in range(total) if not screen.view.held(k))
        await pilot.press("g", *str(old + 1), "enter")
        await wait_until(lambda: screen.view.held(old) and str(screen.query_one(ReplayCard).render()).startswith(
            f"Call {old + 1} of {total}"), what=f"call {old + 1} made again and shown", timeout=60,
            shown=lambda: screen.sub_title)
        assert screen.current == old and not screen.following
        assert screen.panel.shown_upto == screen.view.step(old).history_len


async def test_a_long_log_read_at_once_shows_progress_while_its_calls_are_made(tmp_path, monkeypatch):
    from tui_agent.ui.screens import watch as watch_screen

    monkeypatch.setattr(watch_screen, "PROGRESS_AFTER", 0.0)  # every batch counts as long: no clock in the test
    seen: list[str] = []
    real = watch_screen.WatchScreen.on_feed_progress

    def on_feed_progress(self, message):
        real(self, message)
        seen.append(self.last_progress)
        assert self.query_one("#replay-progress").has_class("-active")

    monkeypatch.setattr(watch_screen.WatchScreen, "on_feed_progress", on_feed_progress)
    log = tmp_path / "live.jsonl"
    log.write_bytes(SMALL.read_bytes())
    total = _calls_in(log.read_bytes())
    app = watch_app(log)
    async with app.run_test(size=(150, 45)) as pilot:
        screen = app.screen
        await all_calls_in(screen, total)
        await pilot.pause()
        assert not screen.query_one("#replay-progress").has_class("-active")  # gone once the calls are in
    assert seen and seen[0] == f"replaying call 10/{total}…" and all(s.endswith(f"/{total}…") for s in seen)
