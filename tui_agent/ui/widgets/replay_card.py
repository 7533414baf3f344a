"""The replay card: one recorded call in words, beside the budget panel that draws our plan for it.

It answers the questions a replay is for: how big was the request the agent really sent, how close is
our estimate of it, where did the agent compact its own context, what would we have sent, and what
would each strategy have cost by now. Drawn from a `ReplayStep` only (the core made every number).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

from tui_agent.core.messages import blocks
from tui_agent.core.models import UNIT_NAME
from tui_agent.core.recordings.replay import LABELS, OURS, strategy_cost
from tui_agent.core.sanitize import strip_controls
from tui_agent.ui.budget_model import counted, fmt_k, fmt_usd, preview
from tui_agent.ui.themes import MUTED

if TYPE_CHECKING:
    from tui_agent.core.models import InputCost
    from tui_agent.core.recordings.replay import Replay, ReplayStep


def cost_lines(replay: "Replay", step: "ReplayStep") -> list[Content]:
    """The running cost of each strategy: this call and so far, in dollars when the model's price is known
    (else in new-token equivalents), and as a share of the append-only conversation's. A call's figure is
    `replay.strategy_cost`'s, the one the budget meter beside the card shows for our request."""
    base = step.costs.get("none")
    priced = replay.unit_price_usd() is not None
    lines = [Content.styled(f"{'cost':<12} {'this call':>9} {'so far':>9} {'÷append':>8}", f"bold {MUTED}")]
    for name, cost in step.costs.items():
        now, total = strategy_cost(replay, cost.cost), strategy_cost(replay, cost.total_cost)
        ratio = f"{cost.total_cost / base.total_cost:.3f}×" if base is not None and base.total_cost else "–"
        row = f"{LABELS.get(name, name):<12} {_amount(now):>9} {_amount(total):>9} {ratio:>8}"
        lines.append(Content.styled(row, "bold $text-success" if name == OURS else ""))
    note = strategy_cost(replay, 0.0).note()
    lines.append(Content.styled(f"(input at list price: {note})" if priced else f"(in {UNIT_NAME}: {note})", MUTED))
    return lines


def _amount(cost: "InputCost") -> str:
    return fmt_usd(cost.usd) if cost.usd is not None else fmt_k(round(cost.units))


def reply_preview(replay: "Replay", step: "ReplayStep") -> str:
    """What the agent answered at this call: its text, or the tools it called (control characters out:
    a log is untrusted text)."""
    if step.history_len >= len(replay.history):
        return "(no reply recorded)"
    content = blocks(replay.history[step.history_len])
    text = " ".join(b.get("text", "") for b in content if b.get("type") == "text").strip()
    uses = [b.get("name", "?") for b in content if b.get("type") == "tool_use"]
    out = preview(text, 160) if text else ""
    if uses:
        out += (" → " if out else "→ ") + ", ".join(str(u) for u in uses)
    return strip_controls(out) or "(thinking only)"


def card_content(replay: "Replay", step: "ReplayStep", sent: int | None = None) -> Content:
    """The card of a step; `sent`: the exact request's own message count (a proxy recording), said first:
    the history folds an agent's messages its own way (merged roles, system reminders)."""
    real, estimate = step.real_tokens, step.estimate.ours
    off = (estimate - real) * 100 / real if real else 0.0
    how = "right on" if round(off, 1) == 0 else f"{abs(off):.1f}% {'low' if off < 0 else 'high'}"
    usage = step.usage
    plan = step.plan
    cuts = sum(len(v) for v in plan.cuts.values())
    masks = sum(len(v) for v in plan.masks.values())
    lines: list[Content] = [
        Content.assemble((f"Call {step.number}", "bold"), (f" of {replay.calls}", MUTED),
                         (f" · history so far: {counted(step.history_len, 'message')}", MUTED) if sent is None else
                         (f" · its request: {counted(sent, 'message')} (history so far: {step.history_len})", MUTED)),
        Content.assemble(("recorded  ", MUTED), (f"{real:,} tok", "bold"), (" real, from the log", "$text-success"))
        if usage else Content.assemble(("recorded  ", MUTED), (f"≈{real:,} tok", "bold"),
                                       (" the agent's own estimate (its model reported no usage)", MUTED)),
        Content.styled(f"          uncached {fmt_k(usage.get('input_tokens', 0))} · cache written "
                       f"{fmt_k(usage.get('cache_creation_input_tokens', 0))} · cache read "
                       f"{fmt_k(usage.get('cache_read_input_tokens', 0))}" if usage else "", MUTED),
        Content.assemble(("estimator ", MUTED), f"≈{round(estimate):,} tok",
                         (f" our estimate of that recorded request: {how}", MUTED)),
        Content.assemble(("ours      ", MUTED), (f"≈{round(step.ours_tokens):,} tok", "bold"),
                         (" what our compactor sends, on the fitted ruler", MUTED)),
        Content.styled(f"          {counted(plan.sent_count, 'msg')} sent · {plan.dropped_count} dropped · {cuts} cut · "
                       f"{masks} masked", MUTED),
    ]
    if step.idle:
        lines.append(Content.assemble(("waited    ", MUTED), strip_controls(step.idle)))
    reason = step.miss_reason
    if reason is not None:
        missed = f" ({fmt_k(reason[1])} tokens)" if reason[1] else ""
        lines.append(Content.assemble(("miss      ", "bold $text-warning"),
                                      f"the API says this call's cache missed: {reason[0]}{missed}"))
    if step.event_line:
        lines.append(Content.assemble(("our event ", "bold $text-warning"), strip_controls(step.event_line)))
    if step.agent_compactions:
        for c in step.agent_compactions:
            lines.append(Content.assemble(("agent     ", "bold $text-warning"),
                                          (f"compacted before this call (#{c.index}, {c.kind}): ", "$text-warning"),
                                          strip_controls(preview(c.text, 120))))
    else:
        # a boundary and its summary are one compaction: count the calls they came before
        earlier = sorted({c.call for c in replay.agent_compactions if 0 < c.call < step.number})
        note = (f"compacted {len(earlier)}× so far (last before call {earlier[-1]}); its request starts at "
                f"#{step.recorded_start}") if earlier else "has not compacted yet: it sends every message"
        lines.append(Content.assemble(("agent     ", MUTED), (note, MUTED)))
    lines.append(Content(""))
    lines += cost_lines(replay, step)
    lines.append(Content(""))
    lines.append(Content.assemble(("reply     ", MUTED), reply_preview(replay, step)))
    events = replay.event_calls()
    if events:
        listed = ", ".join(f"{k + 1} ({what})" for k, what in events[:8]) + (" …" if len(events) > 8 else "")
        lines.append(Content.styled(f"events at calls {listed}", MUTED))
    return Content("\n").join(lines)


class ReplayCard(Static):
    DEFAULT_CSS = """
    ReplayCard { padding: 0 1; height: auto; }
    """

    def show(self, replay: "Replay", step: "ReplayStep", sent: int | None = None) -> None:
        self.update(card_content(replay, step, sent))
