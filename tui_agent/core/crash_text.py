"""What of an exception a crash log may keep: where it happened (files, line numbers, functions, the
source lines of our own code) and what it was (its class), with its message cleaned of conversation.

Why: a traceback with locals held the prompt, tool output and the environment (the API key among them):
`tui-agent -p … | head` left them in a crash log. Locals are never taken now. A message is kept because
it is often the whole diagnosis ("'NoneType' object has no attribute 'call'"), but a message may quote
what it failed on, so it is cleaned, in this order:

- secrets, by value and by shape (`core/redact.py`: the one redaction of everything we show and store);
- quoted literals, unless they are a short name (an attribute, a key, a module): `'…'`;
- runs of words found in a conversation still open in this process (the sessions opened through
  `core/agent/door.py`): `[conversation text]`;
- long words mixing letters and digits (ids, hashes, tokens, addresses): `…`;
- only the first line, at most `MESSAGE_CHARS` characters.

An `OSError` keeps its errno and strerror, not the file name; a codec error its codec and reason, not the
bytes. Standard library only at the top (the crash path must not fail on an import).
"""

from __future__ import annotations

import re
import sys
from typing import Any

MESSAGE_CHARS = 300
WINDOW_WORDS = 3  # this many words in a row found in the conversation are its text, not the program's
LONG_WORD = 12  # one word this long found in the conversation is too

_QUOTED = re.compile(r"'([^'\n]*)'|\"([^\"\n]*)\"")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,39}")
_MIXED = re.compile(r"[A-Za-z0-9_\-+/=]{8,}")


def safe_message(error: BaseException, conversation: str = "") -> str:
    """The message of `error` as a crash log may keep it (see the module's docstring)."""
    if isinstance(error, OSError) and error.errno is not None:
        return f"[Errno {error.errno}] {error.strerror or ''}".rstrip()
    if isinstance(error, UnicodeError) and hasattr(error, "encoding"):
        return f"{getattr(error, 'encoding', '?')} codec: {getattr(error, 'reason', '?')}"
    try:
        text = str(error)
    except Exception:  # noqa: BLE001 - a message that cannot be made is no message
        return "(a message that could not be shown)"
    return clean(text, conversation)


def clean(text: str, conversation: str = "") -> str:
    lines = text.strip().splitlines() or [""]
    text = _redact_secrets(lines[0])
    text = _QUOTED.sub(_quoted, text)
    text = _without_conversation(text, conversation)
    text = _MIXED.sub(lambda m: "…" if _has_letter_and_digit(m.group(0)) else m.group(0), text)
    if len(lines) > 1:
        text += f" (+{len(lines) - 1} lines)"
    return text[:MESSAGE_CHARS] + ("…" if len(text) > MESSAGE_CHARS else "")


def _redact_secrets(text: str) -> str:
    try:
        from tui_agent.core.redact import redact
    except Exception:  # noqa: BLE001 - never a second crash
        return text
    return redact(text)


def _quoted(match: re.Match[str]) -> str:
    inner = match.group(1) if match.group(1) is not None else match.group(2)
    quote = match.group(0)[0]
    return match.group(0) if _NAME.fullmatch(inner) else f"{quote}…{quote}"


def _has_letter_and_digit(word: str) -> bool:
    return any(c.isdigit() for c in word) and any(c.isalpha() for c in word)


def _without_conversation(text: str, conversation: str) -> str:
    """Replace each run of `WINDOW_WORDS` words (or one word of `LONG_WORD`+ characters) that occurs in
    `conversation` with one `[conversation text]`."""
    if not conversation:
        return text
    words = text.split(" ")
    hidden = [False] * len(words)
    for start in range(len(words)):
        window = words[start:start + WINDOW_WORDS]
        if len(window) == WINDOW_WORDS and all(window) and " ".join(window) in conversation:
            hidden[start:start + WINDOW_WORDS] = [True] * WINDOW_WORDS
        elif len(words[start]) >= LONG_WORD and words[start].strip(".,:;!?()[]") in conversation:
            hidden[start] = True
    out: list[str] = []
    for word, gone in zip(words, hidden):
        if not gone:
            out.append(word)
        elif not out or out[-1] != "[conversation text]":
            out.append("[conversation text]")
    return " ".join(out)


def open_conversation() -> str:
    """Every text of the conversations open in this process, one string (searched, never written)."""
    door = sys.modules.get("tui_agent.core.agent.door")
    if door is None:
        return ""
    texts: list[str] = []
    try:
        for session in door.opened_sessions():
            for message in list(session.history):
                _strings(message, texts, depth=0)
    except Exception:  # noqa: BLE001 - a crash report must never raise a second crash
        pass
    return "\n".join(texts)


def _strings(value: Any, into: list[str], depth: int) -> None:
    if depth > 12:
        return
    if isinstance(value, str):
        into.append(value)
    elif isinstance(value, dict):
        for inner in value.values():
            _strings(inner, into, depth + 1)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            _strings(inner, into, depth + 1)
