"""Benchmark: the price of each compaction strategy on real Claude Code sessions, beside the peers'.

Run: `nice -n 10 .venv/bin/python bench/economics.py [FILE.jsonl ...]` (default: ../shared/transcripts/).
Measures exactly `shared/reference/coverage-measure.md`: each session replayed call by call on its fitted
ruler through append-only (`none`), ours (`v2`) and the peers (`core/recordings/peers.py`: Claude Code's autocompact at
77.5 % and 92 % of the window with its summary call priced, opencode's prune, Anthropic's clear_tool_uses),
at each window (`--windows`, 200k and 1M) and each price model (0.1 / 0.05 + 5-min TTL / 0.025 + 5-min TTL /
0.1 with the 1-hour write). Per strategy: cost ÷ append-only pooled over sessions (`!`: append-only goes over
the window, so the ratio divides by requests the API would refuse), cost per call, the price per prompt
token ÷ append-only's (mean and worst session), coverage pooled and per-call mean without the recap, pooled
with it, calls over the window, invalid requests, prompts and touched paths missing, events, per session
cost and coverage, and `*` on the frontier. `--frontier`: a few of our policies side by side.
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
from tui_agent.core.recordings.counted import ruler_errors  # noqa: E402
from tui_agent.core.recordings.recorded import load_recorded  # noqa: E402
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


# Our policy's settings the frontier compares (named rules, none tuned to a session): the default, the default
# before this round (compaction 4's round 6), each of this round's moves taken back, each mark one step either
# way (how much the figures move), the old marks' trade (budgets), and ours without keeping the cache warm.
ROUND_6 = {"high_water": 0.65, "low_water": 0.30, "keep_for_use_share": 0.25, "keep_recurring_share": 0.0,
           "cut_keep_chars": 2000}
FRONTIER = {
    "default": {},
    "no keep-warm (v2-cold)": {"strategy": "v2-cold"},
    "round 6 (0.65/0.30, writes 25 %)": ROUND_6,
    "round 6, no keep-warm": {**ROUND_6, "strategy": "v2-cold"},
    "high 0.58": {"high_water": 0.58},
    "high 0.62": {"high_water": 0.62},
    "high 0.65": {"high_water": 0.65},
    "low 0.08": {"low_water": 0.08},
    "low 0.12": {"low_water": 0.12},
    "low 0.20": {"low_water": 0.20},
    "writes 0.6": {"keep_for_use_share": 0.6},
    "writes 0.8": {"keep_for_use_share": 0.8},
    "recurring 0.1": {"keep_recurring_share": 0.1},
    "recurring 0.3": {"keep_recurring_share": 0.3},
    "no recurring": {"keep_recurring_share": 0.0},
    "no keep-for-use": {"keep_for_use": False, "keep_recurring_share": 0.0},
    "cold target 0.5": {"cold_target": 0.5},
    "budget 140k": {"budget_tokens": 140_000},
    "budget 200k": {"budget_tokens": 200_000},
}


def frontier(recorded: list, window: int, price) -> str:
    """Coverage against cost for each of our settings (`FRONTIER`) beside the peers, every session, at
    `price` and `window`, with `*` on the frontier of all of them."""
    from dataclasses import replace

    from tui_agent.core.recordings.economics import replay
    from tui_agent.core.recordings.economics_table import format_points, points
    from tui_agent.core.recordings.peers import PEERS

    policy = CompactPolicy(context_window=window, max_output_tokens=32_000, enabled=True)
    runs = [(r, replay(r, ["none", *PEERS], policy, price=price)) for r in recorded]
    for name, change in FRONTIER.items():
        change = dict(change)
        strategy = change.pop("strategy", "v2")
        for r, results in runs:
            results[f"v2 {name}"] = replay(r, [strategy], replace(policy, **change), price=price)[strategy]
    return format_points(f"######## frontier at window {window:,} · cache {price.label}", points(runs, price, window))


def thinking_fits(recorded) -> str:
    """How well three ways of counting thinking fit one log's usage: every block sent (`all`), the turn in
    progress only (`turn`: the API's rule before Opus 4.5), none. For each, the ruler is fitted on the calls
    the agent sent whole and the call-to-call growth it predicts is set beside the logged growth: the sum of
    |predicted − logged| over those steps (a count that a drift of the fit does not hide)."""
    from itertools import accumulate

    from tui_agent.core import tokens as tk
    from tui_agent.core.recordings.counted import ThinkingMemo, turn_thinking
    from tui_agent.core.recordings.recorded import _fit

    history, calls, starts = recorded.history, recorded.calls, recorded.segment_start
    thinking = [tk.thinking_tokens(m) for m in history]
    stripped = [tk.message_tokens(m) - t for m, t in zip(history, thinking)]
    memo = ThinkingMemo.of(history, thinking)
    every, bare = [0, *accumulate(tk.message_tokens(m) for m in history)], [0, *accumulate(stripped)]
    sizes = {
        "all": [every[i] - every[s] for i, s in zip(calls, starts)],
        "turn": [bare[i] - bare[s] + turn_thinking(history, memo, s, i) for i, s in zip(calls, starts)],
        "none": [bare[i] - bare[s] for i, s in zip(calls, starts)],
    }
    whole = [k for k in range(len(calls)) if starts[k] == 0]
    parts = []
    for name, xs in sizes.items():
        model = _fit([xs[k] for k in whole], [recorded.real[k] for k in whole])
        miss = sum(abs((recorded.real[k] - recorded.real[k - 1]) - model.ratio * (xs[k] - xs[k - 1]))
                   for k in whole[1:] if starts[k - 1] == 0)
        parts.append(f"{name} {miss:,.0f}")
    return (f"{recorded.name}: thinking {sum(thinking):,} tokens; |growth predicted − logged| summed over "
            f"{len(whole) - 1} steps: " + ", ".join(parts) + f" (this log's model: "
            f"{'keeps' if recorded.keeps_thinking else 'strips'} earlier thinking)")


def floor_line(runs: list, price) -> str:
    """What no strategy that sends the base on every call gets below (`cost_causes.floor_cost`), ÷ append-only,
    pooled and per session: the room a cost target leaves above it for kept conversation, events and pings."""
    from tui_agent.core.recordings.cost_causes import floor_cost
    from tui_agent.core.recordings.economics_table import cost_at

    floors = [floor_cost(results["none"], recorded.model.request(0), price) for recorded, results in runs]
    bases = [cost_at(results["none"], recorded, price) for recorded, results in runs]
    total = sum(bases)
    per_session = "  ".join(f"{f.total / b:.3f}" for f, b in zip(floors, bases) if b)
    return (f"floor (the base read warm + each call's new messages written once; no idle, no pings): "
            f"{sum(f.total for f in floors) / total:.3f} of append-only (base {sum(f.base for f in floors) / total:.3f}, "
            f"new {sum(f.new for f in floors) / total:.3f}) | {per_session}")


def replay_window(path: Path, window: int, strategies: list[str], price_models: list, check: bool,
                  policy_change: dict | None = None) -> tuple:
    """One session at one window: each strategy's replay, per price model where its decisions depend on
    the price (ours: a cut on read pays at the model's read price), once where they do not (the peers,
    append-only). Returns (recorded, {price label: {strategy: result}}, seconds)."""
    from dataclasses import replace

    from tui_agent.core.recordings.economics import replay
    from tui_agent.core.recordings.strategy_table import STRATEGY_MODES, idle_mode

    started = time.perf_counter()
    recorded = load_recorded(path)
    policy = CompactPolicy(context_window=window, max_output_tokens=32_000, enabled=True)
    if policy_change:
        policy = replace(policy, **policy_change)
    # the strategies whose decisions do not depend on the price are replayed once and priced at each model;
    # ours (the cut pays, the idle policy) and every strategy that keeps warm (how many pings) per price model
    fixed = [s for s in strategies if s not in STRATEGY_MODES and idle_mode(s) == "never"]
    once = replay(recorded, fixed, policy, check_memory=check, price=price_models[0])
    out = {}
    for price in price_models:
        ours = replay(recorded, [s for s in strategies if s not in fixed], policy, check_memory=check,
                      price=price)
        out[price.label] = {name: once.get(name) or ours[name] for name in strategies}
    return recorded, out, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--strategies", default="none,none+warm,v2,v2-ping,v2-cold,cc-77,cc-77+warm,cc-92,cc-92+warm,"
                        "opencode,opencode+warm,clear-100k,server-clear,server-compact")
    parser.add_argument("--windows", default="200000,1000000")
    parser.add_argument("--prices", default="all", help="all, or indices into 0.1/0.05+TTL/0.025+TTL/1h (e.g. 1)")
    parser.add_argument("--jobs", type=int, default=1, help="sessions replayed in parallel (the machine is shared)")
    parser.add_argument("--no-memory", action="store_true", help="skip coverage and the prompts/paths check")
    parser.add_argument("--frontier", action="store_true", help="also coverage against cost for a few v2 policies")
    parser.add_argument("--timing", action="store_true", help="also compaction time at 1,000 vs 10,000 messages")
    parser.add_argument("--ruler", action="store_true",
                        help="only how well each way of counting thinking fits the logs' usage, then exit")
    args = parser.parse_args()
    files = args.files or sorted(DEFAULT_DIR.glob("*.jsonl"))
    if not files:
        print(f"no sessions found in {DEFAULT_DIR}", file=sys.stderr)
        return 1
    if args.ruler:
        for f in files:
            print(thinking_fits(load_recorded(f)))
        return 0
    from tui_agent.core.recordings.economics_table import format_points, points
    from tui_agent.core.models import PRICE_MODELS

    prices = list(PRICE_MODELS) if args.prices == "all" else [PRICE_MODELS[int(i)] for i in args.prices.split(",")]
    strategies = args.strategies.split(",")
    if "none" not in strategies:
        strategies.insert(0, "none")
    for window in (int(w) for w in args.windows.split(",")):
        jobs = [(f, window, strategies, prices, not args.no_memory) for f in files]
        done = _run(jobs, args.jobs)
        for f, (recorded, _, took) in zip(files, done):
            error = ruler_errors(recorded)
            print(f"{recorded.name}: {len(recorded.calls)} calls; ruler tokens ≈ {recorded.model.baseline:,.0f} + "
                  f"{recorded.model.ratio:.3f} × chars/4 (earlier thinking {'counted' if recorded.keeps_thinking else 'left out'}); "
                  f"{error.line() if error else 'no measured call'}; replayed in {took:.1f} s")
        for price in prices:
            runs = [(recorded, by_price[price.label]) for recorded, by_price, _ in done]
            print()
            print(format_points(f"######## window {window:,} · cache {price.label} · cost ! = append-only goes "
                                f"over the window (the API would refuse it) · * on the frontier",
                                points(runs, price, window)))
            print(floor_line(runs, price))
        print()
    if args.frontier:
        recorded = [load_recorded(f) for f in files]
        for price in prices:
            print(frontier(recorded, 200_000, price))
            print()
    if args.timing:
        print("\ncompaction time (v2):")
        print(time_growth())
    return 0


def _run(jobs: list[tuple], processes: int) -> list[tuple]:
    if processes <= 1:
        return [replay_window(*job) for job in jobs]
    from multiprocessing import Pool

    with Pool(processes) as pool:
        return pool.starmap(replay_window, jobs)


if __name__ == "__main__":
    raise SystemExit(main())
