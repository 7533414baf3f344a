"""Benchmark: the whole watch's memory over a 10,000-call log (tracemalloc current and peak at 1k, 5k, 10k).

Run: `.venv/bin/python bench/bench_watch_memory.py [--calls 10000] [--every 100]`. A synthetic Claude
Code log (one Read per call, a tool result of about 1.6k characters, the agent's own compaction every 400
calls) is written in growths of `--every` calls to a temporary file and followed by the two faces' cores,
each in a fresh tracemalloc run:

- `--json`: `core.follow.Follower` → `core.watch.LiveReplay` → `core.call_figures.FiguresRun` → one JSON
  line per call (what `watch_cli.watch_json` runs, written to a null sink);
- the TUI's state: `Follower` → `core.watch_feed.WatchFeed` (the worker) → `CallsView.apply` (the screen)
  → the panel's `BudgetLedger`, fed each new call as the replay panel feeds it (`Replay.reported`) and
  letting go with the view (`BudgetLedger.let_go`, where the code has it).

The synthetic log makes one of our compaction events about every 113 calls (the prompt grows by about
450 tokens a call past the high-water mark), so the requests held in full show whether they grow with
the number of events.

With `--base REV`, it measures instead the cost of following today beside that revision in one run: each
tree follows the same log in a fresh process without tracemalloc (CPU seconds, wall seconds, peak RSS), so
the ratio shows what a growth costs (a whole-log parse per growth is O(n²) over the session).

It prints the traced memory and the structures a watch keeps (steps held, checkpoints, requests held in
full) at each mark. What must stay bounded is what grows per call beyond the log itself: the log's
messages are kept (the compactor needs them), so memory grows with the log, but no copy of an old request
or a checkpoint per 25 calls is kept. Not a pytest test (the structural bounds are: tests/watch).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = Path(os.environ.get("BENCH_TREE", ROOT))  # the tui_agent tree to measure (`--base`: the baseline's)
sys.path.insert(0, str(TREE))

MODEL = "claude-sonnet-4-5-20250929"
MARKS = (1_000, 5_000, 10_000)
COMPACT_EVERY = 400  # calls between two of the recorded agent's own compactions


def synthetic_log(calls: int) -> list[list[str]]:
    """The log's lines, grouped per call (the first group also holds the opening prompt)."""
    groups: list[list[str]] = []
    n = 0

    def record(**fields) -> str:
        nonlocal n
        n += 1
        fields.setdefault("uuid", f"u{n}")
        fields.setdefault("sessionId", "s1")
        fields.setdefault("timestamp", f"2026-12-01T{(n // 3600) % 24:02d}:{(n // 60) % 60:02d}:{n % 60:02d}.000Z")
        return json.dumps(fields)

    lines = [record(type="user", message={"role": "user", "content": "Work through the files, please."})]
    tokens = 8_000
    for i in range(calls):
        if i and i % COMPACT_EVERY == 0:
            lines.append(record(type="system", subtype="compact_boundary", content="Conversation compacted",
                                compactMetadata={"trigger": "auto", "preTokens": tokens}))
            lines.append(record(type="user", isCompactSummary=True, message={"role": "user", "content":
                         f"This session is being continued from a previous conversation. Summary: read files "
                         f"up to src/file{i - 1}.py."}))
            tokens = 12_000
        usage = {"input_tokens": 3, "cache_creation_input_tokens": 500, "cache_read_input_tokens": tokens,
                 "output_tokens": 40}
        for block in ({"type": "text", "text": f"Reading file {i}."},
                      {"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {"file_path": f"src/file{i}.py"}}):
            lines.append(record(type="assistant", requestId=f"req_{i}", message={
                "id": f"msg_{i}", "type": "message", "role": "assistant", "model": MODEL, "content": [block],
                "usage": usage}))
        lines.append(record(type="user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": f"def f{i}(x):\n    return x + {i}\n" * 60}]}))
        tokens += 450
        groups.append(lines)
        lines = []
    return groups


class Sink:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def follow_json(path: Path):
    """The `--json` path: returns (feed one growth → calls printed so far, the structures to report)."""
    from tui_agent.core.recordings.call_figures import FiguresRun
    from tui_agent.core.recordings.strategy_table import default_policy
    from tui_agent.core.recordings.follow import Follower
    from tui_agent.core.recordings.watch import LiveReplay
    from tui_agent.faces.watch import WATCH_STRATEGIES

    follower = Follower(path)
    live = LiveReplay(path, default_policy(), WATCH_STRATEGIES)
    run = FiguresRun()
    out = Sink()

    def grow() -> int:
        live.feed(follower.poll())
        for step in live.ready():
            record = run.figures(live.replay, step, live.pre_tokens()).json()
            out.write(json.dumps(record) + "\n")
        return live.handed

    return grow, lambda: structures(live.replay, None)


def follow_tui(path: Path):
    """The TUI's cores: the worker's feed and the screen's view."""
    from tui_agent.core.recordings.strategy_table import default_policy
    from tui_agent.core.recordings.follow import Follower
    from tui_agent.core.recordings.watch_feed import CallsView, WatchFeed
    from tui_agent.ui.screens.watch import STRATEGIES

    from tui_agent.core.agent.budget import BudgetLedger

    follower = Follower(path)
    feed = WatchFeed(path, default_policy(), STRATEGIES)
    view = CallsView(path)
    ledger = BudgetLedger()

    def grow() -> int:
        arrival = feed.feed(follower.poll())
        if arrival is not None:
            fed = view.calls
            view.apply(arrival)
            for step in view.steps[fed:]:
                ledger.feed(view.reported(step))
            view.pinned = view.calls - 1  # the screen shows the newest call
            if hasattr(ledger, "let_go"):
                from tui_agent.core.recordings.watch_feed import slim_plan

                ledger.let_go(lambda call: view.held(call - 1), slim_plan)
        return view.calls

    return grow, lambda: structures(feed.live.replay, view, ledger)


def structures(replay, view, ledger=None) -> str:
    kept = len(replay._kept) if replay is not None else 0
    checkpoints = len(replay._checkpoints) if replay is not None else 0
    text = f"replay steps kept {kept}, checkpoints {checkpoints}"
    if view is not None:
        full = sum(1 for s in view.steps if s.messages)
        events = sum(1 for s in view.steps if s.event_line)
        text += f"; view: {view.calls} calls, {events} our events, {full} requests held in full"
    if ledger is not None:  # distinct requests the panel's event entries still reference
        held = {id(m) for e in ledger.events for m in (e.messages, e.previous_messages) if m}
        text += f"; panel ledger: {len(ledger.events)} events, {len(held)} requests held"
    return text


def measure(label: str, groups: list[list[str]], every: int, make) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-watch-") as tmp:
        path = Path(tmp) / "session.jsonl"
        path.write_text("")
        tracemalloc.start()
        grow, describe = make(path)
        started = time.perf_counter()
        marks = list(MARKS)
        with open(path, "a", encoding="utf-8") as handle:
            for at in range(0, len(groups), every):
                handle.write("".join(line + "\n" for group in groups[at:at + every] for line in group))
                handle.flush()
                done = grow()
                while marks and at + every >= marks[0] and marks[0] <= len(groups):
                    gc.collect()  # "current": what is still reachable, not garbage awaiting the cycle collector
                    current, peak = tracemalloc.get_traced_memory()
                    print(f"{label:<6} {marks[0]:>6} calls ({done:>6} out): current {current / 2**20:7.1f} MiB, "
                          f"peak {peak / 2**20:7.1f} MiB · {describe()} · {time.perf_counter() - started:6.1f} s",
                          flush=True)
                    marks.pop(0)
        tracemalloc.stop()


def follow_cost(groups: list[list[str]], every: int, make) -> str:
    """Follow the whole log untraced; CPU and wall seconds, peak RSS (this process is fresh)."""
    with tempfile.TemporaryDirectory(prefix="bench-watch-") as tmp:
        path = Path(tmp) / "session.jsonl"
        path.write_text("")
        grow, _ = make(path)
        started, cpu = time.perf_counter(), time.process_time()
        with open(path, "a", encoding="utf-8") as handle:
            for at in range(0, len(groups), every):
                handle.write("".join(line + "\n" for group in groups[at:at + every] for line in group))
                handle.flush()
                done = grow()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return f"{time.process_time() - cpu:.2f} {time.perf_counter() - started:.2f} {rss:.1f} {done}"


def side_by_side(args) -> int:
    """`--base REV`: the baseline tree (git archive) and today's, each following the log in a fresh process."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-watch-base-") as tmp:
        archive = subprocess.run(["git", "archive", args.base, "tui_agent"], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        for label, tree in ((f"base {args.base}", Path(tmp)), ("now", ROOT)):
            for face in ("json", "tui"):
                command = [sys.executable, __file__, "--calls", str(args.calls), "--every", str(args.every),
                           "--cost", face]
                out = subprocess.run(command, env={**os.environ, "BENCH_TREE": str(tree)}, capture_output=True,
                                     text=True, check=True).stdout.split()
                rows.append((label, face, *map(float, out)))
    print(f"synthetic log: {args.calls} calls, a growth every {args.every} calls (untraced, fresh processes)")
    print(f"{'':<14} {'face':<5} {'CPU':>9} {'wall':>9} {'peak RSS':>10} {'calls':>7}")
    for label, face, cpu, wall, rss, done in rows:
        print(f"{label:<14} {face:<5} {cpu:>8.1f}s {wall:>8.1f}s {rss:>7.0f} MiB {done:>7.0f}")
    for face in ("json", "tui"):
        base, now = (r for r in rows if r[1] == face)
        print(f"{face}: CPU now / base = {now[2] / base[2]:.2f}, peak RSS now / base = {now[4] / base[4]:.2f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=MARKS[-1])
    parser.add_argument("--every", type=int, default=100, help="calls written per growth (default 100)")
    parser.add_argument("--only", choices=("json", "tui"), default=None)
    parser.add_argument("--base", help="measure following's CPU and peak RSS beside this revision instead")
    parser.add_argument("--cost", choices=("json", "tui"), help=argparse.SUPPRESS)  # one side of --base
    args = parser.parse_args()
    if args.base:
        return side_by_side(args)
    groups = synthetic_log(args.calls)
    if args.cost:
        print(follow_cost(groups, args.every, follow_json if args.cost == "json" else follow_tui))
        return 0
    size = sum(len(line) + 1 for group in groups for line in group)
    print(f"synthetic log: {args.calls} calls, {size / 2**20:.1f} MiB, a growth every {args.every} calls")
    for label, make in (("json", follow_json), ("tui", follow_tui)):
        if args.only in (None, label):
            measure(label, groups, args.every, make)
    return 0


if __name__ == "__main__":
    sys.exit(main())
