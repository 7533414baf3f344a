"""The recap's row above the history: the request's ≡ recap (or summary) stands for the dropped span, so it
gets a row of its own, with the tokens it sends in the "sent" column and ┃ when the cache reads it.

A small object of the budget panel because it keeps one thing between redraws: the recap's tokens, counted
again only when the recap changed (it names every dropped prompt, so counting it is not free at 10k rows).
"""

from __future__ import annotations

from textual.content import Content

from tui_agent.core.agent.budget import recap_tokens
from tui_agent.core.formats import plural
from tui_agent.ui.budget_model import OutboundView, fmt_k
from tui_agent.ui.themes import MUTED
from tui_agent.ui.widgets.history_rows import BAR_CELLS, TOKENS_CELLS


class RecapRow:
    """The row's text for a view of the request, or None when the request has no recap to show."""

    def __init__(self) -> None:
        self._memo: tuple[object, bool, int] | None = None  # (recap, lead placeholder, its tokens)

    def content(self, view: OutboundView | None, width: int) -> Content | None:
        plan = view.plan if view is not None else None
        if view is None or plan is None or plan.recap is None or plan.recap_position is None:
            return None
        recap = plan.recap
        memo = self._memo
        if memo is None or memo[0] is not recap or memo[1] != plan.lead_placeholder:
            memo = self._memo = (recap, plan.lead_placeholder, recap_tokens(plan, view.messages))
        tokens = memo[2]
        what = "summary" if recap.summary else "recap"
        text = (f"{what} for {plan.recap_span()}: {plural(len(recap.prompts), 'prompt')}, "
                f"{plural(len(recap.files), 'file')}")
        width = max(width, 30)
        tail = f"{'':>{TOKENS_CELLS}} {fmt_k(tokens):>{TOKENS_CELLS}} {'':<{BAR_CELLS}}"
        room = max(width - 2 - len(tail), 4)
        text = text if len(text) <= room else text[: room - 1] + "…"
        return Content.assemble(("┃" if view.recap_in_cache else " ", "bold $text-accent"),
                                ("≡", "bold $text-primary"), (text.ljust(room), "$text-primary"), (tail, MUTED))


__all__ = ["RecapRow"]
