"""The fake Messages API with the server's own context features, as the API documents them.

- `context_management` (context editing, `clear_tool_uses_20250919` / `clear_thinking_20251015`, beta
  `context-management-2025-06-27`; compaction, `compact_20260112`, beta `compact-2026-01-12`): the field
  is validated (a missing beta header, an unknown edit or key, `clear_thinking` not first is a 400 recorded
  in `violations`); past an edit's trigger the reply reports `context_management.applied_edits` in its
  `message_delta`, or starts with a `compaction` block streamed as `compaction_delta` and reports the
  compaction's own cost as a `compaction` entry of `usage.iterations`. The top-level usage is what the model
  read, as the API reports it: after the edits, and from the newest compaction block on (what is before it is
  ignored; compacting now: the summary and the newest message).
- `diagnostics` (beta `cache-diagnosis-2026-04-07`): every reply has its own `msg_` id; a request naming
  the previous one gets `diagnostics.cache_miss_reason` when its prefix diverged (model, system, tools or
  an earlier message changed; an unknown id; `unavailable` when nothing changed and it read less than the
  previous request left cached, e.g. after `prompt_cache.evict()`). `refuse_diagnosis=True` answers the beta with the 400 an
  endpoint without it gives (not a violation: that is what the client must survive).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.fakes.fake_anthropic import FakeAnthropic, error_reply, sse, stream_reply
from tests.fakes.http import Reply

BETA_CONTEXT = "context-management-2025-06-27"
BETA_COMPACT = "compact-2026-01-12"
BETA_DIAGNOSIS = "cache-diagnosis-2026-04-07"
_EDIT_KEYS = {
    "clear_tool_uses_20250919": ({"type", "trigger", "keep", "clear_at_least", "exclude_tools", "clear_tool_inputs"},
                                 BETA_CONTEXT),
    "clear_thinking_20251015": ({"type", "keep"}, BETA_CONTEXT),
    "compact_20260112": ({"type", "trigger", "pause_after_compaction", "instructions"}, BETA_COMPACT),
}
SUMMARY = "Summary of the conversation so far: the user asked to read files; they were read."


def edit_errors(field: Any, betas: set[str]) -> list[str]:
    """What the API would refuse in `context_management` with these beta headers."""
    if not isinstance(field, dict) or set(field) != {"edits"} or not isinstance(field["edits"], list):
        return ["context_management: must be an object with a list of edits"]
    errors = []
    for i, edit in enumerate(field["edits"]):
        kind = edit.get("type") if isinstance(edit, dict) else None
        if kind not in _EDIT_KEYS:
            errors.append(f"context_management.edits.{i}: unknown edit type {kind!r}")
            continue
        keys, beta = _EDIT_KEYS[kind]
        if set(edit) - keys:
            errors.append(f"context_management.edits.{i}: Extra inputs are not permitted: {sorted(set(edit) - keys)}")
        if beta not in betas:
            errors.append(f"context_management.edits.{i}: {kind} needs the anthropic-beta header {beta}")
        if kind == "clear_thinking_20251015" and i != 0:
            errors.append("context_management: clear_thinking_20251015 must be the first edit")
        for name in ("trigger", "keep", "clear_at_least"):
            value = edit.get(name)
            if value == "all" and kind == "clear_thinking_20251015" and name == "keep":
                continue  # keep every thinking block (the most cache hits)
            if value is not None and not (isinstance(value, dict) and isinstance(value.get("value"), int)):
                errors.append(f"context_management.edits.{i}.{name}: must be {{type, value}}")
    return errors


def _tool_results(body: dict[str, Any]) -> list[tuple[str, int]]:
    """(tool name, result tokens) of every tool result in the request, oldest first."""
    names = {b["id"]: b["name"] for m in body["messages"] if isinstance(m["content"], list)
             for b in m["content"] if b.get("type") == "tool_use"}
    return [(names.get(b.get("tool_use_id"), ""), len(json.dumps(b.get("content"))) // 4)
            for m in body["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"]


def applied_edits(body: dict[str, Any], tokens: int) -> list[dict[str, Any]]:
    """The edits that fire for this request, as `context_management.applied_edits` reports them."""
    out = []
    for edit in body["context_management"]["edits"]:
        if edit["type"] == "clear_tool_uses_20250919" and tokens > edit.get("trigger", {}).get("value", 100_000):
            excluded = set(edit.get("exclude_tools") or [])
            results = [r for r in _tool_results(body) if r[0] not in excluded]
            keep = edit.get("keep", {}).get("value", 3)
            cleared = results[:-keep] if keep else results
            freed = sum(size for _, size in cleared)
            if cleared and freed >= (edit.get("clear_at_least") or {}).get("value", 0):
                out.append({"type": edit["type"], "cleared_tool_uses": len(cleared), "cleared_input_tokens": freed})
        elif edit["type"] == "clear_thinking_20251015":
            turns = [m for m in body["messages"] if m["role"] == "assistant" and isinstance(m["content"], list)
                     and any(b.get("type") == "thinking" for b in m["content"])]
            keep = len(turns) if edit.get("keep") == "all" else edit.get("keep", {}).get("value", 1)
            if len(turns) > keep:
                out.append({"type": edit["type"], "cleared_thinking_turns": len(turns) - keep,
                            "cleared_input_tokens": 10 * (len(turns) - keep)})
    return out


class FakeContextAnthropic(FakeAnthropic):
    """`FakeAnthropic` that takes `context_management` and `diagnostics` (see the module docstring)."""

    def __init__(self, *args: Any, refuse_diagnosis: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refuse_diagnosis = refuse_diagnosis
        self.seen: dict[str, dict[str, Any]] = {}  # message id -> the request that got it
        self.cached_after: dict[str, int] = {}  # message id -> what its request left cached (read + written)
        self.betas: list[set[str]] = []
        self.compactions = 0

    def handle(self, path: str, headers: dict[str, str], body: Any, raw: bytes) -> Reply:
        if not isinstance(body, dict) or not path.startswith("/v1/messages"):
            return super().handle(path, headers, body, raw)
        betas = {b.strip() for b in headers.get("anthropic-beta", "").split(",") if b.strip()}
        with self.lock:
            self.betas.append(betas)
        body = dict(body)
        field, diagnostics = body.pop("context_management", None), body.pop("diagnostics", None)
        errors = edit_errors(field, betas) if field is not None else []
        if diagnostics is not None and BETA_DIAGNOSIS not in betas:
            errors.append("diagnostics: Extra inputs are not permitted (needs the cache-diagnosis beta)")
        if any(b.get("type") == "compaction" for m in body.get("messages", []) if isinstance(m.get("content"), list)
               for b in m["content"]) and BETA_COMPACT not in betas:
            errors.append("messages: compaction blocks need the anthropic-beta header compact-2026-01-12")
        if errors:
            for error in errors:
                self.violate(f"request {len(self.requests)}: {error}")
            return error_reply(400, "invalid_request_error", errors[0])
        if BETA_DIAGNOSIS in betas and self.refuse_diagnosis:
            return error_reply(400, "invalid_request_error",
                               f"Unexpected value(s) `{BETA_DIAGNOSIS}` for the `anthropic-beta` header.")
        stripped = json.dumps(counted_body(body)).encode()  # (the API reads from the newest compaction block on)
        reply = super().handle(path, headers, body, stripped)
        if path.split("?")[0].endswith("count_tokens") and field is not None and reply.json_body:
            original = reply.json_body["input_tokens"]  # counted after the edits the server would apply
            freed = sum(edit["cleared_input_tokens"] for edit in applied_edits({**body, "context_management": field},
                                                                                 original))
            return Reply(json_body={"input_tokens": original - freed,
                                    "context_management": {"original_input_tokens": original}})
        if not reply.chunks or path.split("?")[0] != "/v1/messages":
            return reply
        return self._extend(reply, {**body, "context_management": field}, diagnostics, len(stripped) // 4)

    def _extend(self, reply: Reply, body: dict[str, Any], diagnostics: Any, tokens: int) -> Reply:
        with self.lock:
            message_id = f"msg_fake_{len(self.seen) + 1:03d}"
            self.seen[message_id] = body
        edits = applied_edits(body, tokens) if body.get("context_management") else []
        compact = next((e for e in (body.get("context_management") or {}).get("edits", [])
                        if e["type"] == "compact_20260112"), None)
        compacting = compact is not None and tokens > (compact.get("trigger") or {}).get("value", 150_000)
        # what the model read, as the API's top-level usage reports it: after the edits, from the newest
        # compaction block on, or (compacting now) the compacted context: the summary and the newest message
        read = compacted_size(body) if compacting else tokens - sum(e["cleared_input_tokens"] for e in edits)
        chunks: list[bytes] = []
        for chunk in reply.chunks:
            event, data = chunk.decode().split("\n", 1)
            payload = json.loads(data.removeprefix("data: "))
            kind = event.removeprefix("event: ")
            if kind == "message_start":
                payload["message"]["id"] = message_id
                usage = payload["message"]["usage"]
                _shrink(usage, read)
                read = usage.get("cache_read_input_tokens", 0)
                with self.lock:
                    self.cached_after[message_id] = read + usage.get("cache_creation_input_tokens", 0)
                if diagnostics is not None:
                    payload["message"]["diagnostics"] = self._diagnosis(body, diagnostics.get("previous_message_id"),
                                                                        read)
            if kind == "message_delta":
                if body.get("context_management"):
                    payload["context_management"] = {"applied_edits": edits}
                if compacting:
                    payload["usage"]["iterations"] = [
                        {"type": "compaction", "input_tokens": tokens, "output_tokens": len(SUMMARY) // 4,
                         "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
                        {"type": "message", "input_tokens": compacted_size(body),
                         "output_tokens": payload["usage"]["output_tokens"],
                         "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}]
            if kind in ("content_block_start", "content_block_delta", "content_block_stop") and compacting:
                payload["index"] += 1
            chunks.append(sse(kind, payload))
            if kind == "message_start" and compacting:
                self.compactions += 1
                chunks += [sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
                               "type": "compaction", "content": None}}),
                           sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
                               "type": "compaction_delta", "content": SUMMARY, "encrypted_content": "opaque-1"}}),
                           sse("content_block_stop", {"type": "content_block_stop", "index": 0})]
        return Reply(status=reply.status, chunks=chunks, headers=reply.headers)

    def _diagnosis(self, body: dict[str, Any], previous: Any, read: int = 0) -> dict[str, Any] | None:
        """`diagnostics` as the API answers it: null when the prefix could be reused (or nothing to compare);
        `unavailable` when nothing changed and it still read less than the previous request left cached (the
        server let the prefix go: no change of the request to name)."""
        if previous is None:
            return None
        before = self.seen.get(str(previous))
        if before is None:
            return {"cache_miss_reason": {"type": "previous_message_not_found"}}
        size = len(json.dumps(before)) // 4
        for key, kind in (("model", "model_changed"), ("system", "system_changed"), ("tools", "tools_changed")):
            if _plain(before.get(key)) != _plain(body.get(key)):
                return {"cache_miss_reason": {"type": kind, "cache_missed_input_tokens": size}}
        old, new = _plain(before["messages"]), _plain(body["messages"])
        same = 0
        while same < min(len(old), len(new)) and old[same] == new[same]:
            same += 1
        if same < len(old) - 1:  # the previous request's last message may have gained its answer after it
            missed = len(json.dumps(old[same:])) // 4
            return {"cache_miss_reason": {"type": "messages_changed", "cache_missed_input_tokens": missed}}
        if read < self.cached_after.get(str(previous), 0):
            return {"cache_miss_reason": {"type": "unavailable"}}
        return None


def read_from(messages: list[dict[str, Any]]) -> int:
    """Where the API starts reading: the message holding the newest compaction block (0: none)."""
    for i in range(len(messages) - 1, -1, -1):
        content = messages[i].get("content")
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "compaction" for b in content):
            return i
    return 0


def counted_body(body: dict[str, Any]) -> dict[str, Any]:
    """The request as the API reads it: everything before the newest compaction block is ignored."""
    start = read_from(body.get("messages") or [])
    return {**body, "messages": body["messages"][start:]} if start else body


def compacted_size(body: dict[str, Any]) -> int:
    """What the answer's own sampling reads right after a compaction: system, tools, the summary, the newest
    message (the rest is in the summary)."""
    rest = {key: body.get(key) for key in ("system", "tools")}
    return (len(json.dumps(rest)) + len(SUMMARY) + len(json.dumps(body["messages"][-1]))) // 4


def _shrink(usage: dict[str, Any], total: int) -> None:
    """`usage` made to add up to `total` input tokens (the part the server did not read leaves the written
    part first, then the uncached, then the read)."""
    extra = sum(usage.get(k, 0) for k in ("input_tokens", "cache_creation_input_tokens",
                                          "cache_read_input_tokens")) - max(total, 1)
    for key in ("cache_creation_input_tokens", "input_tokens", "cache_read_input_tokens"):
        if extra <= 0:
            break
        floor = 1 if key == "input_tokens" else 0
        taken = min(extra, max(usage.get(key, 0) - floor, 0))
        usage[key] = usage.get(key, 0) - taken
        extra -= taken
    written = usage.get("cache_creation_input_tokens", 0)
    if isinstance(usage.get("cache_creation"), dict):
        hour = usage["cache_creation"].get("ephemeral_1h_input_tokens", 0) > 0
        usage["cache_creation"] = {"ephemeral_5m_input_tokens": 0 if hour else written,
                                   "ephemeral_1h_input_tokens": written if hour else 0}


def _plain(value: Any) -> Any:
    """`value` without cache_control (moving a breakpoint is no divergence)."""
    value = copy.deepcopy(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


__all__ = ["FakeContextAnthropic", "stream_reply"]
