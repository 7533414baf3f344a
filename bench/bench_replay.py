"""Benchmark: `tui-agent replay` at speed, today's code beside a baseline commit, in one run.

Run: `.venv/bin/python bench/bench_replay.py [--base REV] [FILE]` (default: the athena log of
../shared/transcripts, base = the commit before the replay speed work). The baseline tree is
`git archive`d into a temporary folder and run with the same interpreter, so both sides see the same
machine at the same time (these machines are shared and noisy: compare the two columns, not the absolute
figures). Measured, each in a fresh process:

- `replay FILE --report` (every strategy, the memory checks and the estimator): wall and CPU seconds;
- the TUI's far jump: the replay app under Pilot at call 1, then `g` + the last call number + Enter,
  timed until the screen shows that call (wall seconds).

Not a pytest test (timings on shared machines are noisy).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = "ca912c3"  # the owner16 base this work started from (replay before checkpoints and memos)
ATHENA = ROOT.parent / "shared" / "transcripts" / "tensiondriven__athena__f059ad9a-9964-437c-90a1-28f4dd6d245b.jsonl"

JUMP = r"""
import asyncio, sys, time
from tui_agent.core.recordings.replay import open_replay
from tui_agent.ui.replay_app import ReplayApp

async def main(path):
    replay = open_replay(path)
    target = replay.calls
    app = ReplayApp(replay, start=0, session_label="replay")
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        screen = app.screen
        started, cpu = time.perf_counter(), time.process_time()
        await pilot.press("g")
        for key in str(target):
            await pilot.press(key)
        await pilot.press("enter")
        while screen.current != target - 1:
            await pilot.pause(0.01)
        await pilot.pause()
        print(f"{time.perf_counter() - started:.3f} {time.process_time() - cpu:.3f}")

asyncio.run(main(sys.argv[1]))
"""


def run(tree: Path, args: list[str]) -> tuple[float, float, str]:
    """(wall s, child CPU s, stdout) of `python args` with `tree` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run([sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, default=ATHENA)
    parser.add_argument("--base", default=BASE, help=f"the baseline revision (default {BASE})")
    args = parser.parse_args()
    path = args.file.resolve()
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        archive = subprocess.run(["git", "archive", args.base, "tui_agent"], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
        jump = Path(tmp) / "jump.py"
        jump.write_text(JUMP)
        rows = []
        for label, tree in ((f"base {args.base}", base), ("now", ROOT)):
            wall, cpu, report = run(tree, ["-m", "tui_agent", "replay", str(path), "--report"])
            _, _, out = run(tree, [str(jump), str(path)])
            jump_wall, jump_cpu = (float(x) for x in out.strip().splitlines()[-1].split())
            rows.append((label, wall, cpu, jump_wall, jump_cpu, report))
    print(f"{path.name}")
    print(f"{'':<16} {'report wall':>11} {'report CPU':>10} {'jump wall':>10} {'jump CPU':>9}")
    for label, wall, cpu, jump_wall, jump_cpu, _ in rows:
        print(f"{label:<16} {wall:>10.2f}s {cpu:>9.2f}s {jump_wall:>9.2f}s {jump_cpu:>8.2f}s")
    (_, w0, c0, jw0, jc0, r0), (_, w1, c1, jw1, jc1, r1) = rows
    print(f"{'ratio base/now':<16} {w0 / w1:>10.1f}× {c0 / c1:>9.1f}× {jw0 / jw1:>9.1f}× {jc0 / jc1:>8.1f}×")
    same = _figures(r0) == _figures(r1)
    print("report figures " + ("identical" if same else "DIFFER") + " (the timing columns aside)")
    return 0 if same else 1


def _figures(report: str) -> list[str]:
    """The report without its two timing columns (t med, t max), which differ from run to run."""
    return [" ".join(line.split()[:-2]) if line.split() and line.split()[-1].endswith("ms") else line
            for line in report.splitlines()]


if __name__ == "__main__":
    sys.exit(main())
