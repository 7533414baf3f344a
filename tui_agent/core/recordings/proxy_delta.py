"""A proxy recording's requests stored as what each adds to an earlier one, and read back whole.

Why: an agent's request is its previous request plus a few messages, so a recording that stores each
request whole grows with the square of the session (13.4 MB for 63 calls). `DeltaWriter` stores a request as
a delta against the recent request it shares the longest run of leading messages with (the conversation's
previous call, usually): how many of that request's messages it keeps, the cache marks that moved among them
(Claude Code moves its `cache_control` to the newest messages on every call; the messages are otherwise the
same), the messages it adds, and the top-level fields that changed. A recording then grows with what the
session adds. `RequestChain` reads the lines back in order and gives each exchange's request whole again; a
recording made before deltas (every request whole) reads the same way.

The line of a delta exchange has `"request": null` and `"request_delta": {"base": seq, "keep": n, "marks":
{"i": [[j, cache_control], ...]}, "add": [...], "set": {...}, "unset": [...]}`, where `seq` numbers every
exchange line from 1 and `j` is a content block's index (-1: the message's own mark). A base is one of the
last `WRITER_KEEPS` exchanges written; a reader keeps twice as many.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any

WRITER_KEEPS = 16  # the recent requests a delta may be against
READER_KEEPS = 2 * WRITER_KEEPS
LIST_KEYS = {"anthropic-messages": "messages", "anthropic-count-tokens": "messages", "openai-chat": "messages",
             "openai-responses": "input"}

Mark = tuple[int, str]  # (block index or -1, the cache_control as JSON)


def _digest(value: Any) -> str:
    """A digest of a JSON value, fed to the hash piece by piece (a 20 MB message is not serialised again)."""
    digest = hashlib.blake2b(digest_size=16)
    try:
        _feed(digest, value)
    except RecursionError:
        digest.update(json.dumps(value, sort_keys=True, default=str).encode("utf-8", errors="replace"))
    return digest.hexdigest()


def _feed(digest: Any, value: Any) -> None:
    if isinstance(value, str):
        digest.update(b"s%d:" % len(value))
        for at in range(0, len(value), 1 << 20):
            digest.update(value[at:at + (1 << 20)].encode("utf-8", errors="surrogatepass"))
    elif isinstance(value, dict):
        digest.update(b"d%d{" % len(value))
        for key in sorted(value, key=str):
            _feed(digest, str(key))
            _feed(digest, value[key])
        digest.update(b"}")
    elif isinstance(value, (list, tuple)):
        digest.update(b"l%d[" % len(value))
        for inner in value:
            _feed(digest, inner)
        digest.update(b"]")
    elif value is None or isinstance(value, (bool, int, float)):
        digest.update(b"v" + repr(value).encode())
    else:
        _feed(digest, str(value))


def _marks(item: Any) -> tuple[Mark, ...]:
    """Where an item carries cache marks: the message itself (-1) and its content blocks (their index)."""
    if not isinstance(item, dict):
        return ()
    found: list[Mark] = []
    if "cache_control" in item:
        found.append((-1, json.dumps(item["cache_control"], sort_keys=True)))
    content = item.get("content")
    for j, block in enumerate(content if isinstance(content, list) else []):
        if isinstance(block, dict) and "cache_control" in block:
            found.append((j, json.dumps(block["cache_control"], sort_keys=True)))
    return tuple(found)


def _unmarked(item: Any) -> Any:
    if not isinstance(item, dict):
        return item
    out = {k: v for k, v in item.items() if k != "cache_control"}
    if isinstance(out.get("content"), list):
        out["content"] = [{k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b
                          for b in out["content"]]
    return out


@dataclass
class _Seen:
    """A written request as compared: each item's digest without its cache marks, the marks, each field's digest."""

    seq: int
    api: str
    items: list[str]
    marks: list[tuple[Mark, ...]]
    fields: dict[str, str]


class DeltaWriter:
    """Numbers exchange records (`seq`) and turns each request into a delta against a recent one."""

    def __init__(self) -> None:
        self.seq = 0
        self._recent: deque[_Seen] = deque(maxlen=WRITER_KEEPS)

    def encode(self, record: dict[str, Any]) -> dict[str, Any]:
        """The line to write for a whole exchange record (a new dict; `record` is not changed)."""
        self.seq += 1
        out = dict(record, seq=self.seq)
        api, body = str(record.get("api")), record.get("request")
        key = LIST_KEYS.get(api)
        if key is None or not isinstance(body, dict) or not isinstance(body.get(key), list):
            return out
        items = body[key]
        seen = _Seen(self.seq, api, [_digest(_unmarked(i)) for i in items], [_marks(i) for i in items],
                     {k: _digest(v) for k, v in body.items() if k != key})
        base, keep = self._base(seen)
        self._recent.append(seen)
        if base is None:
            return out
        delta: dict[str, Any] = {"base": base.seq, "keep": keep}
        moved = {str(i): [[j, json.loads(mark)] for j, mark in seen.marks[i]] for i in range(keep)
                 if seen.marks[i] != base.marks[i]}
        if moved:
            delta["marks"] = moved
        delta["add"] = items[keep:]
        changed = {k: body[k] for k, d in seen.fields.items() if base.fields.get(k) != d}
        if changed:
            delta["set"] = changed
        gone = [k for k in base.fields if k not in seen.fields]
        if gone:
            delta["unset"] = gone
        out["request"], out["request_delta"] = None, delta
        return out

    def _base(self, seen: _Seen) -> tuple[_Seen | None, int]:
        """The recent request of the same API that shares the most leading items (the newest on a tie)."""
        best, keep = None, 0
        for earlier in reversed(self._recent):
            if earlier.api != seen.api:
                continue
            n = 0
            for a, b in zip(earlier.items, seen.items):
                if a != b:
                    break
                n += 1
            if n > keep:
                best, keep = earlier, n
        return best, keep


class RequestChain:
    """Gives each exchange line's request whole, reading the lines in order (a delta's base must have been
    read: the recent ones are kept, sharing their messages)."""

    def __init__(self) -> None:
        self._bodies: OrderedDict[int, Any] = OrderedDict()
        self.missing = 0  # deltas whose base was not at hand (their request reads as None)

    def request(self, record: dict[str, Any]) -> Any:
        """The whole request of an exchange record (None: not JSON, or its base is gone)."""
        delta = record.get("request_delta")
        body = record.get("request") if not isinstance(delta, dict) else self._rebuilt(record, delta)
        seq = record.get("seq")
        if isinstance(seq, int) and not isinstance(seq, bool):
            self._bodies[seq] = body
            self._bodies.move_to_end(seq)
            while len(self._bodies) > READER_KEEPS:
                self._bodies.popitem(last=False)
        return body

    def _rebuilt(self, record: dict[str, Any], delta: dict[str, Any]) -> Any:
        base = delta.get("base")
        found = self._bodies.get(base) if isinstance(base, int) else None
        body = rebuild(found, LIST_KEYS.get(str(record.get("api"))), delta)
        self.missing += body is None
        return body


def rebuild(base: Any, key: str | None, delta: dict[str, Any]) -> dict[str, Any] | None:
    """The request a delta says, from its base's whole request (None: the delta does not fit the base)."""
    keep, add = delta.get("keep"), delta.get("add")
    if (key is None or not isinstance(base, dict) or not isinstance(base.get(key), list) or not isinstance(keep, int)
            or not 0 <= keep <= len(base[key]) or not isinstance(add, list)):
        return None
    items = list(base[key][:keep])
    marks = delta.get("marks")
    for at, placed in (marks.items() if isinstance(marks, dict) else []):
        if str(at).isdigit() and int(at) < keep and isinstance(placed, list):
            items[int(at)] = _marked(items[int(at)], placed)
    gone = delta.get("unset")
    unset: list[Any] = gone if isinstance(gone, list) else []
    body = {k: v for k, v in base.items() if k not in unset}
    changed = delta.get("set")
    body.update(changed if isinstance(changed, dict) else {})
    body[key] = items + add
    return body


def _marked(item: Any, placed: list[Any]) -> Any:
    """`item` with exactly the cache marks `placed` ([block index or -1, cache_control] pairs)."""
    out = _unmarked(item)
    if not isinstance(out, dict):
        return item
    for pair in placed:
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], int)):
            continue
        where, mark = pair
        content = out.get("content")
        if where == -1:
            out["cache_control"] = mark
        elif isinstance(content, list) and 0 <= where < len(content) and isinstance(content[where], dict):
            content[where] = dict(content[where], cache_control=mark)
    return out
