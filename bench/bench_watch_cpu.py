"""Benchmark: the CPU a watch spends per call far into a long log, today's code beside a base revision.

Run: `.venv/bin/python bench/bench_watch_cpu.py [--calls 8000] [--base REV] [--profile]`. The synthetic log
of `tests/watch/fast_log.py` (one Read per call) is fed to the `--json` face's engine in batches of 20
calls (what a follower reads of a log growing 1,000 calls/s), with each call's JSON line made as the face
makes it, in a fresh process per tree (`git archive`d base, run with this interpreter). It prints calls per
second of CPU over the whole log and over its last 1,000 calls: a watch keeps up with a log growing
1,000 calls/s only if the second figure stays above 1,000 on the core it gets. `--profile` prints
cProfile's top functions of the last 1,000 calls (this tree only). Not a pytest test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RUN = r"""
import cProfile, io, pstats, sys, time
from pathlib import Path
sys.path.append(sys.argv[3])  # the tests' synthetic log (this tree's; after the tree measured, so its tui_agent wins)
from tests.watch.fast_log import call_lines
from tui_agent.core.recordings.follow import Batch
from tui_agent.core.recordings.watch import LiveReplay
from tui_agent.faces.watch import WATCH_STRATEGIES, JsonOut
import tui_agent
print("measured:", tui_agent.__file__, file=sys.stderr)

calls, profile, per = int(sys.argv[1]), sys.argv[2] == "1", 20
path = Path("bench.jsonl")
live, out = LiveReplay(path, None, WATCH_STRATEGIES), JsonOut(path, None)
sink, stdout, profiler = io.StringIO(), sys.stdout, cProfile.Profile()
started, tail = time.process_time(), None
for at in range(0, calls, per):
    if at == calls - 1000:
        tail = time.process_time()
        if profile:
            profiler.enable()
    live.feed(Batch(lines=[line for i in range(at, min(at + per, calls)) for line in call_lines(i)]))
    sys.stdout = sink
    out.emit(live, live.ready())
    sys.stdout = stdout
    sink.seek(0)
    sink.truncate()
profiler.disable()
end = time.process_time()
print(f"{calls / (end - started):.0f} {1000 / (end - tail):.0f}")
if profile:
    pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(20)
"""


def measure(tree: Path, calls: int, profile: bool) -> tuple[int, int]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", RUN, str(calls), "1" if profile else "0", str(ROOT)], cwd=tree,
                          env=env, capture_output=True, text=True, check=True)
    if f"measured: {tree}" not in done.stderr:
        raise SystemExit(f"{tree}'s code was not the one measured: {done.stderr.splitlines()[:1]}")
    if profile:
        print(done.stderr)
    overall, last = done.stdout.split()
    return int(overall), int(last)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=8000)
    parser.add_argument("--base", default=None, help="the baseline revision (default: merge-base with main)")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    base_rev = args.base or subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True,
                                           text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="bench-watch-cpu-") as tmp:
        archive = subprocess.run(["git", "archive", base_rev, "tui_agent"], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        before = measure(Path(tmp), args.calls, False)
        after = measure(ROOT, args.calls, args.profile)
    print(f"{args.calls} calls; base {base_rev[:9]} vs the working tree; load {os.getloadavg()[0]:.2f}")
    print(f"{'calls/s of CPU':32}{'before':>12}{'after':>12}")
    print(f"{'over the whole log':32}{before[0]:12}{after[0]:12}")
    print(f"{'over its last 1,000 calls':32}{before[1]:12}{after[1]:12}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
