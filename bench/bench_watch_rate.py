"""Benchmark: `tui-agent watch` beside a log growing 1,000 calls/s for 30 s (issue 27).

Run: `.venv/bin/python bench/bench_watch_rate.py [--rate 1000] [--seconds 30] [--catch-up 240] [--only json|tui]
[--base REV]`. With `--base`, each row runs first on REV's code (`git archive`d into a temporary folder, run
with the same interpreter) and then on the working tree's, side by side at the same load.
A writer thread appends the synthetic log of `tests/watch/fast_log.py` (one Read per call, a tool result
of about 1.6k characters, lines cut mid-way) at `--rate` calls a second, while the real command follows
it in its own process: `watch FILE --json` (stdout lines counted, stderr's "behind the log" lines kept) and
the TUI in tmux (200×50; its header says "call N/M" and how far behind it is). Each face runs twice:

- *catch up*: after the writer stops, how far behind the face is (calls written − calls out or shown;
  bytes not read, from its own lag line), how long it then takes to catch up (bounded by `--catch-up`),
  the peak RSS (`VmHWM`), and the time from SIGTERM (`--json`) or `q` (the TUI) to the process's exit;
- *far behind*: SIGTERM (`--json`) or `q` and SIGTERM (the TUI) the moment the writer stops, the time
  to exit.

Wall-clock figures on a shared machine: it prints the load average beside them. Not a pytest test (the
behaviours are: tests/watch/test_watch_hostile.py, test_watch_reset.py).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.watch.fast_log import FastWriter  # noqa: E402 - after the path is set

CLI = Path(sys.executable).with_name("tui-agent")
HEADER = re.compile(r"call (\d+)/(\d+)")


def status_kib(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class JsonFace:
    """`tui-agent watch LOG --json` with its output counted as it comes."""

    def __init__(self, log: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tui_agent", "watch", str(log), "--json"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.pid = self.proc.pid
        self.out = 0
        self.err: list[str] = []
        threading.Thread(target=self._count, daemon=True).start()
        threading.Thread(target=lambda: self.err.extend(self.proc.stderr), daemon=True).start()

    def _count(self) -> None:
        for _ in self.proc.stdout:
            self.out += 1

    def shown(self) -> int:
        return self.out

    def lag_line(self) -> str:
        lines = [line.strip() for line in self.err if "behind the log" in line]
        return lines[-1] if lines else "(no lag line)"

    def stop(self, how: str) -> float:
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=600)
        return time.monotonic() - started

    def exit_code(self) -> int | None:
        return self.proc.returncode


class TuiFace:
    """`tui-agent watch LOG` in tmux; its header read with capture-pane."""

    def __init__(self, log: Path, env: dict[str, str], tmp: Path) -> None:
        self.socket = f"bench-watch-{os.getpid()}-{time.monotonic_ns()}"
        self.status = tmp / "status"
        assigns = " ".join(f"{k}={v}" for k, v in env.items()
                           if k in ("TUI_AGENT_CONFIG_DIR", "TUI_AGENT_DATA_DIR", "PYTHONPATH"))
        command = f"env -u COLUMNS -u LINES {assigns} TERM=xterm-256color {CLI} watch {log}; echo $? > {self.status}"
        subprocess.run(["tmux", "-L", self.socket, "new-session", "-d", "-s", "agent", "-x", "200", "-y", "50",
                        "sh", "-c", command], check=True)
        shell = int(subprocess.run(["tmux", "-L", self.socket, "display", "-p", "-t", "agent", "#{pane_pid}"],
                                   capture_output=True, text=True, check=True).stdout)
        self.pid = self._child(shell)

    @staticmethod
    def _child(shell: int) -> int:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                kids = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
            except OSError:
                kids = []
            if kids:
                return int(kids[0])
            time.sleep(0.05)
        raise RuntimeError("the watch did not start in tmux")

    def screen(self) -> str:
        return subprocess.run(["tmux", "-L", self.socket, "capture-pane", "-p", "-t", "agent"],
                              capture_output=True, text=True).stdout

    def shown(self) -> int:
        found = HEADER.search(self.screen())  # "call N/M": M calls made and shown so far
        return int(found.group(2)) if found else 0

    def lag_line(self) -> str:
        line = next((line for line in self.screen().splitlines() if "behind the log" in line), "")
        found = re.search(r"behind the log: ([^·]*)", line)
        return f"behind the log: {found.group(1).strip()}" if found else "(not shown behind)"

    def stop(self, how: str) -> float:
        started = time.monotonic()
        if how == "q":
            subprocess.run(["tmux", "-L", self.socket, "send-keys", "-t", "agent", "q"], check=True)
        else:
            os.kill(self.pid, signal.SIGTERM)
        while not (self.status.exists() and self.status.read_text().strip()):
            if time.monotonic() - started > 600:
                break
            time.sleep(0.01)
        took = time.monotonic() - started
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
        return took

    def exit_code(self) -> int | None:
        text = self.status.read_text().strip() if self.status.exists() else ""
        return int(text) if text else None


def run(face: str, scenario: str, args, stop_how: str, tree: Path | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-watch-rate-") as tmp_name:
        tmp = Path(tmp_name)
        log = tmp / "session.jsonl"
        log.write_bytes(b"")
        env = {**os.environ, "TUI_AGENT_CONFIG_DIR": str(tmp / "config"), "TUI_AGENT_DATA_DIR": str(tmp / "data")}
        if tree is not None:  # another revision's code (`--base`)
            env["PYTHONPATH"] = str(tree)
        watch = JsonFace(log, env) if face == "json" else TuiFace(log, env, tmp)
        time.sleep(1.0)  # its start-up (imports, the first frame) is not what is measured
        calls = int(args.rate * args.seconds)
        writer = FastWriter(log, calls, rate=args.rate)
        writer.start()
        writer.join()
        ended = time.monotonic()
        row = {"face": face, "scenario": scenario, "written": calls, "MB": log.stat().st_size / 1e6,
               "out_at_end": watch.shown(), "lag_line": watch.lag_line()}
        if scenario == "catch up":
            while watch.shown() < calls and time.monotonic() - ended < args.catch_up:
                time.sleep(0.1)
            row["caught_up_s"] = time.monotonic() - ended if watch.shown() >= calls else None
            row["out_then"] = watch.shown()
        row["peak_rss_mb"] = status_kib(watch.pid, "VmHWM") / 1024
        row["stop"] = stop_how
        row["sent_at"] = time.time(); row["stop_s"] = watch.stop(stop_how)
        row["exit"] = watch.exit_code()
        return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=1_000)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--catch-up", type=float, default=240, help="seconds to wait for the face to catch up")
    parser.add_argument("--only", choices=("json", "tui"))
    parser.add_argument("--base", default=None, help="also run each row on this revision's code, first")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-watch-base-") as base_dir:
        trees: list[tuple[str, Path | None]] = [("now", None)]
        if args.base:
            archive = subprocess.run(["git", "archive", args.base, "tui_agent"], cwd=ROOT, capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", base_dir], input=archive.stdout, check=True)
            trees.insert(0, (f"base {args.base[:9]}", Path(base_dir)))
        return rows(args, trees)


def rows(args, trees: list[tuple[str, Path | None]]) -> int:
    plan = [("json", "catch up", "SIGTERM"), ("json", "far behind", "SIGTERM"),
            ("tui", "catch up", "q"), ("tui", "far behind", "q"), ("tui", "far behind", "SIGTERM")]
    if shutil.which("tmux") is None or not CLI.exists():
        plan = [p for p in plan if p[0] == "json"]
    print(f"log growing {args.rate:,.0f} calls/s for {args.seconds:g} s; load average before: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    for face, scenario, how in plan:
        if args.only and face != args.only:
            continue
        for label, tree in trees:
            report(args, face, scenario, label, run(face, scenario, args, how, tree))
    return 0


def report(args, face: str, scenario: str, label: str, row: dict) -> None:
    behind = row["written"] - row["out_at_end"]
    caught = row.get("caught_up_s")
    caught_text = "" if scenario != "catch up" else (
        f", caught up {caught:.1f} s after the writer stopped" if caught is not None
        else f", not caught up within {args.catch_up:g} s ({row['out_then']:,} out)")
    print(f"{label:<14} {face:<4} {scenario:<10}: {row['written']:,} calls ({row['MB']:.0f} MB) written; at the end "
          f"{row['out_at_end']:,} out, {behind:,} calls behind [{row['lag_line']}]{caught_text}; "
          f"peak RSS {row['peak_rss_mb']:.0f} MB; {row['stop']} → exit {row['stop_s']:.2f} s "
          f"(status {row['exit']}); load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
