"""Benchmark: `tui-agent report` at scale, figures side by side.

Run: `nice -n 10 .venv/bin/python bench/bench_report.py /tmp/sessions [--ray 127.0.0.1:6379] [--sizes 10,100,1000]`
where /tmp/sessions was made by `bench/make_sessions.py 1000 /tmp/sessions --broken 3`. The shared logs
(../shared/transcripts) are added to every run. Each run is the real command in a process of its own
(`tui-agent report FILES --table --html`, a fresh cache unless said), measured by a small wrapper: wall
time, the peak memory of the report's own process (`VmHWM`, polled) and of the largest process of its tree
(`RUSAGE_CHILDREN`: a worker). It prints:
- time per session and peak memory at each size (flat from 10 to 1,000 sessions is the target);
- one core beside two on the same sessions (≥ 1.7× is the target; the load average is printed beside,
  since the machine is shared);
- a second run over the same files beside the first (under 10 % is the target), and whether its table
  has the same bytes;
- with `--ray`: the same report on a Ray cluster, its time and whether its table has the same bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "transcripts"
TUI_AGENT = [str(Path(sys.executable).parent / "tui-agent")]


def measure(command: list[str], env: dict[str, str]) -> dict:
    """Run `command`; its wall time, its own peak RSS (VmHWM, polled) and its tree's largest (MB)."""
    import ctypes

    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: the fork server's orphans are reaped here
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    own = 0
    own_cpu = 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    while child.poll() is None:
        try:
            status = Path(f"/proc/{child.pid}/status").read_text()
            own = max(own, int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM"))))
            fields = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
            own_cpu = (int(fields[11]) + int(fields[12])) / ticks  # utime + stime of the report's own process
        except (OSError, StopIteration, ValueError, IndexError):
            pass
        time.sleep(0.05)
    wall = time.perf_counter() - started
    while True:  # the workers and their fork server, counted in RUSAGE_CHILDREN once reaped
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    stderr = child.stderr.read().decode() if child.stderr else ""
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command[:6])}… exited {child.returncode}: {stderr[-400:]}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"wall": wall, "own_mb": own / 1024, "tree_mb": usage.ru_maxrss / 1024, "cpu": usage.ru_utime + usage.ru_stime,
            "own_cpu": own_cpu}


def wrapped(files: list[Path], out: Path, cache: Path, extra: list[str]) -> dict:
    """The report over `files` in a wrapper process of its own (so RUSAGE_CHILDREN is this run's alone)."""
    command = [*TUI_AGENT, "report", *map(str, files), "--table", str(out / "table.parquet"),
               "--html", str(out / "page.html"), *extra]
    env = {**os.environ, "TUI_AGENT_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    code = (f"import json, sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); from bench_report import measure; "
            f"print(json.dumps(measure({command!r}, {env!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    if done.returncode:
        raise SystemExit(done.stderr[-800:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def cores(work: Path, files: list[Path]) -> None:
    """One process beside two on the same sessions: the wall times (meaningful on a quiet machine only), and
    the speed-up the work allows whatever the load: one process's CPU time over the two-process run's
    critical path (what its report process did alone, plus half of what the workers did)."""
    load = os.getloadavg()[0]
    runs = {}
    for jobs in (1, 2):
        folder = work / f"jobs{jobs}"
        folder.mkdir()
        runs[jobs] = wrapped(files, folder, folder / "cache", ["--jobs", str(jobs)])
    one, two = runs[1], runs[2]
    path = two["own_cpu"] + (two["cpu"] - two["own_cpu"]) / 2
    print(f"\none core beside two, {len(files)} sessions: {one['wall']:.1f} s vs {two['wall']:.1f} s wall = "
          f"{one['wall'] / two['wall']:.2f}× (target ≥ 1.7); load average {load:.2f} before, {os.getloadavg()[0]:.2f} "
          f"after\n  CPU: one process {one['cpu']:.1f} s; two: report process {two['own_cpu']:.1f} s + workers "
          f"{two['cpu'] - two['own_cpu']:.1f} s -> the work allows {one['cpu'] / path:.2f}× on two free cores")


def made(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.jsonl") if not p.name.startswith("broken-"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", type=Path, help="a folder made by bench/make_sessions.py")
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--cores-size", type=int, default=60, help="sessions for one core beside two")
    parser.add_argument("--ray", metavar="ADDRESS", help="also run the largest size on this Ray cluster")
    parser.add_argument("--shared", type=Path, default=SHARED, help="the shared logs added to every run")
    parser.add_argument("--cores-only", action="store_true", help="only one core beside two")
    parser.add_argument("--scale-only", action="store_true", help="only the sizes (no second run, no cores)")
    args = parser.parse_args()
    shared = sorted(args.shared.glob("*.jsonl"))
    pool = made(args.sessions)
    broken = sorted(args.sessions.rglob("broken-*.jsonl"))
    work = Path(tempfile.mkdtemp(prefix="bench-report-"))
    print(f"{len(pool)} made sessions ({sum(p.stat().st_size for p in pool) / 1e6:.0f} MB) + {len(shared)} shared logs "
          f"+ {len(broken)} broken files; load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores; work in {work}")
    if args.cores_only:
        cores(work, [*shared, *pool[:args.cores_size]])
        return 0
    print(f"\n{'sessions':>9} {'wall s':>8} {'s/session':>10} {'CPU s/session':>14} {'report MB':>10} {'largest MB':>11}")
    runs = {}
    for size in (int(s) for s in args.sizes.split(",")):
        files = [*shared, *pool[:size], *broken]
        out = work / f"n{size}"
        out.mkdir()
        runs[size] = (files, out, wrapped(files, out, out / "cache", ["--jobs", "2"]))
        r = runs[size][2]
        print(f"{len(files):>9} {r['wall']:>8.1f} {r['wall'] / len(files):>10.3f} {r['cpu'] / len(files):>14.3f} "
              f"{r['own_mb']:>10.0f} {r['tree_mb']:>11.0f}")
    if args.scale_only:
        return 0
    files, out, first = runs[max(runs)]
    (out / "again").mkdir()
    again = wrapped(files, out / "again", out / "cache", ["--jobs", "2"])
    same = (out / "again" / "table.parquet").read_bytes() == (out / "table.parquet").read_bytes()
    print(f"\nsecond run over the same {len(files)} files: {again['wall']:.1f} s beside {first['wall']:.1f} s "
          f"= {again['wall'] / first['wall']:.1%} of the first (target < 10 %); same table bytes: {same}")
    cores(work, [*shared, *pool[:args.cores_size]])
    if args.ray:
        folder = work / "ray"
        folder.mkdir()
        r = wrapped(files, folder, folder / "cache", ["--ray", args.ray])
        same = (folder / "table.parquet").read_bytes() == (out / "table.parquet").read_bytes()
        print(f"\nRay at {args.ray}: {r['wall']:.1f} s beside {first['wall']:.1f} s locally; same table bytes: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
