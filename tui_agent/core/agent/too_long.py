"""What an API's "prompt is too long" answer teaches: the real size and limit it names, and, when the real
window is no larger than the output reserve, a max_tokens that leaves the conversation room."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tui_agent.core.models import for_model

if TYPE_CHECKING:
    from tui_agent.core.compaction.protocol import CompactorProtocol
    from tui_agent.core.providers.base import Provider

_TOO_LONG = re.compile(r"(\d[\d,]*)\s*tokens?\s*>\s*(\d[\d,]*)")


def too_long_numbers(message: str) -> tuple[int | None, int | None]:
    """(real tokens, limit) from "prompt is too long: 210,345 tokens > 200000 maximum", when present."""
    match = _TOO_LONG.search(message or "")
    if not match:
        return None, None
    return int(match.group(1).replace(",", "")), int(match.group(2).replace(",", ""))


RESERVE_SHARE = 4  # a window learned smaller than the output reserve keeps a quarter of it for the answer


def fit_output_reserve(provider: Provider, compactor: CompactorProtocol, limit: int | None) -> str | None:
    """The API's real window (`limit`) is no larger than the output reserve (max_tokens): the budget for
    messages would be nothing (every call an event, every read cut, "≈0 tokens left of 1"). Lower
    max_tokens to a quarter of the real window, for this session, and say so (once: it then fits)."""
    reserve = provider.max_output_tokens
    if not limit or limit > reserve:
        return None
    lowered = max(limit // RESERVE_SHARE, 1)
    price = for_model(provider.model)
    # the claimed window here: `too_long` then lowers the marks to the real one and remembers it
    compactor.retarget(provider.context_window, lowered, price.read, price.write)
    provider.max_output_tokens, provider.context_window = lowered, limit  # the panel's figures too
    return (f"The API's context window is {limit:,} tokens, not larger than the output reserve "
            f"(max_tokens {reserve:,}): max_tokens is lowered to {lowered:,} for this session so the "
            f"conversation has room (--max-output-tokens sets it).")
