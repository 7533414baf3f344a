"""The budget meter: one call's outbound tokens against the model's context window.

Its definition is printed with it, so the numbers cannot be read two ways: outbound = system prompt +
tool definitions + the (compacted) messages actually sent. The bar shows the baseline, the messages,
free space, the compaction threshold and the output reserve as separate segments. Estimates carry ≈
(scaled by the last real usage when the provider reports usage: "calibrated", still ≈); when the API
reports usage for the call, the exact number replaces the estimate. Below the bar: an exact count on
demand (`/context` or `c`, beside the estimate it checks) and the last call's cache split, since
cached input is what makes a long session affordable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from tui_agent.ui.budget_model import Meter, cache_parts, fmt_k
from tui_agent.ui.themes import MUTED

if TYPE_CHECKING:
    from tui_agent.core.events import Usage


class BudgetMeter(Widget):
    """Headline, optional exact count, segmented bar, segment key, sizes, optional cache split."""

    DEFAULT_CSS = """
    BudgetMeter { height: auto; padding: 0 1; }
    """

    meter: reactive[Meter | None] = reactive(None, layout=True)
    history: reactive[tuple[int, int, int]] = reactive((0, 0, 0))  # history tokens, history msgs, sent msgs
    usage: reactive["Usage | None"] = reactive(None, layout=True)  # the last call's API usage
    exact: reactive[Content | None] = reactive(None, layout=True)  # exact count (or why not) for `meter`

    def watch_meter(self, old: Meter | None, new: Meter | None) -> None:
        """A count belongs to the outbound copy it measured: a new call or preview makes it stale."""
        if old is None or new is None or (old.label, old.messages, old.system, old.tools) != (
                new.label, new.messages, new.system, new.tools):
            self.exact = None

    def render(self) -> Content:
        meter = self.meter
        width = max(self.content_region.width, 10)
        history_tokens, history_count, sent_count = self.history
        if meter is None:
            return Content.assemble(
                ("No model call yet.", "bold"), "\n",
                ("outbound = system + tools + sent messages, per call", MUTED), "\n",
                self.exact or "", "\n",
                (f"history ≈{fmt_k(history_tokens)} tok · {history_count} msgs", MUTED),
            )
        exact = meter.exact_total is not None
        total = meter.total
        approx = "" if exact else "≈"
        percent = total * 100 // meter.window if meter.window else 0
        kind = ("API usage", "$text-success") if exact else (
            ("calibrated", MUTED) if meter.calibrated else ("estimate", MUTED))
        headline = Content.assemble(
            (f"{meter.label} ", "bold"),
            (f"{approx}{total:,}", "bold $text"),
            f" / {fmt_k(meter.window)} tok ({percent}%) ",
            kind,
        )
        key = Content.assemble(
            ("■", "$budget-baseline"), f" base {fmt_k(meter.baseline)} ",
            ("■", "$budget-messages"), f" msgs {approx}{fmt_k(max(total - meter.baseline, 0))} ",
            ("│", "$budget-threshold"), f" {fmt_k(meter.threshold)} ",
            ("▒", "$budget-reserve"), f" out {fmt_k(meter.reserve)}",
        )
        sizes = Content.assemble(
            ("history ", MUTED), f"≈{fmt_k(history_tokens)} tok · {history_count} msgs",
            ("  sent ", MUTED), f"{approx}{fmt_k(max(total - meter.baseline, 0))} · {sent_count} msgs",
        )
        lines = [headline]
        if self.exact is not None:
            lines.append(self.exact)
        lines += [self._bar(meter, width), key, sizes]
        if self.usage is not None:
            lines.append(self._cache_line(self.usage))
        return Content("\n").join(lines)

    @staticmethod
    def _cache_line(usage: "Usage") -> Content:
        """The last call's input split: read from the cache, written to it, and sent uncached."""
        text, share = cache_parts(usage.cache_read_input_tokens, usage.cache_creation_input_tokens,
                                  usage.input_tokens)
        return Content.assemble(
            text, "\n",
            (f"call #{usage.call} input {fmt_k(usage.context_tokens)} · ", MUTED),
            (f"{share}% read from cache", "$text-success" if share >= 50 else MUTED),
        )

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
