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
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    own = 0
    while child.poll() is None:
        try:
            status = Path(f"/proc/{child.pid}/status").read_text()
            own = max(own, int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM"))))
        except (OSError, StopIteration, ValueError):
            pass
        time.sleep(0.05)
    wall = time.perf_counter() - started
    stderr = child.stderr.read().decode() if child.stderr else ""
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command[:6])}… exited {child.returncode}: {stderr[-400:]}")
    return {"wall": wall, "own_mb": own / 1024, "tree_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


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


def made(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.jsonl") if not p.name.startswith("broken-"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", type=Path, help="a folder made by bench/make_sessions.py")
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--cores-size", type=int, default=60, help="sessions for one core beside two")
    parser.add_argument("--ray", metavar="ADDRESS", help="also run the largest size on this Ray cluster")
    parser.add_argument("--shared", type=Path, default=SHARED, help="the shared logs added to every run")
    args = parser.parse_args()
    shared = sorted(args.shared.glob("*.jsonl"))
    pool = made(args.sessions)
    broken = sorted(args.sessions.rglob("broken-*.jsonl"))
    work = Path(tempfile.mkdtemp(prefix="bench-report-"))
    print(f"{len(pool)} made sessions ({sum(p.stat().st_size for p in pool) / 1e6:.0f} MB) + {len(shared)} shared logs "
          f"+ {len(broken)} broken files; load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores; work in {work}")
    print(f"\n{'sessions':>9} {'wall s':>8} {'s/session':>10} {'report MB':>10} {'largest MB':>11}")
    runs = {}
    for size in (int(s) for s in args.sizes.split(",")):
        files = [*shared, *pool[:size], *broken]
        out = work / f"n{size}"
        out.mkdir()
        runs[size] = (files, out, wrapped(files, out, out / "cache", ["--jobs", "2"]))
        r = runs[size][2]
        print(f"{len(files):>9} {r['wall']:>8.1f} {r['wall'] / len(files):>10.3f} {r['own_mb']:>10.0f} {r['tree_mb']:>11.0f}")
    files, out, first = runs[max(runs)]
    (out / "again").mkdir()
    again = wrapped(files, out / "again", out / "cache", ["--jobs", "2"])
    same = (out / "again" / "table.parquet").read_bytes() == (out / "table.parquet").read_bytes()
    print(f"\nsecond run over the same {len(files)} files: {again['wall']:.1f} s beside {first['wall']:.1f} s "
          f"= {again['wall'] / first['wall']:.1%} of the first (target < 10 %); same table bytes: {same}")
    cores_files = [*shared, *pool[:args.cores_size]]
    load = os.getloadavg()[0]
    timed = {}
    for jobs in (1, 2):
        folder = work / f"jobs{jobs}"
        folder.mkdir()
        timed[jobs] = wrapped(cores_files, folder, folder / "cache", ["--jobs", str(jobs)])["wall"]
    print(f"\none core beside two, {len(cores_files)} sessions: {timed[1]:.1f} s vs {timed[2]:.1f} s = "
          f"{timed[1] / timed[2]:.2f}× (target ≥ 1.7); load average {load:.2f} before, {os.getloadavg()[0]:.2f} after")
    if args.ray:
        folder = work / "ray"
        folder.mkdir()
        r = wrapped(files, folder, folder / "cache", ["--ray", args.ray])
        same = (folder / "table.parquet").read_bytes() == (out / "table.parquet").read_bytes()
        print(f"\nRay at {args.ray}: {r['wall']:.1f} s beside {first['wall']:.1f} s locally; same table bytes: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
