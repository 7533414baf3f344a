"""A `tui-agent proxy` recording read as a log: each model call a step, with the request the agent really sent.

Why a reader of its own: a recording holds every request whole, so nothing is reconstructed; what is left to
find is the conversation they share. The requests of one conversation extend each other (each one is the last
one plus the reply and what followed it); the messages a request adds are folded into the union history, and
the call's reply (from the recorded answer) follows them with the usage the API returned. A request that does
not extend the conversation is either a side call (a title, a quota check, a subagent: `side_calls.py`; not a
step) or the agent's compaction (its tools, a shorter history): a boundary, then the request's messages as the
new segment.

Requests stored as deltas (what each adds to a recent one: `proxy_delta.py`) are made whole again as the
lines are read (`RequestChain`); a recording with every request whole reads the same way.

Requests are read in the API they speak (Anthropic Messages, OpenAI Responses, Chat Completions) and folded
as Messages API records by the one `TranscriptReader`, as `codex_rollout` does for Codex's own logs.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tui_agent.core.recordings.foreign_log import ForeignLogReader
from tui_agent.core.recordings.proxy_delta import RequestChain
from tui_agent.core.recordings.proxy_requests import call_usage
from tui_agent.core.recordings.side_calls import CallSorter, Step

RECORD_TYPE = "tui-agent-proxy"  # the first line of a recording (proxy/recorder.py writes it)
NO_REPLY = "[the answer was not recorded]"
COMPACTED = "[the agent compacted its context here]"


class ProxyReader(ForeignLogReader):
    """A recording's lines folded into a history; the `TranscriptReader` interface (`feed`, `load`).

    Which requests are steps and which are side calls is `side_calls.CallSorter`'s rule; `step_calls` maps
    each step to the proxy's call number (the face reads that call's exact request from the recording)."""

    context_window: int | None = None

    def __init__(self, *, keep_thinking: bool = True, keep_meta: bool = True) -> None:
        super().__init__(keep_thinking=keep_thinking, keep_meta=keep_meta)
        self.sorter = CallSorter()
        self.chain = RequestChain()
        self._chain: list[str] = []  # the last step's blocks, as compared (what a step extending it adds)
        self._last_input = 0

    @property
    def side(self) -> list:
        return self.sorter.side

    @property
    def side_calls(self) -> int:
        return len(self.sorter.side)

    @property
    def step_calls(self) -> list[int]:
        return self.sorter.step_calls

    def feed(self, lines: Any) -> ProxyReader:
        for record in self._objects(lines):
            if record.get("type") != "exchange":
                continue
            record["request"] = self.chain.request(record)  # whole again (every exchange: a later delta's base)
            if record.get("call"):
                for step in self.sorter.add(record):
                    self._step(step)
        return self

    def finish(self) -> ProxyReader:
        """The recording is complete: a request still waiting began the conversation (an agent without tools)."""
        for step in self.sorter.finish():
            self._step(step)
        return self

    def _step(self, step: Step) -> None:
        """Fold the request's new messages (all of them after a compaction) and the call's reply."""
        record = step.record
        body: dict[str, Any] = record["request"] if isinstance(record.get("request"), dict) else {}
        usage = call_usage(str(record.get("api")), record.get("usage")) or {}
        stamp = record.get("time")
        new = step.pairs
        if step.extends:
            unseen = Counter(self._chain)
            new = []
            for key, pair in zip(step.keys, step.pairs):
                if unseen[key]:
                    unseen[key] -= 1
                else:
                    new.append(pair)
            while new and new[0][0] == "assistant" and self._last_role == "assistant":
                new = new[1:]  # the reply as the agent sent it back: folded already, from the answer
        elif self._chain:
            self._boundary(stamp)
        compacted = bool(self._chain) and not step.extends
        for n, (role, block) in enumerate(new):
            self._fold(role, [block], stamp, summary=compacted and n == 0)
        self._chain = step.keys
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


def _iso(stamp: Any) -> str | None:
    if not isinstance(stamp, (int, float)):
        return None
    from datetime import datetime, timezone

    return datetime.fromtimestamp(stamp, tz=timezone.utc).isoformat()
