"""Benchmark: the budget panel's per-call update at 10,000 history messages vs 100 (target ≤ 1.5×).

Not a pytest test (timings on shared machines are noisy). Run it with:

    .venv/bin/python bench/bench_panel.py

For each history size it starts the real app headless, fills the history, lets the panel index it once,
then simulates model calls: two messages are appended (a tool_use and its result), compaction runs (the
core's cost, outside the timer), and the timer covers what the panel does for one `CompactionReported`:
the core budget ledger (cached/new split, price, events), indexing the new rows, the outbound view with
its per-row marks (plan.op, cached prefix, sent tokens), meter, sparkline, events list and recap row,
and rendering every visible row and the meter. The plans come from the v2 compactor. A second figure includes a full frame (`pilot.pause()`), which adds Textual's
own per-frame overhead.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tui_agent.core import events as ev  # noqa: E402
from tui_agent.core.compaction import Compactor, CompactPolicy  # noqa: E402
from tui_agent.core.messages import tool_result_block, user_text  # noqa: E402
from tui_agent.core.providers.scripted import ScriptedProvider  # noqa: E402
from tui_agent.core.agent.session import Session  # noqa: E402
from tui_agent.core.tools import ToolRegistry  # noqa: E402
from tui_agent.ui.app import AgentApp  # noqa: E402
from tui_agent.ui.widgets.budget_meter import BudgetMeter  # noqa: E402
from tui_agent.ui.widgets.budget_panel import BudgetPanel  # noqa: E402

CALLS = 40
POLICY = CompactPolicy(context_window=150_000, max_output_tokens=8_000, enabled=True)


def round_messages(i: int) -> list[dict]:
    use = {"role": "assistant", "content": [{"type": "text", "text": f"Reading file {i}."},
                                            {"type": "tool_use", "id": f"toolu_{i}", "name": "Read",
                                             "input": {"file_path": f"src/module_{i % 97}.py"}}]}
    result = {"role": "user", "content": [tool_result_block(f"toolu_{i}", f"line {i}\n" * (300 + i % 700))]}
    return [use, result]


def history_of(n: int) -> list[dict]:
    history: list[dict] = []
    i = 0
    while len(history) < n:
        if i % 6 == 0:
            history.append(user_text(f"question {i}: what does module {i % 97} do?"))
        else:
            history.extend(round_messages(i))
        i += 1
    return history[:n]


async def measure(n: int) -> tuple[float, float]:
    workspace = Path(tempfile.mkdtemp(prefix="bench-panel-"))
    session = Session(ScriptedProvider(), ToolRegistry(), workspace, compact_policy=POLICY)
    session.history.extend(history_of(n))
    app = AgentApp(session, session_label="bench", show_durations=False, run_background=False)
    app.animation_level = "none"
    update_times: list[float] = []
    frame_times: list[float] = []
    async with app.run_test(size=(140, 44)) as pilot:
        panel = app.screen.query_one(BudgetPanel)
        meter = panel.query_one(BudgetMeter)
        rows = panel.rows
        await pilot.pause()
        compactor = Compactor(POLICY, baseline_tokens=2100)
        compactor.compact(session.history)  # the first event (drops, masks) happens before the timed calls
        for call in range(1, CALLS + 1):
            session.history.extend(round_messages(n + call))
            result = compactor.compact(session.history)  # the core's work, not timed
            event = ev.CompactionReported(call, result.plan, len(session.history), 900, 1200, result.messages)
            start = time.perf_counter()
            panel.ledger.feed(event)  # the core budget ledger (a Session listener in the app)
            panel.on_compaction(event)
            for y in range(rows.scrollable_content_region.height):
                rows.render_line(y)
            meter.render()
            update_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            await pilot.pause()
            frame_times.append(time.perf_counter() - start)
    return statistics.median(update_times), statistics.median(frame_times)


async def main() -> None:
    results = {}
    for n in (100, 10_000):
        results[n] = await measure(n)
        update, frame = results[n]
        print(f"{n:>6} messages: panel update {update * 1000:7.3f} ms   frame (pilot.pause) {frame * 1000:7.2f} ms")
    ratio = results[10_000][0] / results[100][0]
    frame_ratio = results[10_000][1] / results[100][1]
    print(f"ratio 10,000 / 100: panel update {ratio:.2f}x (target ≤ 1.5x), with frame {frame_ratio:.2f}x")
    print("PASS" if ratio <= 1.5 else "FAIL")


if __name__ == "__main__":
    asyncio.run(main())
