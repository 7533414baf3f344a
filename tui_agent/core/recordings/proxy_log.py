"""A `tui-agent proxy` recording read as a log: each model call a step, with the request the agent really sent.

Why a reader of its own: a recording holds every request whole, so nothing is reconstructed; what is left to
find is the conversation they share. The requests of one conversation extend each other (each one is the last
one plus the reply and what followed it); the messages a request adds are folded into the union history, and
the call's reply (from the recorded answer) follows them with the usage the API returned. A request that does
not extend the conversation is either a side call (a title, a quota check, a subagent: `side_calls.py`; not a
step) or the agent's compaction (its tools, a shorter history): a boundary, then the request's messages as the
new segment.

Requests are read in the API they speak (Anthropic Messages, OpenAI Responses, Chat Completions) and folded
as Messages API records by the one `TranscriptReader`, as `codex_rollout` does for Codex's own logs.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from tui_agent.core.recordings.codex_rollout import item_blocks
from tui_agent.core.recordings.foreign_log import ForeignLogReader
from tui_agent.core.recordings.side_calls import SideCall, Signature, always_side, signature

RECORD_TYPE = "tui-agent-proxy"  # the first line of a recording (proxy/recorder.py writes it)
NO_REPLY = "[the answer was not recorded]"
COMPACTED = "[the agent compacted its context here]"


def _strip_cache(value: Any) -> Any:
    """`value` without `cache_control` marks (they move from call to call; the conversation does not)."""
    if isinstance(value, dict):
        return {k: _strip_cache(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache(v) for v in value]
    return value


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def request_messages(api: str, body: Any) -> list[dict[str, Any]] | None:
    """The request's conversation as Messages API messages (None: not a request with one)."""
    if not isinstance(body, dict):
        return None
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": list(blocks)})

    if api == "anthropic-messages" and isinstance(body.get("messages"), list):
        for message in body["messages"]:
            if isinstance(message, dict):
                add("assistant" if message.get("role") == "assistant" else "user",
                    _strip_cache(_blocks(message.get("content"))))
    elif api == "openai-responses":
        items = body.get("input")
        items = [{"type": "message", "role": "user", "content": items}] if isinstance(items, str) else items
        for item in items if isinstance(items, list) else []:
            found = item_blocks(item) if isinstance(item, dict) else None
            if found:
                add(*found)
    elif api == "openai-chat" and isinstance(body.get("messages"), list):
        for message in body["messages"]:
            if not isinstance(message, dict) or message.get("role") == "system":
                continue
            if message.get("role") == "tool":
                add("user", [{"type": "tool_result", "tool_use_id": str(message.get("tool_call_id")),
                              "content": str(message.get("content") or "")}])
                continue
            blocks = _blocks(message.get("content"))
            for call in message.get("tool_calls") or []:
                if not isinstance(call, dict):
                    continue
                function = call.get("function") or {}
                made = item_blocks({"type": "function_call", "call_id": call.get("id"),
                                    "name": function.get("name"), "arguments": function.get("arguments")})
                if made:
                    blocks.append(made[1][0])
            add("assistant" if message.get("role") == "assistant" else "user", blocks)
    else:
        return None
    return out


def call_usage(api: str, usage: Any) -> dict[str, int] | None:
    """The call's usage as the Messages API counts it (the OpenAI APIs count cached tokens inside input)."""
    if not isinstance(usage, dict):
        return None
    def count(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
    if api == "anthropic-messages":
        return {k: count(usage.get(k)) for k in ("input_tokens", "cache_creation_input_tokens",
                                                  "cache_read_input_tokens", "output_tokens")}
    total = count(usage.get("input_tokens", usage.get("prompt_tokens")))
    details = usage.get("input_tokens_details") or usage.get("prompt_tokens_details") or {}
    cached = min(count(details.get("cached_tokens") if isinstance(details, dict) else 0), total)
    return {"input_tokens": total - cached, "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0,
            "output_tokens": count(usage.get("output_tokens", usage.get("completion_tokens")))}


class ProxyReader(ForeignLogReader):
    """A recording's lines folded into a history; the `TranscriptReader` interface (`feed`, `load`).

    Which requests are steps and which are side calls is `side_calls.py`'s rule; `step_calls` maps each step
    to the proxy's call number (the face reads that call's exact request from the recording)."""

    context_window: int | None = None

    def __init__(self, *, keep_thinking: bool = True, keep_meta: bool = True) -> None:
        super().__init__(keep_thinking=keep_thinking, keep_meta=keep_meta)
        self.chain: list[str] = []  # the current conversation's messages, as compared
        self.main: Signature | None = None  # the conversation's tools and system prompt
        self.side: list[SideCall] = []
        self.step_calls: list[int] = []  # the proxy's call number of each step
        self._waiting: tuple[dict[str, Any], list[tuple[str, dict]], list[str]] | None = None
        self._last_input = 0

    @property
    def side_calls(self) -> int:
        return len(self.side)

    def feed(self, lines: Any) -> ProxyReader:
        for record in self._objects(lines):
            if record.get("type") == "exchange" and record.get("call"):
                self._exchange(record)
        return self

    def finish(self) -> ProxyReader:
        """The recording is complete: a request still waiting began the conversation (an agent without tools)."""
        if self._waiting is not None:
            record, pairs, keys = self._waiting
            self._waiting = None
            self._step(record, pairs, keys, extends=False)
        return self

    def _exchange(self, record: dict[str, Any]) -> None:
        api, body = record.get("api"), record.get("request")
        messages = request_messages(str(api), body)
        usage = call_usage(str(api), record.get("usage"))
        if not messages or not usage or not isinstance(record.get("status"), int) or record["status"] >= 400:
            return
        if why := always_side(body):
            return self._side(record, why, usage)
        # compared block by block, in any order: an agent may merge the messages of a round into one and
        # put its texts before its tool calls (Claude Code does); it extends when it dropped nothing
        pairs = [(m["role"], block) for m in messages for block in m["content"]]
        keys = [json.dumps(pair, sort_keys=True) for pair in pairs]
        if self._waiting is not None:
            waiting, self._waiting = self._waiting, None
            if _extends(waiting[2], keys):
                self._step(*waiting, extends=False)
            else:
                self._side(waiting[0], "no tools", call_usage(str(waiting[0].get("api")), waiting[0].get("usage")))
        has_tools = bool((body or {}).get("tools"))
        if self.chain and _extends(self.chain, keys):
            return self._step(record, pairs, keys, extends=True)
        if not self.chain and not has_tools:
            self._waiting = (record, pairs, keys)
            return None
        if self.chain and not (has_tools and self.main is not None and signature(body).shares(self.main)):
            return self._side(record, "no tools" if not has_tools else "other tools and system prompt", usage)
        return self._step(record, pairs, keys, extends=False)

    def _side(self, record: dict[str, Any], why: str, usage: dict[str, int] | None) -> None:
        body: dict[str, Any] = record["request"] if isinstance(record.get("request"), dict) else {}
        self.side.append(SideCall(int(record["call"]), record.get("model") or body.get("model"), why, usage or {}))

    def _step(self, record: dict[str, Any], pairs: list[tuple[str, dict]], keys: list[str], *, extends: bool) -> None:
        """Fold the request's new messages (all of them after a compaction) and the call's reply."""
        body: dict[str, Any] = record["request"] if isinstance(record.get("request"), dict) else {}
        usage = call_usage(str(record.get("api")), record.get("usage")) or {}
        stamp = record.get("time")
        if extends:
            unseen = Counter(self.chain)
            new = []
            for key, pair in zip(keys, pairs):
                if unseen[key]:
                    unseen[key] -= 1
                else:
                    new.append(pair)
            while new and new[0][0] == "assistant" and self._last_role == "assistant":
                new = new[1:]  # the reply as the agent sent it back: folded already, from the answer
        else:
            if self.chain:
                self._boundary(stamp)
            new = pairs
        compacted = bool(self.chain) and not extends
        for n, (role, block) in enumerate(new):
            self._fold(role, [block], stamp, summary=compacted and n == 0)
        self.chain = keys
        if body.get("tools") or self.main is None:
            self.main = signature(body)
        self.step_calls.append(int(record["call"]))
        self._last_input = usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
        if self._last_role == "assistant":
            self._fold("user", [{"type": "text", "text": "[continue]"}], stamp)
        reply = [b for b in record.get("reply") or [] if isinstance(b, dict)] or [{"type": "text", "text": NO_REPLY}]
        message = {"role": "assistant", "content": reply, "model": record.get("model") or body.get("model"),
                   "id": f"proxy-call-{record['call']}", "usage": usage}
        self._emit({"type": "assistant", "message": message, "requestId": "", "timestamp": _iso(stamp)})

    def _boundary(self, stamp: Any) -> None:
        if self._last_role == "user":
            self._fold("assistant", [{"type": "text", "text": COMPACTED}], stamp)
        self._emit({"type": "system", "subtype": "compact_boundary", "timestamp": _iso(stamp),
                    "compactMetadata": {"trigger": "auto", "preTokens": self._last_input or None}})

    def _fold(self, role: str, blocks: list[dict[str, Any]], stamp: Any, *, summary: bool = False) -> None:
        record: dict[str, Any] = {"type": role, "message": {"role": role, "content": blocks}, "timestamp": _iso(stamp)}
        if summary:
            record["isCompactSummary"] = True
        self._emit(record)


def _extends(chain: list[str], keys: list[str]) -> bool:
    """Whether a request of `keys` holds every block of the one of `chain` (in any order)."""
    return not (Counter(chain) - Counter(keys))


def _iso(stamp: Any) -> str | None:
    if not isinstance(stamp, (int, float)):
        return None
    from datetime import datetime, timezone

    return datetime.fromtimestamp(stamp, tz=timezone.utc).isoformat()
