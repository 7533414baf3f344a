"""How sizes, money and counts read to a person: one module for every face (panel, meter, event lines,
headless, replay) and for the words compaction puts in a request, so "12.4k" means the same everywhere."""

from __future__ import annotations


def fmt_tokens(n: int) -> str:
    """812, 1.2k, 12.4k, 124k, 1.2M: the sizes people read in reasons and event lines."""
    if n < 1000:
        return str(n)
    if n < 100_000:
        return f"{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


def fmt_usd(amount: float) -> str:
    """Session cost: cents matter early on, so small amounts keep four decimals."""
    return f"${amount:.4f}" if amount < 1 else f"${amount:,.2f}"


def counted(count: int, word: str, plural: str | None = None) -> str:
    """"1 msg", "14 msgs", "1 prompt": every count says its noun in the right number."""
    return f"{count} {word if count == 1 else plural or word + 's'}"
