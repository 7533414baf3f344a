"""The fake Messages API's prompt cache, modelled on what the API documents (the prompt-caching guide).

- A request is cached as prefixes, in the order the API renders it: tools, then system, then messages.
  Each `cache_control` breakpoint writes the prefix ending at its block; a later request reads the longest
  live prefix found at one of its breakpoints or up to 20 blocks before one (the API's lookback).
- The key is what the API keys on: the model, the prefix's content without the `cache_control` markers,
  and, for the message part only, the settings that invalidate message breakpoints (`thinking`,
  `tool_choice`): changing those keeps tools and system cached.
- Every entry has a time to live on the server's clock (`clock`, injectable so a test can move time
  without waiting): 5 minutes (`ttl_seconds`), or an hour for a `ttl: "1h"` breakpoint; a read or a write
  starts it again when the request ARRIVES (not when its answer ends).
- `enabled=False` is a server that caches nothing (a gateway without it): usage reports no read and no
  write, whatever the breakpoints. `evict()` drops everything before its time (what a server may do).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

LOOKBACK_BLOCKS = 20
HOUR = 3600.0


def _strip_cache(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_cache(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache(v) for v in value]
    return value


def _ttl_of(block: dict[str, Any]) -> str:
    control = block.get("cache_control")
    return str(control.get("ttl", "5m")) if isinstance(control, dict) else ""


def cache_segments(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request as the cache sees it: (canonical JSON of each tool/system/message block, has breakpoint)."""
    return [(text, bool(ttl)) for text, ttl, _ in _segments(body)]


def _segments(body: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(canonical JSON, breakpoint TTL or "", is a message block) of each block, in the API's order."""
    items: list[tuple[str, str, bool]] = []
    for tool in body.get("tools") or []:
        items.append((json.dumps(_strip_cache(tool), sort_keys=True), _ttl_of(tool), False))
    system = body.get("system")
    if isinstance(system, str):
        items.append((json.dumps(system), "", False))
    for block in system if isinstance(system, list) else []:
        items.append((json.dumps(_strip_cache(block), sort_keys=True), _ttl_of(block), False))
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            items.append((json.dumps([message["role"], content]), "", True))
            continue
        for k, block in enumerate(content or []):
            key = json.dumps([message["role"], k, _strip_cache(block)], sort_keys=True)
            items.append((key, _ttl_of(block), True))
    return items


class MovingClock:
    """A clock a test moves by hand, shared by the fake server (its cache's time to live) and the engine
    (`LoopState.clock`): an answer that takes 40 s, or a keep-warm wait of 230 s, without waiting."""

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += max(seconds, 0.0)


@dataclass
class PromptCache:
    """One server's prompt cache: prefix key → (when it expires on the server's clock, its time to live, its
    size in tokens)."""

    ttl_seconds: float = 300.0
    clock: Callable[[], float] = time.monotonic
    enabled: bool = True
    entries: dict[str, tuple[float, float, int]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def evict(self) -> None:
        """The server lets go of everything before its time to live (no client can prevent it)."""
        with self.lock:
            self.entries.clear()

    def evict_longest(self) -> None:
        """The server lets go of its longest prefix only: the next request reads the shorter ones left."""
        with self.lock:
            if self.entries:
                del self.entries[max(self.entries, key=lambda key: self.entries[key][2])]

    def live(self) -> int:
        """How many prefixes are cached now."""
        now = self.clock()
        with self.lock:
            return sum(1 for expires, _, _ in self.entries.values() if expires > now)

    def usage(self, body: dict[str, Any], total: int) -> dict[str, Any]:
        """The usage a request of `total` input tokens reports: what it read from the cache, what it wrote."""
        read, written, hour = self._read_and_write(body) if self.enabled else (0, 0, False)
        return {
            "input_tokens": max(total - read - written, 1),
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": 0 if hour else written,
                               "ephemeral_1h_input_tokens": written if hour else 0},
        }

    def _read_and_write(self, body: dict[str, Any]) -> tuple[int, int, bool]:
        items = _segments(body)
        settings = json.dumps([body.get("thinking"), body.get("tool_choice")], sort_keys=True)
        digest = hashlib.sha256(json.dumps(body.get("model", "")).encode())
        keys: list[str] = []
        sizes: list[int] = []
        chars = 0
        in_messages = False
        for text, _, is_message in items:
            if is_message and not in_messages:  # thinking / tool_choice key the messages, not tools or system
                in_messages = True
                digest.update(settings.encode())
            digest.update(text.encode())
            chars += len(text)
            keys.append(digest.hexdigest())
            sizes.append(chars // 4)
        marks = [i for i, (_, ttl, _) in enumerate(items) if ttl]
        now = self.clock()
        read, hit = 0, -1
        with self.lock:
            for mark in marks:
                for i in range(mark, max(mark - LOOKBACK_BLOCKS, -1), -1):
                    if self.entries.get(keys[i], (-1.0, 0.0, 0))[0] > now:
                        if sizes[i] > read:
                            read, hit = sizes[i], i
                        break
            if hit >= 0:  # a read starts the entry's time to live again
                life = self.entries[keys[hit]][1]
                self.entries[keys[hit]] = (now + life, life, sizes[hit])
            for i in marks:  # each breakpoint writes (or refreshes) the prefix ending there
                life = HOUR if items[i][1] == "1h" else self.ttl_seconds
                self.entries[keys[i]] = (now + life, life, sizes[i])
        written = max(sizes[marks[-1]] - read, 0) if marks else 0
        hour = any(items[i][1] == "1h" for i in marks)
        return read, written, hour


__all__ = ["MovingClock", "PromptCache", "cache_segments"]
