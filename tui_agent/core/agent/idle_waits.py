"""How long this user stays away, read from the journals of their past sessions: the idle policy's prior.

A wait is the time between the last call of a turn and the first call after the person's next prompt, as the
journal stamped them (each `call` record's `at`, written when the call was planned and sent); a session's
end is a wait that never ended (`math.inf`), as in `idle_replay.session_waits`. Cheap by construction: the
newest `NEWEST` journals only, the last `TAIL_BYTES` of each, and no message is decoded: a `message` line is
a prompt when its first block is no tool result (the writer puts `type`, `at`, `index`, then the message,
whose keys are `role` then `content`). A line that does not fit is skipped: a prior is an estimate.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from tui_agent.core.idle import OWN_WEIGHT, PRIOR, Returns
from tui_agent.core.paths import SUFFIX, sessions_dir

NEWEST = 30  # journals read (the newest by modification time)
TAIL_BYTES = 1_000_000  # of each, from its end: a long session's recent waits are as good as its first
_CALL = b'{"type":"call"'
_MESSAGE = b'{"type":"message"'
_USER = b'"message":{"role":"user","content":'


def journal_waits(folder: Path, newest: int = NEWEST, skip: str | None = None) -> list[float]:
    """The waits of the newest `newest` journals in `folder` (`skip`: a session id left out), each session's
    end as one `math.inf`."""
    try:
        files = sorted((p for p in folder.glob(f"*{SUFFIX}") if p.is_file() and p.stem != skip),
                       key=lambda p: p.stat().st_mtime, reverse=True)[:newest]
    except OSError:
        return []
    waits: list[float] = []
    for path in files:
        try:
            waits += file_waits(_tail(path))
        except OSError:
            continue
    return waits


def file_waits(raw: bytes) -> list[float]:
    """The waits in one journal's bytes (see the module's docstring), and `inf` for its end if it made calls."""
    out: list[float] = []
    last_call: float | None = None
    prompt = False
    for line in raw.split(b"\n"):
        if line.startswith(_MESSAGE):
            head = line[:400]
            at = head.find(_USER)
            if at >= 0:
                rest = head[at + len(_USER):].lstrip()
                prompt = prompt or not rest.startswith(b'[{"type":"tool_result"')
        elif line.startswith(_CALL):
            when = _stamp(line)
            if when is None:
                continue
            if prompt and last_call is not None and when > last_call:
                out.append(when - last_call)
            prompt, last_call = False, when
    return [*out, math.inf] if last_call is not None else out


def prior_of(environ: Mapping[str, str] | None = None, session_id: str | None = None) -> Returns:
    """The idle policy's prior: the real sessions' waits (`idle.PRIOR`) beside this user's own past sessions'
    (each wait weighing one of the prior's; the prior's long breaks stay), and, for a resumed session, its own
    earlier waits (its journal, `session_id`) weighing as its waits in this process do (`OWN_WEIGHT`)."""
    folder = sessions_dir(environ if environ is not None else os.environ)
    waits = journal_waits(folder, skip=session_id)
    own: list[float] = []
    if session_id:
        try:
            own = [w for w in file_waits(_tail(folder / f"{session_id}{SUFFIX}")) if math.isfinite(w)]
        except OSError:
            own = []
    if not waits and not own:
        return PRIOR
    return PRIOR.with_waits(waits).with_waits(own, OWN_WEIGHT)


def _tail(path: Path) -> bytes:
    with path.open("rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(size - TAIL_BYTES, 0))
        raw = handle.read(TAIL_BYTES)
    if size > TAIL_BYTES:
        raw = raw[raw.find(b"\n") + 1:]  # the first line read is cut
    return raw


def _stamp(line: bytes) -> float | None:
    head = line[:120].decode("utf-8", "replace")
    start = head.find('"at":"')
    end = head.find('"', start + 6) if start >= 0 else -1
    if end < 0:
        return None
    try:
        return datetime.fromisoformat(head[start + 6:end].replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


__all__ = ["file_waits", "journal_waits", "prior_of"]
