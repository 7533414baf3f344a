"""`tui-agent watch FILE --json` as a real process on a real Claude Code log appended in chunks (cut
mid-line): one line per recorded call, none missed, repeated or out of order, the recorded compaction
flagged, the figures those of `replay --json --fit-calls 8` on the finished file; SIGINT and SIGTERM
end it cleanly. `--latest` finds the newest log of a fake home's project folder and switches."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path


from tests.waiting import wait_until_sync
from tui_agent.core.recordings.claude_logs import project_folder
from tui_agent.core.recordings.recorded import recorded_transcript
from tui_agent.core.recordings.transcripts import parse_transcript
from tui_agent.core.recordings.watch import FIT_CALLS
from tests.shared import SMALL_LOG, SYNTHETIC_LONG, TRANSCRIPTS

SHARED = TRANSCRIPTS  # tests/shared.py: the one definition of ../shared/transcripts
ATHENA = SHARED / "tensiondriven__athena__f059ad9a-9964-437c-90a1-28f4dd6d245b.jsonl"
SMALL = SMALL_LOG  # the small real log, else the long synthetic one (tests/shared.py)
ATHENA_LINES = 700  # past its first recorded compaction (the summary at line 623) and some calls after


class Watch:
    """A `tui-agent watch` process whose stdout lines and stderr are collected as they come."""

    def __init__(self, args: list[str], **kwargs) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tui_agent", "watch", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, encoding="utf-8", **kwargs)
        self.out: list[str] = []
        self.err: list[str] = []
        self._threads = [threading.Thread(target=self._read, args=(self.proc.stdout, self.out), daemon=True),
                         threading.Thread(target=self._read, args=(self.proc.stderr, self.err), daemon=True)]
        for thread in self._threads:
            thread.start()

    @staticmethod
    def _read(stream, into: list[str]) -> None:
        for line in stream:
            into.append(line)

    def records(self) -> list[dict]:
        return [json.loads(line) for line in list(self.out)]

    def stop(self, sig: int = signal.SIGINT) -> int:
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        for thread in self._threads:
            thread.join(timeout=10)
        return code

    def shown(self) -> str:
        return "".join(self.err[-10:]) + f"\n{len(self.out)} lines out"


def _calls_in(data: bytes) -> int:
    """How many recorded calls the whole lines of `data` hold (the loader's own count)."""
    lines = data.decode("utf-8", errors="replace").split("\n")[:-1]
    return len(recorded_transcript(parse_transcript(lines), "x", FIT_CALLS).calls)


def _replay_json(path: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "tui_agent", "replay", str(path), "--json", "--no-memory",
                           "--fit-calls", str(FIT_CALLS)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_watch_json_follows_a_log_written_in_chunks(tmp_path):
    source = ATHENA if ATHENA.exists() else SYNTHETIC_LONG  # its agent compaction is at call 30 of 48
    data = b"".join(source.read_bytes().splitlines(keepends=True)[:ATHENA_LINES])
    log = tmp_path / "session.jsonl"
    log.write_bytes(b"")
    watch = Watch([str(log), "--json"])
    try:
        cuts = sorted({len(data) * i // 23 + 17 * i for i in range(1, 23)} | {len(data)})
        written = 0
        for cut in cuts:  # byte offsets inside lines (and maybe inside characters)
            with open(log, "ab") as handle:
                handle.write(data[written:cut])
            written = cut
            expected = _calls_in(data[:cut])
            if expected >= FIT_CALLS:  # the ruler is fixed: every call written is out
                wait_until_sync(lambda n=expected: len(watch.out) >= n, what=f"{expected} calls", timeout=120,
                                shown=watch.shown)
    finally:
        code = watch.stop(signal.SIGINT)
    assert code == 0, watch.shown()
    records = watch.records()
    replay = _replay_json(log)
    steps = replay["steps"]
    assert [r["call"] for r in records] == list(range(1, len(steps) + 1))  # none missed, repeated, reordered
    for record, step in zip(records, steps):
        usage = step["recorded"]["usage"]
        assert record["recorded_tokens"] == step["recorded"]["real_tokens"]
        assert (record["input_tokens"], record["cache_read_tokens"], record["cache_write_tokens"]) == (
            usage.get("input_tokens", 0), usage.get("cache_read_input_tokens", 0),
            usage.get("cache_creation_input_tokens", 0))
        assert record["ours_tokens"] == step["ours"]["tokens"], record["call"]
        assert record["ours_cost_units"] == step["costs"]["v2"]["cost"], record["call"]
        assert record["agent_compaction"] == bool(step["agent_compactions"])
        if record["model"] == replay["model"]:
            assert math.isclose(record["ours_cost_usd"], step["costs"]["v2"]["cost"] * replay["usd_per_unit"],
                                rel_tol=1e-3, abs_tol=1e-6)
    flagged = [r["call"] for r in records if r["agent_compaction"]]
    # one flag per call, though a call may follow two of the agent's records (its boundary and its summary)
    assert flagged == sorted({c["call"] for c in replay["agent_compactions"] if c["call"] > 0})
    assert flagged, "the recorded compaction is flagged"
    forgot = records[flagged[0] - 1]["agent_forgot"]
    assert forgot and forgot[0]["prompts"] and forgot[0]["paths"]  # what its summary no longer names
    assert all(r["recorded_cost_usd"] is not None for r in records)
    totals = [r["recorded_total_usd"] for r in records]
    assert totals == sorted(totals)


def test_watch_json_ends_cleanly_on_sigterm_and_flushes_a_short_session(tmp_path):
    lines = SMALL.read_bytes().splitlines(keepends=True)
    log = tmp_path / "short.jsonl"
    head = b"".join(lines[:6])
    assert 0 < _calls_in(head) < FIT_CALLS  # the ruler is still provisional: the calls are held
    log.write_bytes(head)
    watch = Watch([str(log), "--json"])
    try:
        wait_until_sync(lambda: any("watching" in line for line in watch.err), what="the watch to start",
                        shown=watch.shown)
    finally:
        code = watch.stop(signal.SIGTERM)
    assert code == 0, watch.shown()
    assert [r["call"] for r in watch.records()] == list(range(1, _calls_in(head) + 1))


def test_watch_latest_finds_the_newest_log_and_switches(tmp_path):
    home = tmp_path / "home"
    project = tmp_path / "work" / "my.project"
    project.mkdir(parents=True)
    folder = home / ".claude" / "projects" / project_folder(project)
    folder.mkdir(parents=True)
    lines = SMALL.read_bytes().splitlines(keepends=True)
    older, old = folder / "aaaa-older.jsonl", folder / "bbbb-old.jsonl"
    older.write_bytes(b"".join(lines[:20]))
    old.write_bytes(b"".join(lines[:40]))
    os.utime(older, (1_000_000, 1_000_000))
    os.utime(old, (2_000_000, 2_000_000))
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CONFIG_DIR"} | {"HOME": str(home)}
    watch = Watch(["--latest", "--json"], cwd=project, env=env)
    try:
        old_calls = _calls_in(old.read_bytes())
        wait_until_sync(lambda: len(watch.out) >= old_calls, what="the old session's calls", shown=watch.shown)
        assert {r["session"] for r in watch.records()} == {"bbbb-old"}
        new = folder / "cccc-new.jsonl"
        new.write_bytes(b"".join(lines))
        total = old_calls + _calls_in(new.read_bytes())
        wait_until_sync(lambda: len(watch.out) >= total, what="the new session's calls", timeout=60,
                        shown=watch.shown)
    finally:
        code = watch.stop()
    assert code == 0
    assert any("a newer session started: cccc-new.jsonl" in line for line in watch.err), watch.shown()
    records = watch.records()
    assert [r["session"] for r in records] == ["bbbb-old"] * old_calls + ["cccc-new"] * (total - old_calls)
    assert [r["call"] for r in records[old_calls:]] == list(range(1, total - old_calls + 1))


def test_watch_bad_arguments_are_one_line_errors(tmp_path):
    for args, message in ((["--all"], "--all goes with --latest"), ([], "give a log FILE or --latest"),
                          ([str(tmp_path)], "is not a file")):
        done = subprocess.run([sys.executable, "-m", "tui_agent", "watch", *args], capture_output=True, text=True,
                              timeout=60, env={**os.environ, "HOME": str(tmp_path)})
        assert done.returncode == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1
