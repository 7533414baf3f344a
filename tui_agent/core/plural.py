"""One way to say a count with its noun ("1 call", "2 calls", "1,204 lines"): every face's count-noun text
uses it, so no line says "1 old tool results" or "maximum of 1 model calls"."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`count` and its noun, the plural when count is not 1 (`many`: an irregular one, "entries")."""
    word = noun if count == 1 else (many or noun + "s")
    return f"{count:,} {word}"


def noun_for(count: int, noun: str, many: str | None = None) -> str:
    """The noun alone, agreeing with `count` (for a sentence that puts words between the number and it)."""
    return noun if count == 1 else (many or noun + "s")
