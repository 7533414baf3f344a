"""Issue 27 (watch): a log growing fast, a log far ahead, a path flipped to `/dev/zero` or to a FIFO.

The follower reads a capped amount per poll and says how much is left; every (re)open checks that the path
holds a regular file and never blocks; the live replay makes its calls a few at a time, asking its stop
flag before each; and a real `tui-agent watch --json` far behind a 20,000-call log obeys SIGTERM (exit 0)
instead of working through the backlog first. The time it takes is measured in `bench/bench_watch_rate.py`,
not asserted here (the waits are bounded safety nets)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from tests.waiting import wait_until_sync
from tests.watch.fast_log import FastWriter, log_text, write_log
from tui_agent.core.recordings.strategy_table import default_policy
from tui_agent.core.recordings.follow import Follower
from tui_agent.core.recordings.watch import LiveReplay
from tui_agent.faces.watch import WATCH_STRATEGIES


def _in_thread(work, timeout: float = 10.0):
    """Run `work()` in a daemon thread; its result, or a failure if it did not return (it hung)."""
    out: list = []
    thread = threading.Thread(target=lambda: out.append(work()), daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "the follower hung"
    return out[0]


def test_a_poll_reads_at_most_its_cap_and_says_what_is_left(tmp_path):
    log = tmp_path / "log.jsonl"
    write_log(log, 300)
    size = log.stat().st_size
    cap = 64 * 1024
    assert size > 5 * cap
    lines: list[str] = []
    with Follower(log, max_poll_bytes=cap) as follower:
        first = follower.poll()
        assert 0 < first.behind == size - cap and first.lines
        lines += first.lines
        polls = 1
        while (batch := follower.poll()).lines or batch.behind:
            lines += batch.lines
            polls += 1
        assert follower.behind == 0
    assert polls >= size // cap
    assert lines == log_text(0, 300).splitlines()  # every line once, in order


def test_a_fast_writer_is_followed_line_for_line(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"")
    writer = FastWriter(log, 1_500, rate=1_000)
    lines: list[str] = []
    with Follower(log, max_poll_bytes=32 * 1024, min_wait=0.001, max_wait=0.01) as follower:
        writer.start()
        while writer.is_alive() or follower.behind or follower.pending_bytes:
            batch = follower.wait(stop=lambda: not writer.is_alive())
            assert not batch.reset
            lines += batch.lines
        lines += follower.poll().lines
    assert lines == log_text(0, 1_500).splitlines()


def test_a_symlink_flipped_to_dev_zero_or_a_fifo_is_refused_and_waited_on(tmp_path):
    real = tmp_path / "real.jsonl"
    write_log(real, 3)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "session.jsonl"
    link.symlink_to(real)
    with Follower(link) as follower:
        assert len(follower.poll().lines) == len(log_text(0, 3).splitlines())
        for hostile in ("/dev/zero", fifo):
            link.unlink()
            link.symlink_to(hostile)
            batch = _in_thread(follower.poll)
            assert batch.not_regular and not batch.lines
            again = _in_thread(lambda: follower.wait(stop=lambda: True))  # a wait returns too
            assert again.not_regular and not again.lines
        link.unlink()
        link.symlink_to(real)  # a regular file again: read from its start
        back = _in_thread(follower.poll)
        assert back.lines == log_text(0, 3).splitlines()


def test_the_live_replay_makes_calls_a_few_at_a_time_and_asks_stop_before_each(tmp_path):
    log = tmp_path / "log.jsonl"
    write_log(log, 60)
    live = LiveReplay(log, default_policy(), WATCH_STRATEGIES)
    with Follower(log) as follower:
        live.feed(follower.poll())
    assert live.calls == 60 and live.pending == 60
    assert live.ready(stop=lambda: True) == []  # stopped: not one call made
    asked = []
    steps = live.ready(stop=lambda: asked.append(1) and False, limit=10)
    assert [s.number for s in steps] == list(range(1, 11)) and len(asked) == 10 and live.pending == 50
    assert [s.number for s in live.ready()] == list(range(11, 61)) and live.pending == 0


def test_lag_is_said_after_a_second_behind_and_again_when_caught_up():
    from tui_agent.faces.watch import Lag

    now = [0.0]
    lag = Lag(clock=lambda: now[0])
    assert lag.note(500, 1_000_000) is None  # just fell behind: not yet
    now[0] = 1.5
    line = lag.note(400, 2_000_000)
    assert line == "behind the log: 400 calls read and not replayed yet, 2.0 MB not read yet"
    now[0] = 2.0
    assert lag.note(300, 0) is None  # said a moment ago
    now[0] = 4.0
    assert lag.note(0, 0) == "caught up with the log after 4.0 s behind"
    assert lag.note(0, 0) is None


class Watch:
    """`tui-agent watch FILE --json` with its stdout and stderr lines collected as they come."""

    def __init__(self, log: Path, env: dict | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tui_agent", "watch", str(log), "--json"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.out: list[str] = []
        self.err: list[str] = []
        self.readers = [threading.Thread(target=lambda s=stream, i=into: i.extend(s), daemon=True)
                        for stream, into in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for reader in self.readers:
            reader.start()

    def shown(self) -> str:
        return "".join(self.err[-8:]) + f"\n{len(self.out)} lines out"

    def end(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        """Send `sig`; the exit status (a bounded wait: a watch that ignores it fails the test)."""
        self.proc.send_signal(sig)
        try:
            wait_until_sync(lambda: self.proc.poll() is not None, what="the watch to exit after the signal",
                            timeout=timeout, shown=self.shown)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
        for reader in self.readers:
            reader.join(timeout=10)
        return self.proc.returncode


def test_sigterm_far_behind_a_20000_call_log_exits_at_once_with_status_0(tmp_path):
    log = tmp_path / "big.jsonl"
    write_log(log, 20_000)
    watch = Watch(log)
    try:
        wait_until_sync(lambda: len(watch.out) >= 10, what="the first calls out", timeout=120, shown=watch.shown)
    finally:
        # far behind (20,000 calls read at a few hundred a second): a bounded wait, where the old follower
        # worked through the whole backlog (about a minute at low load) before it looked at the signal
        code = watch.end(signal.SIGTERM, timeout=20)
    assert code == 0, watch.shown()
    out = len(watch.out)
    assert out < 20_000
    assert any("stopped behind the log" in line for line in watch.err), watch.shown()
    assert [json.loads(line)["call"] for line in watch.out[:out]] == list(range(1, out + 1))


def test_a_fast_log_is_followed_to_the_end_and_the_lag_is_said(tmp_path):
    log = tmp_path / "fast.jsonl"
    log.write_bytes(b"")
    watch = Watch(log)
    # written 50,000 calls/s: a watch that keeps up with 1,000 a second (it does now on a quiet machine) is
    # still seconds behind this one, so the lag is said however fast the machine is
    writer = FastWriter(log, 5_000, rate=50_000)
    try:
        wait_until_sync(lambda: any("watching" in line for line in watch.err), what="the watch to start",
                        shown=watch.shown)
        writer.start()
        writer.join(60)
        wait_until_sync(lambda: len(watch.out) >= 5_000, what="every call out", timeout=180, shown=watch.shown)
    finally:
        writer.stop.set()
        code = watch.end()
    assert code == 0, watch.shown()
    assert [json.loads(line)["call"] for line in watch.out] == list(range(1, 5_001))
    said = "".join(watch.err)
    assert "behind the log:" in said and "caught up with the log after" in said, watch.shown()


def test_a_watched_path_flipped_to_dev_zero_then_a_fifo_never_wedges_the_watch(tmp_path):
    real = tmp_path / "real.jsonl"
    write_log(real, 12)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "session.jsonl"
    link.symlink_to(real)
    watch = Watch(link)
    try:
        wait_until_sync(lambda: len(watch.out) >= 12, what="the calls of the real file", shown=watch.shown)
        for round_, hostile in enumerate(("/dev/zero", str(fifo)), 2):
            refused = sum("is not a regular file" in line for line in watch.err)
            tmp = tmp_path / "flip"
            tmp.symlink_to(hostile)
            os.replace(tmp, link)
            wait_until_sync(lambda n=refused: sum("is not a regular file" in line for line in watch.err) > n,
                            what=f"the flip to {hostile} refused", shown=watch.shown)
            tmp.symlink_to(real)
            os.replace(tmp, link)  # a regular file again: followed from its start, its calls out again
            wait_until_sync(lambda n=round_: len(watch.out) >= 12 * n, what="the real file read again",
                            shown=watch.shown)
        tmp = tmp_path / "flip"
        tmp.symlink_to(fifo)
        os.replace(tmp, link)  # left pointing at the FIFO: SIGTERM still obeyed
        wait_until_sync(lambda: sum("is not a regular file" in line for line in watch.err) >= 3,
                        what="the last flip refused", shown=watch.shown)
    finally:
        code = watch.end(signal.SIGTERM, timeout=20)
    assert code == 0, watch.shown()
