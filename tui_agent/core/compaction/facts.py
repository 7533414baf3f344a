"""What is known of the history, computed once per message: the history is append-only, so a message's
size, its tool calls and what the recap needs of it never change once it is there.

The tiers decide from these facts (never by re-reading every message on every call), and whether a
result can be had again is the tool's own answer (`Tool.rerunnable(input)`, MCP's `readOnlyHint`); the
policy's name table answers only for transcripts, where no tool object exists. The structural helpers
below (the newest round, a message's exchange, what a pin keeps) are facts of the history too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Sequence

from tui_agent.core import tokens as tk
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.names.entities import entities, held_text
from tui_agent.core.compaction.recap import WRITE_TOOLS, MessageFacts, facts_of
from tui_agent.core.messages import Message, blocks, is_user_text, result_text, tool_results, tool_uses

WRITERS = frozenset(WRITE_TOOLS)  # the tools whose calls `Facts.writers` indexes
Rerunnable = Callable[[str, Any], "bool | None"]  # (tool name, input) → the tool's answer, None if unknown


@dataclass(frozen=True)
class BlockFacts:
    """One tool_result block as it arrived: which block of its message, the call it answers (its tool's name
    and input), how long its text is, whether it failed, and the tool's own answer to "can it be had again?"
    (None: the tool did not say, so the policy's name table decides: `rerunnable`). The history is
    append-only, so these never change; the tiers read them instead of re-reading the block."""

    index: int  # the block's position in its message
    tool_use_id: str
    tool: str  # the name of the call it answers ("" for an unknown id)
    input: Any
    chars: int  # len(result_text(block))
    error: bool
    tool_answer: bool | None = None

    def rerunnable(self, policy: CompactPolicy) -> bool:
        """Can this result be had again? The tool answers for itself; a transcript's names use the table."""
        return policy.rerunnable(self.tool, self.input) if self.tool_answer is None else self.tool_answer


@dataclass
class Facts:
    """Per-message facts of one history (a replaced history, `/clear`, gets a new `Facts`)."""

    rerunnable_answer: Rerunnable | None = None  # the tools' own answer (`ToolRegistry.rerunnable`)
    estimates: list[int] = field(default_factory=list)  # chars/4 of each message as it is
    messages: list[MessageFacts] = field(default_factory=list)  # prompts, paths, commands (recap inputs)
    total: int = 0
    calls: dict[str, tuple[str, Any]] = field(default_factory=dict)  # tool_use id → (name, input)
    errors: set[str] = field(default_factory=set)  # tool_use ids answered with an error
    first: object = None  # identity of history[0], to notice a replaced history (/clear)
    first_digest: str = ""  # its content's digest, to notice a state saved over another history
    last_prompt: int | None = None  # the prompt of the turn in progress (the last user text message)
    # the entities each message holds (`coverage.entities`), made when a ranking or an at-risk list first
    # asks: shared with copies, since a message's entities never change (a new history gets new Facts)
    held: dict[int, frozenset[str]] = field(default_factory=dict)
    turn_total: int = 0  # chars/4 of that turn, its prompt included (is it alone over the high mark?)
    writers: list[int] = field(default_factory=list)  # messages that call a file-writing tool (keep for use)
    results: list[tuple[BlockFacts, ...]] = field(default_factory=list)  # each message's tool_result blocks
    # in how many messages each entity occurs, counted up to `recurrence_upto` and extended as the history
    # grows (keep what recurs asks at every event: counting the whole session again made a long watch slow)
    recurrence: dict[str, int] = field(default_factory=dict)
    recurrence_upto: int = 0

    def sync(self, history: Sequence[Message]) -> None:
        """Learn the messages added since the last call (O(new messages))."""
        if history and self.first is None:
            self.first = history[0]
            self.first_digest = digest(history[0])
        for i in range(len(self.estimates), len(history)):
            message = history[i]
            estimate, chars = tk.message_sizes(message)  # both sizes in one walk
            self.estimates.append(estimate)
            fact = facts_of(message, chars)
            self.messages.append(fact)
            self.errors.update(fact.failed)
            if is_user_text(message):
                self.last_prompt, self.turn_total = i, 0
            self.total += estimate
            self.turn_total += estimate
            if not WRITERS.isdisjoint(fact.tools):
                self.writers.append(i)
            for use in tool_uses(message):
                self.calls[use.get("id", "")] = (use.get("name", ""), use.get("input"))
            self.results.append(self._results_of(message))

    def _results_of(self, message: Message) -> tuple[BlockFacts, ...]:
        """The facts of the message's tool_result blocks (their calls came before them: already known)."""
        if not tool_results(message):
            return ()
        out = []
        for j, block in enumerate(blocks(message)):
            if block.get("type") != "tool_result":
                continue
            tool_id = block.get("tool_use_id", "")
            name, tool_input = self.call_of(tool_id)
            answer = self.rerunnable_answer(name, tool_input) if self.rerunnable_answer is not None else None
            out.append(BlockFacts(j, tool_id, name, tool_input, len(result_text(block)), bool(block.get("is_error")),
                                  answer))
        return tuple(out)

    def copy(self) -> Facts:
        """An independent copy (a preview over a replaced history must not disturb the real one)."""
        return Facts(self.rerunnable_answer, list(self.estimates), list(self.messages), self.total,
                     dict(self.calls), set(self.errors), self.first, self.first_digest, self.last_prompt, self.held,
                     self.turn_total, list(self.writers), list(self.results), dict(self.recurrence),
                     self.recurrence_upto)

    def entities_of(self, history: Sequence[Message], i: int) -> frozenset[str]:
        """The entities message i holds (what it says, calls with, or was answered: `held_text`)."""
        found = self.held.get(i)
        if found is None:
            found = self.held[i] = frozenset(entities(held_text(history[i])))
        return found

    def recurrence_of(self, history: Sequence[Message]) -> dict[str, int]:
        """In how many messages of `history` each entity occurs (`keep_for_use.recurrence`, kept up to date)."""
        counts = self.recurrence
        for i in range(self.recurrence_upto, len(history)):
            for name in self.entities_of(history, i):
                counts[name] = counts.get(name, 0) + 1
        self.recurrence_upto = max(self.recurrence_upto, len(history))
        return counts

    def call_of(self, tool_use_id: str) -> tuple[str, Any]:
        """(tool name, input) of the call a result answers; ("", None) for an unknown id."""
        return self.calls.get(tool_use_id, ("", None))

    def rerunnable(self, tool_use_id: str, policy: CompactPolicy) -> bool:
        """Can this result be had again? The tool answers for itself; a transcript's names use the table."""
        name, tool_input = self.call_of(tool_use_id)
        answer = self.rerunnable_answer(name, tool_input) if self.rerunnable_answer is not None else None
        return policy.rerunnable(name, tool_input) if answer is None else answer


def digest(message: Message) -> str:
    """A short digest of one message's content (tells one history's first message from another's)."""
    return hashlib.sha1(json.dumps(message, sort_keys=True, default=str).encode()).hexdigest()[:16]


def newest_round_start(history: Sequence[Message]) -> int:
    """Index where the round the model has not read yet begins (kept whole: never cut or dropped)."""
    n = len(history)
    if n == 0:
        return 0
    last = history[-1]
    if last.get("role") == "user" and tool_results(last) and n >= 2:
        return n - 2
    return n - 1


def exchange(history: Sequence[Message], i: int) -> set[int]:
    """Message i and the partner it cannot be sent without (tool_use ↔ its tool_results)."""
    out = {i}
    message = history[i]
    if tool_uses(message) and i + 1 < len(history):
        out.add(i + 1)
    elif message.get("role") == "user" and tool_results(message) and i > 0:
        out.add(i - 1)
    elif message.get("role") == "assistant" and i + 1 < len(history) and is_user_text(history[i + 1]):
        out.add(i + 1)
    return out


def pinned_with(history: Sequence[Message], i: int) -> set[int]:
    """What a pin on message i keeps: its exchange, and for a prompt the turn up to its answer (the first
    assistant message after it that calls no tool), so the pair is never split by a drop."""
    out = exchange(history, i)
    if not is_user_text(history[i]):
        return out
    for k in range(i + 1, len(history)):
        if is_user_text(history[k]):
            break
        out.add(k)
        if history[k].get("role") == "assistant" and not tool_uses(history[k]):
            break
    return out


def last_assistant_before(history: Sequence[Message], end: int, floor: int) -> int:
    """The last assistant message in (floor, end), else `floor` (a drop edge is always one)."""
    for i in range(end - 1, floor, -1):
        if history[i].get("role") == "assistant":
            return i
    return floor
