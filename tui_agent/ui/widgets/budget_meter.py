"""The budget meter: one call's outbound tokens against the model's context window.

Its definition is printed with it, so the numbers cannot be read two ways: outbound = system prompt +
tool definitions + the (compacted) messages actually sent. The bar shows the baseline, the messages,
free space, the compaction threshold and the output reserve as separate segments. Estimates carry ≈;
when the API reports usage for the call, the exact number replaces the estimate.
"""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from tui_agent.ui.budget_model import Meter, fmt_k


class BudgetMeter(Widget):
    """Four lines: headline, segmented bar, segment key, history beside outbound."""

    DEFAULT_CSS = """
    BudgetMeter { height: 4; padding: 0 1; }
    """

    meter: reactive[Meter | None] = reactive(None)
    history: reactive[tuple[int, int, int]] = reactive((0, 0, 0))  # history tokens, history msgs, sent msgs

    def render(self) -> Content:
        meter = self.meter
        width = max(self.content_region.width, 10)
        history_tokens, history_count, sent_count = self.history
        if meter is None:
            return Content.assemble(
                ("No model call yet.", "bold"), "\n",
                ("outbound = system + tools + sent messages, per call", "$text-muted"), "\n\n",
                (f"history ≈{fmt_k(history_tokens)} tok · {history_count} msgs", "$text-muted"),
            )
        exact = meter.exact_total is not None
        total = meter.total
        approx = "" if exact else "≈"
        percent = total * 100 // meter.window if meter.window else 0
        headline = Content.assemble(
            (f"{meter.label} ", "bold"),
            (f"{approx}{total:,}", "bold $text"),
            f" / {fmt_k(meter.window)} tok ({percent}%)",
            (" API usage" if exact else " estimate", "$text-success" if exact else "$text-muted"),
        )
        key = Content.assemble(
            ("■", "$budget-baseline"), f" base {fmt_k(meter.baseline)} ",
            ("■", "$budget-messages"), f" msgs {approx}{fmt_k(max(total - meter.baseline, 0))} ",
            ("│", "$budget-threshold"), f" {fmt_k(meter.threshold)} ",
            ("▒", "$budget-reserve"), f" out {fmt_k(meter.reserve)}",
        )
        cached = f" · cached {fmt_k(meter.cache_read)}" if meter.cache_read else ""
        sizes = Content.assemble(
            ("history ", "$text-muted"), f"≈{fmt_k(history_tokens)} tok · {history_count} msgs",
            ("  sent ", "$text-muted"), f"{approx}{fmt_k(max(total - meter.baseline, 0))} · {sent_count} msgs{cached}",
        )
        return Content("\n").join([headline, self._bar(meter, width), key, sizes])

    @staticmethod
    def _bar(meter: Meter, width: int) -> Content:
        """Cells for baseline | messages | free | threshold tick | reserve; every non-zero part gets ≥1 cell."""
        window = max(meter.window, 1)

        def cells(tokens: int) -> int:
            return 0 if tokens <= 0 else max(1, round(tokens * width / window))

        reserve = cells(meter.reserve)
        base = cells(meter.baseline)
        used = cells(max(meter.total - meter.baseline, 0))
        over = base + used + reserve + 1 > width
        if over:  # past the threshold: the used part eats into the reserve, drawn in the threshold colour
            used = max(width - base, 0)
            return Content.assemble(("▇" * base, "$budget-baseline"), ("▇" * used, "$budget-threshold"))
        free = width - base - used - reserve - 1
        return Content.assemble(
            ("▇" * base, "$budget-baseline"),
            ("▇" * used, "$budget-messages"),
            ("░" * free, "$budget-free"),
            ("│", "bold $budget-threshold"),
            ("▒" * reserve, "$budget-reserve"),
        )
