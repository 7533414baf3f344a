"""Which recorded requests are the agent's conversation, and which are side calls around it.

Why a rule of its own: an agent sends more than its conversation through the same endpoint. Claude Code asks
for a session title (no tools, a small system prompt of its own, a JSON answer; before its first real call),
checks its quota (`max_tokens` 1), detects topics, and runs subagents (tools and a system prompt of their
own, interleaved with the main calls). Taken as steps, each of these would look like the agent compacting its
context to a stranger's. The rule, from what every request shows (no guess from the agent's name):

- a request that asks for a structured answer without tools, or at most `TINY_ANSWER` tokens, is a side call
  (titles, summaries, quota checks), wherever it comes;
- a request that extends the conversation (holds every block of the one before) is its next step;
- one that does not extend it is the agent's compaction when it shares the conversation's tools or its system
  prompt (an agent compacts its messages, not its tools), else a side call (a subagent, a helper prompt);
- before the conversation has begun, a request without tools waits: the next request tells whether it began
  the conversation (it extends it) or was a side call (it does not); at the end of a finished recording a
  waiting one is the conversation's start (an agent without tools).

Side calls are kept (call number, model, why, usage) for the face to list; they are never steps. The rule
lives in one `CallSorter`: the reader that folds a recording into a history and the face's index of requests
both ask it, so they can never disagree on which call a step is.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tui_agent.core.recordings.proxy_requests import call_usage, request_messages

TINY_ANSWER = 16  # max_tokens at or under this: a check, not a turn (Claude Code's quota check asks for 1)


@dataclass(frozen=True)
class Signature:
    """What identifies a conversation across its requests: its tools' names and its system prompt."""

    tools: frozenset[str]
    system: str  # a digest of the system prompt / instructions without cache marks ("" when none)

    def shares(self, other: Signature) -> bool:
        return bool(self.tools) and self.tools == other.tools or bool(self.system) and self.system == other.system


@dataclass(frozen=True)
class SideCall:
    call: int
    model: str | None
    why: str  # "structured answer", "tiny answer", "no tools", "other tools and system prompt"
    usage: dict[str, int]


def signature(body: Any) -> Signature:
    body = body if isinstance(body, dict) else {}
    names = set()
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            name = tool.get("name") or (tool.get("function") or {}).get("name") or tool.get("type")
            names.add(str(name))
    system = body.get("system", body.get("instructions"))
    if system is None and isinstance(body.get("messages"), list):  # Chat Completions: the system messages
        system = [m.get("content") for m in body["messages"] if isinstance(m, dict) and m.get("role") == "system"]
    text = json.dumps(_without_cache_marks(system), sort_keys=True) if system else ""
    return Signature(frozenset(names), hashlib.sha256(text.encode()).hexdigest()[:16] if text else "")


def always_side(body: Any) -> str | None:
    """Why `body` is a side call whatever came before (None: it may be the conversation)."""
    if not isinstance(body, dict):
        return None
    limit = body.get("max_tokens", body.get("max_output_tokens", body.get("max_completion_tokens")))
    if isinstance(limit, int) and not isinstance(limit, bool) and 0 < limit <= TINY_ANSWER:
        return "tiny answer"
    if not body.get("tools") and _asks_structured(body):
        return "structured answer"
    return None


def _asks_structured(body: dict[str, Any]) -> bool:
    """A JSON-schema answer: Anthropic's `output_config.format`, Responses' `text.format`, Chat's
    `response_format` (a title or a classification, not a turn of a conversation)."""
    formats = [(body.get("output_config") or {}).get("format") if isinstance(body.get("output_config"), dict) else None,
               (body.get("text") or {}).get("format") if isinstance(body.get("text"), dict) else None,
               body.get("response_format")]
    return any(isinstance(f, dict) and f.get("type") in ("json_schema", "json_object") for f in formats)


def _without_cache_marks(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_marks(v) for v in value]
    return value


@dataclass
class Step:
    """A request that is a step of the conversation: its record, its blocks and whether it extends the last."""

    record: dict[str, Any]
    pairs: list[tuple[str, dict[str, Any]]]  # (role, block) of every message block, in order
    keys: list[str]  # the same, as compared
    extends: bool


@dataclass
class CallSorter:
    """Exchange records in, the steps they make out (in call order; a tool-less first request waits for the
    next one); side calls are kept in `side`, and `step_calls` numbers each step by its proxy call."""

    chain: list[str] = field(default_factory=list)  # the conversation's last request, as compared
    main: Signature | None = None  # the conversation's tools and system prompt
    side: list[SideCall] = field(default_factory=list)
    step_calls: list[int] = field(default_factory=list)
    waiting: Step | None = None

    def add(self, record: dict[str, Any]) -> list[Step]:
        api, body = str(record.get("api")), record.get("request")
        messages = request_messages(api, body)
        usage = call_usage(api, record.get("usage"))
        if not messages or not usage or not isinstance(record.get("status"), int) or record["status"] >= 400:
            return []
        if why := always_side(body):
            self._side(record, why)
            return []
        # compared block by block, in any order: an agent may merge the messages of a round into one and
        # put its texts before its tool calls (Claude Code does); it extends when it dropped nothing
        pairs = [(m["role"], block) for m in messages for block in m["content"]]
        keys = [json.dumps(pair, sort_keys=True) for pair in pairs]
        out: list[Step] = []
        if self.waiting is not None:
            waiting, self.waiting = self.waiting, None
            if extends(waiting.keys, keys):
                out.append(self._taken(waiting))
            else:
                self._side(waiting.record, "no tools")
        has_tools = bool(body.get("tools")) if isinstance(body, dict) else False
        if self.chain and extends(self.chain, keys):
            return out + [self._taken(Step(record, pairs, keys, True))]
        if not self.chain and not has_tools:
            self.waiting = Step(record, pairs, keys, False)
            return out
        if self.chain and not (has_tools and self.main is not None and signature(body).shares(self.main)):
            self._side(record, "no tools" if not has_tools else "other tools and system prompt")
            return out
        return out + [self._taken(Step(record, pairs, keys, False))]

    def finish(self) -> list[Step]:
        """The recording is complete: a request still waiting began the conversation (an agent without tools)."""
        waiting, self.waiting = self.waiting, None
        return [self._taken(waiting)] if waiting is not None else []

    def _taken(self, step: Step) -> Step:
        body = step.record.get("request")
        if isinstance(body, dict) and (body.get("tools") or self.main is None):
            self.main = signature(body)
        self.chain = step.keys
        self.step_calls.append(int(step.record["call"]))
        return step

    def _side(self, record: dict[str, Any], why: str) -> None:
        body: dict[str, Any] = record["request"] if isinstance(record.get("request"), dict) else {}
        usage = call_usage(str(record.get("api")), record.get("usage")) or {}
        self.side.append(SideCall(int(record["call"]), record.get("model") or body.get("model"), why, usage))


def extends(chain: list[str], keys: list[str]) -> bool:
    """Whether a request of `keys` holds every block of the one of `chain` (in any order)."""
    return not (Counter(chain) - Counter(keys))
