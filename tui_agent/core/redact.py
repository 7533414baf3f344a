"""Secrets out of what we show and store (never out of what the model is sent): the one redaction.

The journal never sees request headers or the environment, but secrets reach the history anyway: a key
typed in a prompt, a `.env` file read, `env` run in Bash. As a second line of defence every line is
redacted before it is written. A server can echo a key too: a gateway's 401 that quotes the key it was
sent showed ~85 characters of it on the chat line, the panel and in `TRACE=1` lines. So text from a
server passes the same redaction wherever it is shown or stored (`redact`: the turn's events, trace
lines, the journal, crash logs, ACP and `serve`, OpenTelemetry attributes), with every key this process
sends (`remember_sent`) beside the environment's. What is promised, exactly (README "Security model"):

- by value: every key a provider of this process sends (`remember_sent`), and the value of every
  environment variable of this process whose *name* looks secret
  (`*SECRET*`, `*TOKEN*`, `*PASSWORD*`/`*PASSWD*`, `*CREDENTIAL*`, `*_KEY`, `*API_KEY*`, `*PRIVATE_KEY*`)
  and is at least 8 characters long; also a cut copy of one (a kept head or tail of 12+ characters,
  which is what a truncated tool output leaves);
- by shape, wherever they come from: Anthropic/OpenAI keys (`sk-…` with a digit in 20+ characters),
  AWS access key ids (`AKIA` + 16), GitHub tokens (`ghp_…`, `gho_…`, `ghs_…`, `ghu_…`, `ghr_…`,
  `github_pat_…`), the token after `Bearer`/`Basic` (an `Authorization:` header; a token has a digit, a
  symbol or an inner capital, so "basic exploration" in prose is left alone), and PEM private key
  blocks (a cut block from its BEGIN line on);
- by assignment: `NAME=value` / `NAME: value` where NAME is an upper-case secret-looking name (env output,
  `.env` files), for values of 8+ characters with a letter.

Not promised: secrets of other shapes under innocent names, secrets split across lines or encoded
(base64 of a key), short values. The redaction works on a copy of the record's strings, never on the
JSON text, so every line stays valid JSON.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import Any, Mapping

from tui_agent.core import events as ev

REDACTED = "[redacted]"
MIN_SECRET = 8  # shorter values (`1`, `true`, `dev`) would redact ordinary text
CUT_PIECE = 12  # a kept head or tail of a secret this long is still the secret

SECRET_NAME = re.compile(r"SECRET|TOKEN|PASSW(?:OR)?D|CREDENTIAL|API_?KEY|PRIVATE_KEY|_KEY$|^KEY$", re.I)

# (each pattern starts with its literal and looks behind after it: the scan for a literal is fast)
_SHAPES = [re.compile(shape) for shape in (
    r"sk-ant-[A-Za-z0-9_\-]{16,}",  # distinctive enough to catch inside a word too
    r"sk-(?<![A-Za-z0-9_\-]sk-)(?=[A-Za-z_\-]*[0-9])[A-Za-z0-9_\-]{20,}",
    r"AKIA(?<![A-Z0-9]AKIA)[0-9A-Z]{16}(?![A-Z0-9])",
    r"gh(?<![A-Za-z0-9_]gh)[pousr]_[A-Za-z0-9]{30,}",
    r"github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{22,}",
    r"(?s)-----BEGIN ([A-Z ]*)PRIVATE KEY-----.*?(?:-----END \1PRIVATE KEY-----|\Z)",  # a cut one too
)]
_AFTER = [  # (prefix kept, value redacted)
    re.compile(r"([Bb](?:earer|EARER|asic|ASIC)(?<![A-Za-z0-9_][Bb]earer)(?<![A-Za-z0-9_][Bb]asic)\s+)"
               r"[A-Za-z0-9._~+/\-]{8,}=*"),
    re.compile(r"([A-Z][A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIALS?|API_KEY|_KEY)[A-Z0-9_]*"
               r"(?:=|: ?))(?=[^\s\"'\\]*[A-Za-z])[^\s\"'\\]{8,}"),
]


def secret_values(environ: Mapping[str, str]) -> list[str]:
    """Values of secret-named variables long enough to be a real secret, longest first."""
    values = {v for k, v in environ.items() if SECRET_NAME.search(k) and len(v) >= MIN_SECRET
              and not v.isdigit() and not v.startswith(("/", "~"))}  # (a limit or a file path: not the secret)
    return sorted(values, key=len, reverse=True)


@dataclass(frozen=True)
class Secrets:
    """The environment's secret values, and the heads and tails that a cut copy of a long one keeps."""

    values: tuple[str, ...] = ()
    heads: tuple[str, ...] = ()
    tails: tuple[str, ...] = ()

    @classmethod
    def of(cls, values: list[str]) -> "Secrets":
        long = [v for v in values if len(v) >= 2 * CUT_PIECE]
        return cls(tuple(values), tuple(v[:CUT_PIECE] for v in long), tuple(v[-CUT_PIECE:] for v in long))


def redact_text(text: str, secrets: Secrets = Secrets()) -> str:
    """`text` with every secret this module knows replaced by `[redacted]`."""
    for value in secrets.values:
        if value in text:
            text = text.replace(value, REDACTED)
    for head in secrets.heads:
        text = _extend(text, head, right=True)
    for tail in secrets.tails:
        text = _extend(text, tail, right=False)
    for shape in _SHAPES:
        text = shape.sub(REDACTED, text)
    text = _AFTER[0].sub(lambda match: match.group(1) + REDACTED if _credential(match.group(0)[len(match.group(1)):])
                         else match.group(0), text)
    text = _AFTER[1].sub(lambda match: match.group(1) + REDACTED, text)
    return text


def _credential(token: str) -> bool:
    """Whether the word after `Bearer`/`Basic` looks like a credential, not prose ("basic exploration",
    "Bearer Authentication"): a digit, a symbol of the token alphabet, or a capital after its first letter."""
    return any(c.isdigit() or c in "._~+/=-" for c in token) or any(c.isupper() for c in token[1:])


def _extend(text: str, piece: str, right: bool) -> str:
    """Redact each `piece` of a secret with the rest of its word (a cut copy: head kept, or tail)."""
    start = text.find(piece)
    while start >= 0:
        end = start + len(piece)
        if right:
            while end < len(text) and not text[end].isspace() and text[end] not in "\"'":
                end += 1
        else:
            while start > 0 and not text[start - 1].isspace() and text[start - 1] not in "\"'":
                start -= 1
        text = text[:start] + REDACTED + text[end:]
        start = text.find(piece, start + len(REDACTED))
    return text


def redact_record(value: Any, secrets: Secrets = Secrets()) -> Any:
    """A redacted copy of a JSON-able record (the history's own dicts are never changed)."""
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, dict):
        return {redact_text(key, secrets) if isinstance(key, str) else key: redact_record(inner, secrets)
                for key, inner in value.items()}
    if isinstance(value, list):
        return [redact_record(inner, secrets) for inner in value]
    return value


# -- the one redaction of text from a server -------------------------------------------------------------
_SENT: set[str] = set()  # the keys this process sends (a provider's), whatever variable or file they came from


def remember_sent(value: str) -> None:
    """A key a provider of this process sends: redacted from then on wherever `redact` is used."""
    if len(value) >= MIN_SECRET:
        _SENT.add(value)


def known_secrets(environ: Mapping[str, str] | None = None) -> Secrets:
    """The keys this process sends and the environment's secret values (`environ`: os.environ)."""
    values = set(secret_values(os.environ if environ is None else environ)) | _SENT
    return Secrets.of(sorted(values, key=len, reverse=True))


def redact(text: str) -> str:
    """`text` (from a server: an error body, a notice, a trace field) as we may show or store it."""
    return redact_text(text, known_secrets()) if text else text


# The events whose text can come from a server, and the fields that hold it.
_SERVER_TEXT: dict[type, tuple[str, ...]] = {ev.Notice: ("text",), ev.TurnEnded: ("error",),
                                             ev.ServerEdited: ("summary",), ev.SummaryWritten: ("error",),
                                             ev.KeepWarmStopped: ("detail",)}


def redact_event(event: Any) -> Any:
    """`event` with the server's text in it redacted (the same event when nothing changed)."""
    names = _SERVER_TEXT.get(type(event))
    if not names:
        return event
    changed = {name: redact(value) for name in names
               if isinstance(value := getattr(event, name, None), str) and value}
    changed = {name: value for name, value in changed.items() if value != getattr(event, name)}
    return replace(event, **changed) if changed else event


