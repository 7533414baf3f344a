"""The journal's record format: version 2, one JSON object per line, each with a `type`.

Records are plain JSON dicts on disk (the file is meant to be read by people and other tools too), but
everything that is read back goes through the typed classes here and in `reader.py`. The format version
is in the header; a reader refuses a newer version instead of guessing at it. Version 2 saves the
compactor's state as changes (`state_delta.py`); version 1 files (every state whole) are read as before.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import asdict, dataclass
from typing import Any

FORMAT_VERSION = 2

# record types
HEADER = "header"
MESSAGE = "message"  # {"index": i, "message": {...}}: one finalized history entry
CALL = "call"  # one model call: model, plan digest, estimate, history length
USAGE = "usage"  # the API's usage for a call, its price, the calibration learned from it
COMPACTION_STATE = "compaction_state"  # the compactor's sticky decisions when they changed: whole, or a delta
COMPACTION_CHANGE = "compaction_change"  # a pin / exclude / expand by the user (state follows)
LEGACY_CACHE_PREFIX = "cache_prefix"  # written by older versions; the plan carries the stable prefix now
PERMISSION = "permission"  # a permission answer, by request id
MODEL = "model"  # a model switch
CLEARED = "cleared"  # /clear: the conversation continues in the `next` session file
RESUMED = "resumed"  # a process reopened this session
PING = "ping"  # a keep-warm ping's usage and price: paid for like a call, no call of the conversation
IDLE = "idle"  # the idle policy's choice while the session waited: ping / compact / cold, each priced
IDLE_EVENT = "idle_event"  # an idle compaction's words, until the call whose request it made carries them


class JournalError(Exception):
    """A journal that cannot be used at all (unreadable, not a journal, newer format): one clear line."""


@dataclass(frozen=True)
class Header:
    session_id: str
    workspace: str
    model: str
    provider: str
    started: str
    tui_agent_version: str
    format: int = FORMAT_VERSION
    parent: str | None = None  # the session this one continues after /clear
    source: str | None = None  # e.g. the Claude Code transcript it was loaded from

    def record(self) -> dict[str, Any]:
        return {"type": HEADER, **asdict(self)}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "Header":
        try:
            return cls(
                session_id=str(record["session_id"]),
                workspace=str(record["workspace"]),
                model=str(record.get("model", "")),
                provider=str(record.get("provider", "")),
                started=str(record.get("started", "")),
                tui_agent_version=str(record.get("tui_agent_version", "")),
                format=int(record["format"]),
                parent=_text(record.get("parent")),
                source=_text(record.get("source")),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise JournalError(f"the header is incomplete ({error})") from error


def _text(value: Any) -> str | None:
    """An optional header field: text or nothing (a number or an object there is not a session link)."""
    return value if isinstance(value, str) else None


def now_iso() -> str:
    """UTC with milliseconds: what `sessions` sorts by (`--continue` takes the newest), so two sessions
    active in the same second still sort in order."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


def new_session_id() -> str:
    """`20261201-091106-3fa2c1`: sorts by start time, unique enough to type a prefix of."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


def dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))
