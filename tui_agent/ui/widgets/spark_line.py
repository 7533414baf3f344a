"""The panel's per-call sparkline: one bar per model call, with a tick under each compaction event.

Both lines fit the panel's width whatever the number of calls (430 calls and 4 events wrapped onto a
third line): the bars show the newest calls that fit, and the event count is said in as many words as
the room left allows.
"""

from __future__ import annotations

from textual.content import Content

from tui_agent.core.agent.budget import BudgetLedger
from tui_agent.ui.budget_model import counted, fmt_k, spark
from tui_agent.ui.themes import MUTED


def spark_line(ledger: BudgetLedger, width: int) -> Content:
    """The sparkline of `ledger`'s calls in `width` cells (and its event ticks, if any)."""
    calls = ledger.calls
    if not calls:
        return Content.styled("calls: none yet", MUTED)
    values = [calls[k] for k in sorted(calls)]
    label = f"calls {len(values)} "
    peak = f" peak {fmt_k(max(values))}"
    last = max(calls)
    if last in ledger.exact_calls:  # the real number for the last call, beside the estimate of the next
        peak += f" · last {calls[last]:,} API"
    room = max(width - 2 - len(label) - len(peak), 4)
    keys = sorted(calls)[-room:]
    line = spark([calls[k] for k in keys], room)
    ticks = "".join("╵" if k in ledger.event_calls else " " for k in keys)
    parts: list = [(label, MUTED), (line, "$budget-messages"), (peak, MUTED)]
    if "╵" in ticks:
        count, left = ledger.event_count, width - 2 - len(label) - len(ticks)
        words = [f" {counted(count, 'compaction event')}", f" {counted(count, 'event')}", f" {count}"]
        parts += ["\n", (" " * len(label), MUTED), (ticks, "bold $budget-truncated"),
                  (next((w for w in words if len(w) <= left), ""), MUTED)]
    return Content.assemble(*parts)


__all__ = ["spark_line"]
