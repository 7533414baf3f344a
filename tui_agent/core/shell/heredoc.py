"""Here-documents as the permission scanner sees them: a body is data, not code.

Scanning a body as shell text let an apostrophe in it (`it's`) open a quote that hid the real commands
after the body from the deny rules. The scanner (shell_words) now reads the delimiter word where `<<`
or `<<-` stands and skips each body at the end of its command line, as bash does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Heredoc:
    """A here-document announced on a command line; its body starts after the line's newline."""

    delimiter: str
    quoted: bool  # `<<'EOF'`: the body is plain data; unquoted, `$(…)` in it runs
    strip_tabs: bool  # `<<-`
    end: int  # index just past the delimiter word


DELIMITER_STOP = frozenset(" \t\n;&|<>()")


def heredoc_word(text: str, i: int) -> Heredoc | None:
    """The here-document whose `<<` / `<<-` is at `i`; None when no delimiter word follows."""
    strip_tabs = text.startswith("<<-", i)
    i += 3 if strip_tabs else 2
    n = len(text)
    while i < n and text[i] in " \t":
        i += 1
    word: list[str] = []
    quoted = False
    while i < n and text[i] not in DELIMITER_STOP:
        char = text[i]
        if char == "\\" and i + 1 < n:
            word.append(text[i + 1])
            quoted, i = True, i + 2
            continue
        if char in "'\"":
            end = text.find(char, i + 1)
            if end < 0:
                return None
            word.append(text[i + 1:end])
            quoted, i = True, end + 1
            continue
        word.append(char)
        i += 1
    if not word:
        return None
    return Heredoc("".join(word), quoted, strip_tabs, i)


def skip_bodies(text: str, i: int, pending: list[Heredoc],
               doubt: Callable[[str], None] | None) -> int:
    """Skip the bodies of `pending` here-documents starting at `i`; the index after the last one.

    A body is data, except that an unquoted delimiter lets `$(…)` and backticks in it run: that, and a
    body that never ends, is reported to `doubt` (the deny side then asks)."""
    n = len(text)
    for doc in pending:
        rows: list[str] = []
        while True:
            if i >= n:
                if doubt:
                    doubt("here-document without its end line")
                pending.clear()
                return n
            newline = text.find("\n", i)
            end = n if newline < 0 else newline
            row = text[i:end]
            i = end + 1 if newline >= 0 else n
            if (row.lstrip("\t") if doc.strip_tabs else row) == doc.delimiter:
                break
            rows.append(row)
        if doubt and not doc.quoted and any("$(" in row or "`" in row for row in rows):
            doubt("command substitution in an unquoted here-document")
    pending.clear()
    return i
