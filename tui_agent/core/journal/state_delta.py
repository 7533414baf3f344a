"""The compactor's state in the journal as changes: a whole state now and then, deltas in between.

A whole exported state per call made a 3,000-prompt journal 188 MB for 21 MB of messages (88 % states,
each growing with the history): the file grew with messages × calls and `--continue` took 10 s to read it.
The state changes little from one call to the next (a mask or two appended to its lists, a few counters),
so each call's record holds only what changed (`diff`), and a whole state is written again only when the
deltas since the last whole one outweigh it (`JournalStates.record`): the file grows with the conversation.

A delta names the state it applies to and the state it makes, by a checksum of each (`checksum`): a lost
or hand-edited line breaks the chain visibly (`StateChain`), never silently into a different request.
Patches are plain JSON (`{"=": value}` replaces, `{"{": {key: patch}, "-": [keys]}` edits an object,
`{"[": [start, kept, tail]}` keeps `old[start:start + kept]` and appends `tail` to a list: masks and
variants are appended at the end and leave from the front when a drop takes their messages).
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any

_MISSING = object()


def checksum(state: Any) -> str:
    """A short fingerprint of a JSON value, independent of its keys' order."""
    text = json.dumps(state, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return format(zlib.crc32(text.encode("utf-8")), "08x")


def diff(old: Any, new: Any) -> dict[str, Any] | None:
    """A patch that turns `old` into `new` (None when they are equal)."""
    if old == new and _same(old, new):
        return None
    if isinstance(old, dict) and isinstance(new, dict):
        changed = {}
        for key, value in new.items():
            patch = diff(old.get(key, _MISSING), value)
            if patch is not None:
                changed[key] = patch
        removed = [key for key in old if key not in new]
        return {"{": changed, **({"-": removed} if removed else {})}
    if isinstance(old, list) and isinstance(new, list) and old and new:
        start, kept = _overlap(old, new)
        if kept:
            return {"[": [start, kept, new[kept:]]}
    return {"=": new}


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: Python's == takes True for 1 and 1.0 for 1, which JSON tells apart."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b)


def _overlap(old: list[Any], new: list[Any]) -> tuple[int, int]:
    """(start, length) of the longest run `old[start:start + length] == new[:length]`, trying the two
    shapes the state's lists take: a common head (appended at the end) and a head dropped from the front."""
    best = (0, _common_head(old, 0, new))
    try:
        start = old.index(new[0])
    except ValueError:
        return best
    length = _common_head(old, start, new)
    return (start, length) if length > best[1] else best


def _common_head(old: list[Any], start: int, new: list[Any]) -> int:
    length = 0
    limit = min(len(old) - start, len(new))
    while length < limit and old[start + length] == new[length] and _same(old[start + length], new[length]):
        length += 1
    return length


def apply(old: Any, patch: Any) -> Any:
    """`old` with `patch` applied (`old` is consumed: its containers may be reused). Raises ValueError on a
    patch that does not fit it."""
    if not isinstance(patch, dict) or len(patch.keys() - {"-"}) != 1:
        raise ValueError("not a state patch")
    if "=" in patch:
        return patch["="]
    if "{" in patch:
        if not isinstance(old, dict) or not isinstance(patch["{"], dict):
            raise ValueError("an object patch over something else")
        for key in patch.get("-", []):
            old.pop(key, None)
        for key, inner in patch["{"].items():
            old[key] = apply(old.get(key), inner)
        return old
    if "[" in patch:
        start, kept, tail = patch["["]
        if not isinstance(old, list) or not isinstance(tail, list) or not 0 <= start <= start + kept <= len(old):
            raise ValueError("a list patch over something else")
        return old[start:start + kept] + tail
    raise ValueError("not a state patch")


@dataclass
class JournalStates:
    """The writer's side: what was written last, and whether the next change goes out whole or as a delta."""

    last: Any = None
    last_sum: str | None = None
    since_whole: int = 0  # bytes of deltas written since the last whole state
    whole_size: int = 0

    def record(self, state: Any, encoded: str) -> dict[str, Any]:
        """The fields of the record that saves `state` (`encoded`: its JSON, already made by the caller)."""
        new_sum = checksum(state)
        patch = None if self.last is None else diff(self.last, state)
        fields: dict[str, Any]
        if patch is not None and self.since_whole + len(json.dumps(patch)) <= max(self.whole_size, 4096):
            fields = {"delta": patch, "base": self.last_sum, "check": new_sum}
            self.since_whole += len(json.dumps(patch))
        else:
            fields = {"state": state, "check": new_sum}
            self.since_whole, self.whole_size = 0, len(encoded)
        self.last, self.last_sum = state, new_sum
        return fields

    def forget(self) -> None:
        """The next state is written whole (a new file, or a new process appending to an old one)."""
        self.last, self.last_sum, self.since_whole, self.whole_size = None, None, 0, 0


@dataclass
class StateChain:
    """The reader's side: the newest state the records rebuild, or None with the reason it broke."""

    state: dict[str, Any] | None = None
    claimed: str | None = None  # the checksum the last record says `state` has (checked once, at the end)
    broken: str | None = None

    def whole(self, state: Any, check: Any) -> None:
        if not isinstance(state, dict):
            raise ValueError("state is not an object")
        self.state, self.claimed, self.broken = state, check if isinstance(check, str) else None, None

    def delta(self, patch: Any, base: Any, check: Any) -> None:
        if self.state is None:
            self.broken = self.broken or "a change of the compaction state has no whole state before it"
            return
        current = self.claimed if self.claimed is not None else checksum(self.state)
        if base != current:
            self.state, self.broken = None, "a change of the compaction state does not follow the one before it"
            return
        state = apply(self.state, patch)
        if not isinstance(state, dict) or not isinstance(check, str):
            raise ValueError("the changed state is not an object")
        self.state, self.claimed = state, check

    def result(self) -> tuple[dict[str, Any] | None, str | None]:
        """(the state, a warning): a chain whose end does not match its checksum gives no state."""
        if self.state is not None and self.claimed is not None and checksum(self.state) != self.claimed:
            return None, "the saved compaction state does not add up (a change of it was lost or edited)"
        return self.state, (self.broken if self.state is None else None)
