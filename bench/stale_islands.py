"""Benchmark: how many of the Write islands our requests send show a version of the file that no longer exists.

Run: `nice -n 10 .venv/bin/python bench/stale_islands.py [--jobs 2] [FILE.jsonl ...]` (default: ../shared/transcripts/).
Each session is replayed call by call through v2 (the economics replay, price 0.05 + 5-min TTL) with
`CompactPolicy.islands_show_edits` off (the islands as written: the behaviour before issue 39's last piece)
and on. At every call, every Write island the request sends (a kept-for-use island of the dropped span whose
message calls Write) counts once; it is stale when a later Edit/MultiEdit of the same file (made before the
call, before any later write of the file, and not failed) is neither sent in the request nor applied to the
island (`decisions.Edited`). Printed: stale / sent (share) pooled, per session, per window, before and after.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tui_agent.core.compaction import CompactPolicy  # noqa: E402
from tui_agent.core.compaction.decisions import EDIT_TOOLS, Edited  # noqa: E402
from tui_agent.core.compaction.recap import WRITE_TOOLS  # noqa: E402
from tui_agent.core.messages import blocks  # noqa: E402
from tui_agent.core.recordings.recorded import load_recorded  # noqa: E402

DEFAULT_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "transcripts"


def _uses(message: dict) -> list[dict]:
    return [b for b in blocks(message) if b.get("type") == "tool_use" and isinstance(b.get("input"), dict)]


def _path(use: dict) -> object:
    return use["input"].get("file_path") or use["input"].get("notebook_path")


def count(path: Path, window: int, show_edits: bool) -> tuple[str, int, int]:
    """(session, Write islands sent over all calls, of which stale) for one replay."""
    from tui_agent.core.models import PRICE_MODELS
    from tui_agent.core.recordings.economics import strategy_runs

    recorded = load_recorded(path)
    history = recorded.history
    failed = {b.get("tool_use_id") for m in history for b in blocks(m)
              if b.get("type") == "tool_result" and b.get("is_error")}
    policy = replace(CompactPolicy(context_window=window, max_output_tokens=32_000, enabled=True),
                     islands_show_edits=show_edits)
    run = strategy_runs(recorded, ["v2"], policy, check_memory=False, price=PRICE_MODELS[1])["v2"]
    sent = stale = 0
    for k, upto in enumerate(recorded.calls):
        priced = run.step()
        plan = priced.plan
        if plan is None or not getattr(plan, "kept_in_drop", None):
            continue
        ids = {b.get("id") for m in priced.messages for b in _uses(m)}
        applied = {e for per in plan.blocks.values() for d in per if isinstance(d, Edited) for e in d.edit_ids}
        for i in plan.kept_in_drop:
            for use in _uses(history[i]):
                if use.get("name") != "Write" or use.get("id") not in ids:
                    continue
                sent += 1
                stale += any(e not in ids and e not in applied for e in _later_edits(history, i, upto, _path(use), failed))
    return recorded.name, sent, stale


def _later_edits(history: list, i: int, upto: int, path: object, failed: set) -> list[str]:
    """The ids of the Edit calls of `path` after message i and before `upto` that did not fail, up to the
    next other write of the file."""
    out = []
    for k in range(i + 1, upto):
        for use in _uses(history[k]):
            if use.get("name") in WRITE_TOOLS and _path(use) == path:
                if use.get("name") not in EDIT_TOOLS:
                    return out
                if use.get("id") not in failed:
                    out.append(use.get("id"))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--windows", default="200000,1000000")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    files = args.files or sorted(DEFAULT_DIR.glob("*.jsonl"))
    jobs = [(f, int(w), on) for w in args.windows.split(",") for on in (False, True) for f in files]
    if args.jobs > 1:
        from multiprocessing import Pool

        with Pool(args.jobs) as pool:
            done = pool.starmap(count, jobs)
    else:
        done = [count(*job) for job in jobs]
    for (_, window, on), start in zip(jobs[::len(files)], range(0, len(jobs), len(files))):
        rows = done[start:start + len(files)]
        sent, stale = sum(r[1] for r in rows), sum(r[2] for r in rows)
        print(f"window {window:,} · islands show edits {'on ' if on else 'off'}: {stale}/{sent} Write islands "
              f"sent stale ({stale / max(sent, 1):.1%})")
        for name, n, s in rows:
            if n:
                print(f"    {name[:60]:<60} {s:>5}/{n:<5} ({s / n:.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
