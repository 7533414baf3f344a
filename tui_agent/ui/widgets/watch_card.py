"""The watch card: the live figures of one recorded call, under the replay card (`tui-agent watch`).

The replay card already says what the agent sent and what we would; this adds what a live watch is for:
the cache hit share, a gap longer than the cache's time to live, the running cost in dollars of both, the
recorded compaction's `preTokens`, and what the agent's summary forgot with the coverage of its next
calls beside ours. Drawn from `core.call_figures` / `core.forgot` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

from tui_agent.core.sanitize import strip_controls
from tui_agent.ui.budget_model import fmt_k, fmt_usd, preview
from tui_agent.ui.themes import MUTED

if TYPE_CHECKING:
    from tui_agent.core.recordings.call_figures import CallFigures
    from tui_agent.core.recordings.forgot import CoverageAfter


def _usd(value: float | None) -> str:
    return fmt_usd(value) if value is not None else "price unknown"


def watch_content(figures: CallFigures, after: CoverageAfter | None = None, note: str = "") -> Content:
    gap = figures.gap_seconds
    if gap is None:
        gap_text = "first call" if figures.call == 1 else "gap unknown"
    else:
        gap_text = f"{gap:,.0f} s since the previous call" + (" — the cache had expired (written again)"
                                                              if figures.cache_expired else "")
    lines = [
        Content.assemble(("live      ", MUTED), (f"cache hit {figures.hit_share:.0%}", "bold"), (f" · {gap_text}",
                         "$text-warning" if figures.cache_expired else MUTED)),
        Content.assemble(("dollars   ", MUTED), f"recorded {_usd(figures.recorded_cost_usd)} this call, "
                         f"{_usd(figures.recorded_total_usd)} so far",
                         (f" · ours {figures.ours_cost.text()} this call", "$text-success"),
                         (f", {_usd(figures.ours_total_usd)} so far" if figures.ours_total_usd is not None else "",
                          "$text-success")),
    ]
    if figures.cache_miss_reason:
        missed = f" ({fmt_k(figures.cache_missed_tokens)} tokens)" if figures.cache_missed_tokens else ""
        lines.append(Content.assemble(("miss      ", "bold $text-warning"),
                                      f"the API says the cache missed: {figures.cache_miss_reason}{missed}"))
    for c in figures.agent_compactions:
        if c.kind == "boundary":
            pre = f"from {fmt_k(c.pre_tokens)} tokens" if c.pre_tokens is not None else "(no preTokens logged)"
            lines.append(Content.assemble(("agent     ", "bold $text-warning"), f"compact_boundary {pre}"))
    for lost in figures.forgot:
        lines.append(Content.assemble(("forgot    ", "bold $text-warning"),
                                      f"{len(lost.prompts)} of {lost.prompts_before} prompts, {len(lost.paths)} of "
                                      f"{lost.paths_before} touched paths are not named in its summary"))
        for text in list(lost.prompts[:3]) + list(lost.paths[:3]):
            lines.append(Content.styled(f"          ✗ {strip_controls(preview(text, 100))}", MUTED))
    if after is not None and after.calls:
        lines.append(Content.assemble(("coverage  ", MUTED), f"calls {after.calls[0]}–{after.calls[-1]}: agent "
                                      f"{after.recorded.value:.2f}", (f" · ours {after.ours.value:.2f}", "$text-success"),
                                      (" (of what its next replies use, the share still sent)", MUTED)))
    if note:
        lines.append(Content.styled(note, MUTED))
    return Content("\n").join(lines)


class WatchCard(Static):
    DEFAULT_CSS = """
    WatchCard { padding: 0 1; height: auto; }
    """

    def show(self, figures: CallFigures, after: CoverageAfter | None = None, note: str = "") -> None:
        self.update(watch_content(figures, after, note))
