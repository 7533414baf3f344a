"""Load a real Claude Code session log (JSONL) as a Messages API history.

Used to open someone's agent session in the budget panel ("what did my agent forget?"), and by tests
and benchmarks as realistic data. Follows `shared/reference/transcripts-format.md` §4: keep user and
assistant records of the main chain, merge the lines of one API response, group parallel tool_results
into one user message, and answer any unanswered tool_use so the history is valid for the API.

A log is untrusted input (`--transcript`, `replay`): whatever it holds, the loader repairs or drops it
and never hands the engine a history the API would reject (`protocol_errors` is empty): blocks a role
cannot carry are dropped (tool_use from the user, tool_result from the assistant), a tool_use without
an id or with one already used gets a fresh id (its result follows it), lone surrogates become U+FFFD
(they cannot be encoded to print or send), and a line too deep or too large to parse is skipped.

A log that is still being written (`tui-agent watch`) is read as it grows by one `TranscriptReader`: each
line is folded once, and the repairs of the messages that can no longer change are made once and kept, so a
growth costs what it adds, not the whole log again, and the messages already handed out stay the very same
objects (a replay's sticky compactors know them by identity). Every `load()` says exactly what
`parse_transcript` of the lines so far says.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from sys import intern
from typing import Any, Iterable

from tui_agent.core.config_files import read_bytes_capped
from tui_agent.core.messages import Message, tool_result_block
from tui_agent.core.recordings.transcript_records import (
    SKIPPED,
    lands,
    miss_reason,
    pre_tokens,
    read_record,
    record_blocks,
    timestamp,
)

MISSING_RESULT = "[result missing]"
MAX_TRANSCRIPT_BYTES = 512 * 1024 * 1024  # the largest real logs are tens of MB
CONTINUATION_PREFIX = "This session is being continued from a previous conversation"
FRESH_ID = "toolu_transcript_{}"  # the id a tool_use without a usable one gets (its result follows it)


@dataclass
class TranscriptLoad:
    history: list[Message]
    skipped_lines: int = 0
    compaction_summaries: list[int] = field(default_factory=list)  # history indices of summary messages
    usage: list[dict[str, int]] = field(default_factory=list)  # per API response, deduplicated
    models: set[str] = field(default_factory=set)
    # (history index of an assistant message, the logged usage of the API call that began it): the real
    # prompt size of each recorded call, for the economics replay and the estimator's error.
    call_usage: list[tuple[int, dict[str, int]]] = field(default_factory=list)
    # history index of the first message after each `compact_boundary` record (the agent compacted there)
    compaction_boundaries: list[int] = field(default_factory=list)
    # the `compactMetadata.preTokens` of each `compact_boundary` (the context size the agent compacted
    # from, as it logged it; None when absent), in the order of `compaction_boundaries`
    boundary_pre_tokens: list[int | None] = field(default_factory=list)
    # history index of an assistant message → the model that wrote it (whose signature its thinking carries)
    message_models: dict[int, str] = field(default_factory=dict)
    # history index of an assistant message → when the call that began it was logged (POSIX seconds): the
    # gaps price cache expiry
    call_times: dict[int, float] = field(default_factory=dict)
    # records whose uuid an earlier record had: a resumed session's copy of its start, folded once
    repeated_records: int = 0
    # history index of an assistant message → why the API said its call's prompt cache missed (Claude Code
    # 2.1.233+ logs the response's `diagnostics.cache_miss_reason`: its type, and the tokens it missed)
    call_miss_reasons: dict[int, tuple[str, int | None]] = field(default_factory=dict)


class TranscriptReader:
    """A log's lines folded into a history as they come (`feed`); `load()` is the load of every line so far.

    Two stages. The fold (`_fold`) merges the lines of one API response and groups parallel tool_results,
    building the messages as logged (`_raw`): only the last of them can still change. The repairs
    (`_repair`: fresh ids for missing or repeated ones, every tool_use answered, no orphan result) read a
    message, the one before and the one after; a message whose repair can no longer change is repaired once
    and kept (`_fixed`, `_settled`), the few after it are repaired again at each `load()`. A repaired
    message that needed no change is the logged message itself (no copy).

    One repair can be undone by what comes later: a fresh id already given (`toolu_transcript_0`) that a
    later line logs as its own. `parse_transcript` of the whole log would have given another fresh id, so
    the repairs are made again from the start (a new object for each message: a replay sees a rewrite).

    A message handed out by a load is never edited afterwards: the last messages, which the next lines may
    still grow, are handed out as copies.
    """

    def __init__(self, *, keep_thinking: bool = True, keep_meta: bool = True) -> None:
        self.keep_thinking, self.keep_meta = keep_thinking, keep_meta
        self.skipped_lines = 0
        self.repeated_records = 0  # records whose uuid came before (a resumed session's copy)
        self._uuids: set[str] = set()
        self._raw: list[Message] = []  # the history as the records fold it, before the repairs
        self._summaries: list[int] = []
        self._usage: list[dict[str, int]] = []
        self._models: set[str] = set()
        self._seen_usage: set[str] = set()
        # history index of an assistant message → the usage of the call that began it, its model, its time
        self._started: list[tuple[int, dict[str, int]]] = []
        self._written_by: dict[int, str] = {}
        self._stamped: dict[int, float] = {}
        self._missed: dict[int, tuple[str, int | None]] = {}
        # each compact_boundary names the message the next record lands in (a summary merged into the
        # user message before it lands there, not in a new one)
        self._boundaries: list[int] = []
        self._pre_tokens: list[int | None] = []
        self._boundary_pending = False
        self._start: Message = {"role": "user", "content": [{"type": "text", "text": "[transcript starts here]"}]}
        self._logged: dict[str, None] = {}  # every tool_use id as logged (a fresh id avoids them)
        self.repairs_restarted = 0  # times a later line undid a repair made (see the class docstring)
        self._restart_repairs()

    def _restart_repairs(self) -> None:
        self._fixed: list[Message] = []  # the repaired messages of `_raw[:_settled]`, final
        self._settled = 0
        self._assigned: dict[str, None] = {}  # fresh ids given in `_fixed`
        self._seen: dict[str, None] = {}  # tool_use ids in `_fixed` (after renaming)
        self._fresh = 0
        self._stale = False

    def feed(self, lines: Iterable[str]) -> TranscriptReader:
        for line in lines:
            record = read_record(line)
            if record is SKIPPED:
                self.skipped_lines += 1
            elif record is not None:
                self._fold(record)  # type: ignore[arg-type]
        return self

    def _fold(self, record: dict[str, Any]) -> None:
        uid = record.get("uuid")
        if isinstance(uid, str):
            # a resumed session writes its earlier records again, uuids and all: one conversation, folded once
            if uid in self._uuids:
                self.repeated_records += 1
                return
            self._uuids.add(uid)
        history = self._raw
        if record.get("type") == "system":
            if not self._boundary_pending:
                self._pre_tokens.append(pre_tokens(record))
            self._boundary_pending = True
            return
        if self._boundary_pending and lands(record, self.keep_thinking, self.keep_meta):
            self._boundary_pending = False
            self._boundaries.append(_landing_index(history, record))
        message = record["message"]
        role = "assistant" if record["type"] == "assistant" else "user"
        if role == "user" and record.get("isMeta") and not self.keep_meta:
            return
        blocks = record_blocks(record, self.keep_thinking)
        if not blocks:
            return
        if role == "assistant":
            self._fold_reply(record, message, blocks)
            return
        is_results = any(b.get("type") == "tool_result" for b in blocks)
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        summary = bool(record.get("isCompactSummary")) or text.startswith(CONTINUATION_PREFIX)
        if history and history[-1]["role"] == "user":
            previous = history[-1]["content"]
            if is_results:
                # tool_results must lead the user message: put them before any text already there
                first_text = next((i for i, b in enumerate(previous) if b.get("type") != "tool_result"), len(previous))
                results = [b for b in blocks if b.get("type") == "tool_result"]
                previous[first_text:first_text] = results
                previous.extend(b for b in blocks if b.get("type") != "tool_result")
            else:
                previous.extend(blocks)
        else:
            if not history and is_results:
                return  # a log that starts mid-round: drop orphan results
            history.append({"role": "user", "content": list(blocks)})
        if summary:
            self._summaries.append(len(history) - 1)

    def _fold_reply(self, record: dict[str, Any], message: dict[str, Any], blocks: list[dict[str, Any]]) -> None:
        history = self._raw
        model = message.get("model") if isinstance(message.get("model"), str) else None
        if model:
            self._models.add(model)
        key = f"{message.get('id')}:{record.get('requestId')}"
        usage = None
        if isinstance(message.get("usage"), dict) and key not in self._seen_usage:
            self._seen_usage.add(key)
            usage = {intern(k): v for k, v in message["usage"].items() if isinstance(v, int)}  # (keys: one each)
            self._usage.append(usage)
        for block in blocks:
            logged = block.get("id") if block.get("type") == "tool_use" else None
            if isinstance(logged, str):
                self._logged[logged] = None
                self._stale = self._stale or logged in self._assigned
        # One API response is logged as one line per block; consecutive assistant lines (same response or
        # not) form one assistant message, as the API would see them.
        if history and history[-1]["role"] == "assistant":
            history[-1]["content"].extend(blocks)
            return
        history.append({"role": "assistant", "content": list(blocks)})
        index = len(history) - 1 + (history[0]["role"] == "assistant")  # after the start message put first
        if usage is not None:
            self._started.append((index, usage))
            stamp = timestamp(record.get("timestamp"))
            if stamp is not None:
                self._stamped[index] = stamp
            reason = miss_reason(message)
            if reason is not None:
                self._missed[index] = reason
        if model:
            self._written_by[index] = model

    def load(self) -> TranscriptLoad:
        """Everything the lines so far say (a new `history` list; the messages that can no longer change
        are the same objects as in the previous load)."""
        raw = self._raw
        if self._stale:
            self._restart_repairs()
            self.repairs_restarted += 1
        self._settle()
        history = self._fixed + self._repaired_tail()
        boundaries = self._boundaries + ([len(raw)] if self._boundary_pending else [])
        # (the summaries' and boundaries' indices are counted while folding, before the start message; the
        # calls' are history indices)
        return TranscriptLoad(history, self.skipped_lines, list(self._summaries), list(self._usage),
                              set(self._models), list(self._started), boundaries, list(self._pre_tokens),
                              dict(self._written_by), dict(self._stamped), self.repeated_records,
                              dict(self._missed))

    def _settle(self) -> None:
        """Repair, once, the messages that can no longer change: all but the last logged one."""
        raw = self._raw
        if not raw:
            return
        if self._settled == 0 and not self._fixed and raw[0]["role"] == "assistant":
            self._fixed.append(self._start)
        if self._settled == 0 and raw[0]["role"] == "user" and len(raw) >= 2:
            self._fixed.append(_opening(raw[0]))
            self._settled = 1
        taken = ChainMap(self._assigned, self._logged)  # a fresh id given lands in `_assigned`
        while self._settled + 2 < len(raw):  # the reply and the message after it are both final
            j = self._settled
            reply, answer, self._fresh = _repair(raw[j], raw[j + 1], self._seen, taken, self._fresh)
            self._fixed += [reply, answer]  # type: ignore[list-item]
            self._settled = j + 2

    def _repaired_tail(self) -> list[Message]:
        """The repairs of the messages after the settled ones, on copies of the ids so far (undone at the
        next load: these messages may still grow)."""
        raw = self._raw
        j = self._settled
        if j >= len(raw):
            return []
        if j == 0 and raw[0]["role"] == "user":
            tail = [_opening(raw[0])]
        else:
            seen, taken = ChainMap({}, self._seen), ChainMap({}, self._assigned, self._logged)
            reply, answer, _ = _repair(raw[j], raw[j + 1] if j + 1 < len(raw) else None, seen, taken, self._fresh)
            tail = [reply] if answer is None else [reply, answer]
        # a copy, never a logged message itself: the next line may still grow that one, and a message
        # handed out is never edited afterwards (outbound-only: a compactor may know it by identity)
        return [{"role": m["role"], "content": list(m["content"])} for m in tail]


def parse_transcript(lines: Iterable[str], *, keep_thinking: bool = True, keep_meta: bool = True) -> TranscriptLoad:
    """`load_transcript` of lines already read."""
    return TranscriptReader(keep_thinking=keep_thinking, keep_meta=keep_meta).feed(lines).load()


def _landing_index(history: list[Message], record: dict[str, Any]) -> int:
    """The history index `record` will be in: merged into the last message when the role repeats."""
    role = "assistant" if record["type"] == "assistant" else "user"
    if history and history[-1]["role"] == role:
        return len(history) - 1
    return len(history)


def _opening(message: Message) -> Message:
    """The first message, a user one: no tool_result without its tool_use before it."""
    content = [b for b in message["content"] if b.get("type") != "tool_result"]
    if len(content) == len(message["content"]):
        return message
    return {"role": "user", "content": content or [{"type": "text", "text": "[empty]"}]}


def _repair(reply: Message, after: Message | None, seen: MutableMapping[str, None],
            taken: MutableMapping[str, None], fresh: int) -> tuple[Message, Message | None, int]:
    """An assistant message and the user message after it (None: the log ends with the reply), repaired:
    every tool_use id a unique non-empty string (a renamed use takes its result along), each answered in
    the next message (results first; a missing one made up, one without its use dropped). `seen` and
    `taken` are updated with the ids used; returns the two messages and the next fresh id's number."""
    renamed: dict[str | None, list[str]] = {}  # id as logged → the ids its uses got, in order
    content = []
    for block in reply["content"]:
        if block.get("type") == "tool_use":
            logged = block.get("id") if isinstance(block.get("id"), str) else None
            if not logged or logged in seen:
                while FRESH_ID.format(fresh) in taken:
                    fresh += 1
                taken[FRESH_ID.format(fresh)] = None
                block = {**block, "id": FRESH_ID.format(fresh)}
            seen[block["id"]] = None
            renamed.setdefault(logged, []).append(block["id"])
        content.append(block)
    if any(a is not b for a, b in zip(content, reply["content"])):
        reply = {"role": "assistant", "content": content}
    ids = [b["id"] for b in content if b.get("type") == "tool_use"]
    if after is None:
        return reply, ({"role": "user", "content": _answer(ids, renamed, [])} if ids else None), fresh
    answered = _answer(ids, renamed, after["content"])
    if len(answered) != len(after["content"]) or any(a is not b for a, b in zip(answered, after["content"])):
        after = {"role": "user", "content": answered}
    return reply, after, fresh


def load_transcript(path: str | Path, *, keep_thinking: bool = True, keep_meta: bool = True) -> TranscriptLoad:
    """Parse `path`; never raises on bad lines (they are counted in `skipped_lines`)."""
    # Only a regular file, and not without end: `--transcript` may name a FIFO or /dev/zero.
    data = read_bytes_capped(path, MAX_TRANSCRIPT_BYTES)
    if data is None:
        raise FileNotFoundError(2, "No such file or directory", str(path))
    return parse_transcript(data.decode("utf-8", errors="replace").split("\n"), keep_thinking=keep_thinking,
                            keep_meta=keep_meta)


def _answer(ids: list[str], renamed: dict[str | None, list[str]], content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The user message after a tool_use round: one result per use (renamed along with its use, a missing
    one made up, extras dropped), results before anything else."""
    queues = {key: list(new_ids) for key, new_ids in renamed.items() if key is not None}
    results, others, answered = [], [], set()
    for block in content:
        if block.get("type") != "tool_result":
            others.append(block)
            continue
        key = block.get("tool_use_id")
        queue = queues.get(key) if isinstance(key, str) else None
        if not queue:
            continue  # no tool_use before it, or that use is answered already
        new_id = queue.pop(0)
        results.append(block if new_id == key else {**block, "tool_use_id": new_id})
        answered.add(new_id)
    missing = [tool_result_block(t, MISSING_RESULT, True) for t in ids if t not in answered]
    return missing + results + others or [{"type": "text", "text": "[empty]"}]
