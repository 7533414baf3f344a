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


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`count` and its noun, the plural when count is not 1 (`many`: an irregular one, "entries")."""
    word = noun if count == 1 else (many or noun + "s")
    return f"{count:,} {word}"
