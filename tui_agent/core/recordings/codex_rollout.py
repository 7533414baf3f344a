"""A Codex CLI rollout log (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) read as a Messages API history.

Why a translation and not a second loader: a rollout holds the same things a Claude Code log does (the
conversation, the usage of each model call, where the agent compacted), only in OpenAI Responses terms. Each
rollout line is turned into the Claude Code record it stands for and folded by the one `TranscriptReader`,
so replay, watch, the panel and the economics read a Codex session exactly as they read a Claude Code one
(same repairs, same validity, same growth by what a line adds).

A rollout line is `{"timestamp", "type", "payload"}` (codex-rs `RolloutLine`/`RolloutItem`):
- `session_meta`: the session (`base_instructions`: the instructions every request starts with);
- `turn_context`: the model of the turns that follow;
- `response_item`: what the request's `input` holds: messages (developer/user/assistant), reasoning,
  function and custom tool calls and their outputs, web searches, encrypted compaction items;
- `event_msg` `token_count`: the usage after a model call (`last_token_usage`, and `total_token_usage` for
  the session: Codex writes the same count again at some turn ends, so only a change of the total is a
  call); newer versions also write a `token_usage_record` per response (its `response_id`), which is
  then the one source of calls;
- `compacted`: the agent compacted (`message`: the summary; `replacement_history`: what its requests
  hold from then on); `event_msg` `context_compacted` says so too (older versions: without a record), and
  0.17x an `item_completed` ContextCompaction: one compaction however many of them announce it. Its
  summary is the last replacement item (a user message after Codex's summary prefix, or, compacted by the
  server, an encrypted `compaction` item): `compaction_summary` finds it in the message a request starts
  with, where the replacement items before it (skills, environment, prompts) are merged.

Where a call's usage is written differs by version (before or after the tool outputs of that call), so a
reply is held back until its usage arrives, with the user-side items that follow it; then the reply is
folded with its usage (the call) and what waited behind it. Usage that finds no reply (a rollout whose
items are missing or redacted) still makes a call, on a placeholder message: the token timeline survives.
"""

from __future__ import annotations

import json
from typing import Any

from tui_agent.core.recordings.foreign_log import ForeignLogReader

NO_REPLY = "[this call's reply is not in the rollout]"
SUMMARY_MARK = "Here is the summary produced by the other language model"  # Codex's summary prefix ends so
ENCRYPTED_SUMMARY = "[compaction summary, encrypted"  # what an encrypted compaction item reads as (item_blocks)
NO_INPUT = "[not in the rollout]"
COMPACTED = "[Codex compacted its context here]"
_RESULT_KINDS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output", "tool_search_output")
_CALL_KINDS = ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _content_text(content: Any) -> list[str]:
    """The texts of a Responses message's content (input_text, output_text, refusal; an image as a mark)."""
    if isinstance(content, str):
        return [content]
    out = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("input_image", "image"):
            out.append("[image]")
        else:
            out.append(_text(part.get("text")) or _text(part.get("refusal")))
    return [t for t in out if t.strip()]


def _output_text(output: Any) -> str:
    """A tool output as text: a string, `{content, success}`, or a list of content items."""
    if isinstance(output, dict):
        output = output.get("content", output.get("body", output))
    if isinstance(output, list):
        return "\n".join(_content_text(output))
    return output if isinstance(output, str) else json.dumps(output)


def _arguments(raw: Any) -> dict[str, Any]:
    """Function-call arguments (a JSON string on the wire) as the tool_use input object."""
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except (ValueError, RecursionError):
        value = None
    return value if isinstance(value, dict) else {"arguments": raw if isinstance(raw, str) else json.dumps(raw)}


def item_blocks(item: dict[str, Any]) -> tuple[str, list[dict[str, Any]]] | None:
    """The role and Messages API blocks a `response_item` stands for (None: nothing a request carries)."""
    kind = item.get("type")
    call_id = _text(item.get("call_id")) or _text(item.get("id"))
    if kind == "message":
        role = "assistant" if item.get("role") == "assistant" else "user"  # developer/system: instructions
        return role, [{"type": "text", "text": t} for t in _content_text(item.get("content"))]
    if kind == "reasoning":
        parts = [_text(p.get("text")) for p in (item.get("summary") or []) + (item.get("content") or [])
                 if isinstance(p, dict)]
        text = "\n".join(p for p in parts if p) or (
            f"[encrypted reasoning, {len(_text(item.get('encrypted_content')))} characters]")
        return "assistant", [{"type": "thinking", "thinking": text, "signature": ""}]
    if kind == "function_call":
        return "assistant", [{"type": "tool_use", "id": call_id, "name": _text(item.get("name")) or "function",
                              "input": _arguments(item.get("arguments"))}]
    if kind == "custom_tool_call":
        return "assistant", [{"type": "tool_use", "id": call_id, "name": _text(item.get("name")) or "custom",
                              "input": {"input": _text(item.get("input"))}}]
    if kind in ("local_shell_call", "tool_search_call"):
        payload = item.get("action") if kind == "local_shell_call" else item.get("arguments")
        return "assistant", [{"type": "tool_use", "id": call_id, "name": kind.removesuffix("_call"),
                              "input": payload if isinstance(payload, dict) else {"value": payload}}]
    if kind in _RESULT_KINDS:
        content = _output_text(item.get("output") if "output" in item else item.get("tools"))
        return "user", [{"type": "tool_result", "tool_use_id": call_id, "content": content or "[empty]"}]
    if kind == "web_search_call":
        found = item.get("action")
        action: dict = found if isinstance(found, dict) else {}
        return "assistant", [{"type": "text", "text": f"[web search: {action.get('query') or action.get('type') or ''}]"}]
    if kind == "image_generation_call":
        return "assistant", [{"type": "text", "text": "[image generation]"}]
    if kind in ("compaction", "compaction_summary"):
        size = len(_text(item.get("encrypted_content")))
        return "user", [{"type": "text", "text": f"[compaction summary, encrypted, {size} characters]"}]
    return None


def _usage(numbers: Any) -> dict[str, int] | None:
    """Codex's token usage as the Messages API's: its `input_tokens` include the cached (and written) ones."""
    if not isinstance(numbers, dict):
        return None
    def count(key: str) -> int:
        value = numbers.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
    total, cached, written = count("input_tokens"), count("cached_input_tokens"), count("cache_write_input_tokens")
    details = numbers.get("input_tokens_details")  # (the Responses API's own name, in some versions)
    if not cached and isinstance(details, dict) and isinstance(details.get("cached_tokens"), int):
        cached = max(details["cached_tokens"], 0)
    return {"input_tokens": max(total - cached - written, 0), "cache_read_input_tokens": min(cached, total),
            "cache_creation_input_tokens": min(written, max(total - cached, 0)),
            "output_tokens": count("output_tokens"), "reasoning_output_tokens": count("reasoning_output_tokens")}


def _difference(total: dict[str, Any], before: Any) -> dict[str, int]:
    """One call's usage from two session totals (a rollout that logs no `last_token_usage`)."""
    before = before if isinstance(before, dict) else {}
    return {k: v - (before.get(k) if isinstance(before.get(k), int) else 0) for k, v in total.items()
            if isinstance(v, int) and not isinstance(v, bool)}


# The first rollouts (codex-rs 0.1-0.2x) wrote the session's line and the response items unwrapped:
# `{"id", "timestamp", "instructions", "git"}`, then `{"type": "message", ...}`, `{"record_type": "state"}`.
LEGACY_ITEM_TYPES = frozenset({"message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
                               "custom_tool_call_output", "local_shell_call", "local_shell_call_output",
                               "web_search_call", "compaction", "compaction_summary"})


def is_legacy_meta(record: dict[str, Any]) -> bool:
    return ("type" not in record and "payload" not in record and isinstance(record.get("id"), str)
            and "timestamp" in record and ("instructions" in record or "git" in record))


def is_legacy_record(record: dict[str, Any]) -> bool:
    """A line of an early, unwrapped rollout (its session line, or a bare response item)."""
    return is_legacy_meta(record) or (record.get("type") in LEGACY_ITEM_TYPES and "payload" not in record
                                      and ("role" in record or "call_id" in record or "summary" in record))


class RolloutReader(ForeignLogReader):
    """A rollout's lines folded into a history as they come; the `TranscriptReader` interface (`feed`,
    `load`, `skipped_lines`), plus `context_window` (the model's, as Codex logged it) and `finish`."""

    def __init__(self, *, keep_thinking: bool = True, keep_meta: bool = True) -> None:
        super().__init__(keep_thinking=keep_thinking, keep_meta=keep_meta)
        self.context_window: int | None = None
        self.model = ""
        self.calls = 0
        self._reply: list[dict[str, Any]] = []  # the blocks of the reply waiting for its usage
        self._reply_time: str | None = None
        self._after: list[dict[str, Any]] = []  # user-side records logged after that reply
        self._last_total: Any = None  # the last `total_token_usage` seen (a repeat is not a call)
        self._records_seen = False  # a `token_usage_record` was seen: token_count no longer makes calls
        self._compacted = False  # a `compacted` record since the last call (its context_compacted is the same)
        self._announced: Any = None  # the stamp of a context_compacted whose record may still come
        self._last_input = 0

    def feed(self, lines: Any) -> RolloutReader:
        for record in self._objects(lines):
            self._take(record)
        return self

    def finish(self) -> RolloutReader:
        """The end of the log: a reply whose usage never came is folded without it (not a call)."""
        if self._announced is not None:
            self._settle_announcement(False)
        self._flush(None, None)
        return self

    # -- one rollout line ---------------------------------------------------------------------------
    def _take(self, record: dict[str, Any]) -> None:
        kind, payload, stamp = record.get("type"), record.get("payload"), record.get("timestamp")
        if self._announced is not None and kind in ("response_item", "compacted"):
            self._settle_announcement(kind == "compacted")
        if not isinstance(payload, dict):
            if is_legacy_meta(record):  # the first rollouts: the session's line and the items, unwrapped
                self._take({"type": "session_meta", "payload": record, "timestamp": stamp})
            elif kind in LEGACY_ITEM_TYPES:
                self._item(record, stamp)
            return
        if kind == "session_meta":
            instructions = payload.get("base_instructions") or payload.get("instructions")
            text = instructions.get("text") if isinstance(instructions, dict) else instructions
            if isinstance(text, str) and text.strip() and self._last_role is None:
                self._fold("user", [{"type": "text", "text": text}], stamp)
            if isinstance(payload.get("model"), str) and not self.model:  # (a rollout without turn_context)
                self.model = payload["model"]
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                self.model = payload["model"]
        elif kind == "response_item":
            self._item(payload, stamp)
        elif kind == "token_usage_record":
            self._records_seen = True
            self._call(_usage(payload.get("usage")), stamp)
        elif kind == "event_msg":
            self._event(payload, stamp)
        elif kind == "compacted":
            self._compaction(payload, stamp)

    def _item(self, item: dict[str, Any], stamp: Any) -> None:
        found = item_blocks(item)
        if found is None or not found[1]:
            return
        role, blocks = found
        if role == "assistant":
            if self._after:  # a new reply while the one before still waits: that one had no usage logged
                self._flush(None, None)
            if not self._reply:
                self._reply_time = stamp
            self._reply.extend(blocks)
        elif self._reply:
            self._after.append({"role": role, "blocks": blocks, "timestamp": stamp})
        else:
            self._fold(role, blocks, stamp)

    def _event(self, event: dict[str, Any], stamp: Any) -> None:
        kind = event.get("type")
        if kind == "token_count":
            info = event.get("info")
            if self._records_seen:
                return  # calls come from the usage records
            if not isinstance(info, dict):  # the early form: one call's usage at the top of the event
                if isinstance(event.get("input_tokens"), int):
                    self._call(_usage(event), stamp)
                return
            window = info.get("model_context_window")
            if isinstance(window, int) and window > 0:
                self.context_window = window
            total = info.get("total_token_usage")
            if total == self._last_total:
                return  # the same count again (a turn's end)
            last = info.get("last_token_usage")
            if not isinstance(last, dict) and isinstance(total, dict):  # only the session's total: the change
                last = _difference(total, self._last_total)
            self._last_total = total
            self._call(_usage(last), stamp)
        elif kind == "task_started" and isinstance(event.get("model_context_window"), int):
            self.context_window = event["model_context_window"]
        elif kind == "context_compacted" and not self._compacted:
            self._announced = stamp  # its `compacted` record, when the version writes one, is the same compaction

    def _settle_announcement(self, record_follows: bool) -> None:
        """A context_compacted told a compaction: the `compacted` record that follows it is that compaction
        (counted once, with its replacement history); anything else first means it has no record."""
        stamp, self._announced = self._announced, None
        if not record_follows:
            self._compaction({}, stamp)

    def _call(self, usage: dict[str, int] | None, stamp: Any) -> None:
        if usage is None:
            return
        if self._announced is not None:
            self._settle_announcement(False)
        self.calls += 1
        self._compacted = False
        self._last_input = usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
        if not self._reply:
            for waiting in self._after:  # (none: a reply holds them back)
                self._fold(waiting["role"], waiting["blocks"], waiting["timestamp"])
            self._after = []
            if self._last_role in (None, "assistant"):
                self._fold("user", [{"type": "text", "text": NO_INPUT}], stamp)
            self._reply, self._reply_time = [{"type": "text", "text": NO_REPLY}], stamp
        self._flush(usage, stamp)

    def _flush(self, usage: dict[str, int] | None, stamp: Any) -> None:
        """Fold the waiting reply (with `usage`: a call) and what was logged behind it."""
        if self._reply:
            message: dict[str, Any] = {"role": "assistant", "content": self._reply, "model": self.model or "codex"}
            if usage is not None and self._last_role == "assistant":  # two replies in a row: the call's
                self._fold("user", [{"type": "text", "text": NO_INPUT}], stamp)  # must begin a message
            if usage is not None:
                message["id"] = f"codex-call-{self.calls}"
                message["usage"] = usage
            self._emit({"type": "assistant", "message": message, "requestId": "",
                        "timestamp": self._reply_time or stamp})
        for waiting in self._after:
            self._fold(waiting["role"], waiting["blocks"], waiting["timestamp"])
        self._reply, self._after, self._reply_time = [], [], None

    def _compaction(self, payload: dict[str, Any], stamp: Any) -> None:
        """The agent compacted: a boundary, then what its requests hold from now on (the replacement
        history, else the summary), the first of it marked as the summary (a request starts there)."""
        self._flush(None, None)
        self._compacted = True
        if self._last_role == "user":  # the new segment must not merge into the message before it
            self._emit({"type": "assistant", "message": {"role": "assistant", "model": self.model or "codex",
                                                          "content": [{"type": "text", "text": COMPACTED}]}})
        self._emit({"type": "system", "subtype": "compact_boundary", "timestamp": stamp,
                    "compactMetadata": {"trigger": "auto", "preTokens": self._last_input or None}})
        replacement = payload.get("replacement_history")
        pieces = [found for item in replacement if isinstance(item, dict) and (found := item_blocks(item))
                  and found[1]] if isinstance(replacement, list) else []
        summary = payload.get("message")
        if not pieces:
            text = summary if isinstance(summary, str) and summary.strip() else COMPACTED
            pieces = [("user", [{"type": "text", "text": text}])]
        first = True
        for role, blocks in pieces:
            self._fold(role, blocks, stamp, summary=first)
            first = False

    def _fold(self, role: str, blocks: list[dict[str, Any]], stamp: Any, *, summary: bool = False) -> None:
        record: dict[str, Any] = {"type": role, "message": {"role": role, "content": blocks}, "timestamp": stamp}
        if role == "assistant":
            record["message"]["model"] = self.model or "codex"
        if summary:
            record["isCompactSummary"] = True
        self._emit(record)


def compaction_summary(message: dict[str, Any]) -> str:
    """What a compaction's summary says, read in the message a compacted request starts with: after Codex's
    summary prefix (the last such block: an older summary may be kept before it), "summary encrypted" for a
    compaction the server made, else the message's text (Claude Code's summaries are the message)."""
    content = message.get("content")
    texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"] if isinstance(
        content, list) else [content] if isinstance(content, str) else []
    for text in reversed(texts):
        at = text.find(SUMMARY_MARK)
        if at >= 0:
            newline = text.find("\n", at)
            return text[newline + 1:].strip() if newline >= 0 else text
    for text in reversed(texts):
        if text.startswith(ENCRYPTED_SUMMARY):
            size = text[len(ENCRYPTED_SUMMARY):].strip(" ,]")
            return f"summary encrypted ({size})" if size else "summary encrypted"
    return "".join(texts)
