"""Benchmark: the price of each compaction strategy on real Claude Code sessions, side by side.

Run: `.venv/bin/python bench/economics.py [FILE.jsonl ...]` (default: the files in ../shared/transcripts/).
Replays each session call by call through `none` (the append-only conversation), `seed-v1`, `v1` and `v2`
and prints, per session and in total, once at the classic cache prices (read 0.1, write 1.25) and once at the
newer models' (read 0.05, write 1.25, a prefix idle over 5 minutes written again): calls over the window, peak, average prompt, price per prompt token
and its ratio to the append-only price, total cost ratio, cache hit share, newest round intact, user
prompts and touched file paths missing from the request, future-entity coverage, invalid requests, events, compaction time per
call; then the estimator's error against the logged real usage, and compaction time at 1,000 vs 10,000
messages. The same code serves `tui-agent replay FILE --report`.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tui_agent.core.compaction import Compactor, CompactPolicy  # noqa: E402
from tui_agent.core.recordings.recorded import load_recorded  # noqa: E402
from tui_agent.core.recordings.economics_report import format_report, session_report  # noqa: E402
from tui_agent.core.prices import CLASSIC, NEWER  # noqa: E402
from tui_agent.core.messages import tool_result_block, user_text  # noqa: E402

DEFAULT_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "transcripts"


def synthetic(n: int) -> list[dict]:
    """One long agentic turn: a prompt, then tool rounds with large results (no user text to cut at)."""
    out: list[dict] = [user_text("port the project " + "words " * 20)]
    i = 0
    while len(out) < n:
        out.append({"role": "assistant", "content": [
            {"type": "text", "text": "Reading the next file."},
            {"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {"file_path": f"src/f{i}.py"}}]})
        out.append({"role": "user", "content": [tool_result_block(f"t{i}", "x" * (2000 + (i * 37) % 9000))]})
        i += 1
    return out


def time_growth(calls: int = 60) -> str:
    """Per-call compaction time with no event at 1,000 and 10,000 messages (calls interleaved, so machine
    noise hits both alike), and the time of events at 10,000 messages (forced and natural ones)."""
    policy = CompactPolicy(context_window=200_000, max_output_tokens=32_000, enabled=True)
    runs = {}
    for n in (1_000, 10_000):
        history = synthetic(n + 2 * calls + 400)
        compactor = Compactor(policy, baseline_tokens=5_000)
        compactor.compact(history[:n])
        runs[n] = (compactor, [history[: n + 2 * k + 2] for k in range(calls)])
    gc.collect()  # what the setup allocated is not the measured calls' garbage
    samples: dict[int, list[float]] = {n: [] for n in runs}
    events: list[float] = []
    for k in range(calls):
        for n, (compactor, prefixes) in runs.items():
            started = time.perf_counter()
            result = compactor.compact(prefixes[k])
            took = time.perf_counter() - started
            if result.plan.event is not None and result.plan.event.major:
                if n == 10_000:
                    events.append(took)
            else:
                samples[n].append(took)
    forced = []
    compactor, prefixes = runs[10_000]
    for k in range(5):
        compactor.request_event("drop")
        started = time.perf_counter()
        compactor.compact(prefixes[-1])
        forced.append(time.perf_counter() - started)
    med = {n: statistics.median(v) for n, v in samples.items()}
    lines = [f"  {n:>6} messages: median {med[n] * 1e6:8.1f} µs per call with no event ({len(samples[n])} calls)"
             for n in med]
    natural = f"{statistics.median(events) * 1000:.1f} ms over {len(events)} natural" if events else "no natural"
    lines.append(f"  ratio 10,000 / 1,000 = {med[10_000] / med[1_000]:.2f} (target ≤ 1.5); an event at 10,000 "
                 f"messages: {statistics.median(forced) * 1000:.1f} ms forced (median of 5), {natural} "
                 f"(target ≤ 50)")
    return "\n".join(lines)


# The v2 policies the frontier compares (named rules, none tuned to a session): the old cut-always rule,
# the priced cut of issue 17 with and without ranked masks, no cut on read at all, a lower huge limit.
FRONTIER = {
    "cut always (old)": {"cut_always": True},
    "priced + ranked masks (default)": {},
    "priced, no masks": {"mask": False},
    "no cut at all": {"cut_on_read": False},
    "priced, huge at 20k chars": {"huge_result_chars": 20_000},
}


def frontier(recorded: list, policy: CompactPolicy, price) -> str:
    """Coverage against cost for each policy of `FRONTIER` (v2, every session), at `price`."""
    from dataclasses import replace

    from tui_agent.core.recordings.economics import replay

    lines = [f"frontier at {price.label}: policy · coverage (all calls) · min coverage (sessions under 60k) · "
             "cost÷none · mean price÷none · worst price÷none"]
    nones = [replay(r, ["none"], policy, check_memory=False, price=price)["none"] for r in recorded]
    for name, change in FRONTIER.items():
        results = [replay(r, ["v2"], replace(policy, **change), price=price)["v2"] for r in recorded]
        share = sum(x.coverage.share_sum for x in results) / max(sum(x.coverage.calls for x in results), 1)
        small = [x.coverage.value for x, n in zip(results, nones) if n.average < 60_000]
        ratios = [x.price / n.price for x, n in zip(results, nones)]
        cost = sum(x.cost for x in results) / sum(n.cost for n in nones)
        lines.append(f"  {name:<34} {share:.3f}  {min(small, default=1.0):.3f}  {cost:.3f}  "
                     f"{sum(ratios) / len(ratios):.3f}  {max(ratios):.3f}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--strategies", default="none,seed-v1,v1,v2")
    parser.add_argument("--high", type=float, default=None)
    parser.add_argument("--low", type=float, default=None)
    parser.add_argument("--no-memory", action="store_true", help="skip the prompts/paths check (faster)")
    parser.add_argument("--frontier", action="store_true", help="also coverage against cost for a few v2 policies")
    args = parser.parse_args()
    files = args.files or sorted(DEFAULT_DIR.glob("*.jsonl"))
    if not files:
        print(f"no sessions found in {DEFAULT_DIR}", file=sys.stderr)
        return 1
    kwargs = {}
    if args.high is not None:
        kwargs["high_water"] = args.high
    if args.low is not None:
        kwargs["low_water"] = args.low
    policy = CompactPolicy(context_window=200_000, max_output_tokens=32_000, enabled=True, **kwargs)
    recorded = [load_recorded(f) for f in files]
    strategies = args.strategies.split(",")
    for price in (CLASSIC, NEWER):  # the classic 0.1 read price, then the newer models' 0.05 with expiry
        print(f"######## cache prices: {price.label}\n")
        reports = [session_report(f, strategies, policy, not args.no_memory, price=price, recorded=r)
                   for f, r in zip(files, recorded)]
        print(format_report(reports))
        print()
    if args.frontier:
        for price in (CLASSIC, NEWER):
            print(frontier(recorded, policy, price))
            print()
    print("\ncompaction time (v2):")
    print(time_growth())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
