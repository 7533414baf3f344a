"""The plan: what one model call sends of the history, message by message, and why.

A plan is the only description of compaction that leaves the engine. The panel marks its rows from it,
the message view shows `CompactResult.messages` (the request itself) beside the history, the trace
prints `trace_line()`, the journal stores `digest`. Nothing outside the engine recomputes a decision.

It stays small at 10,000 messages: the dropped span is one range, cuts and masks are sparse maps, and
`op(i)` describes a single message on demand instead of a list built for every call.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from tui_agent.core.compaction.decisions import KINDS, Cut, Decisions, Mask, of_kind, strongest
from tui_agent.core.formats import fmt_tokens
from tui_agent.core.messages import Message

OpKind = Literal["kept", "cut", "masked", "edited", "dropped", "summarised", "pinned", "excluded", "new"]
EventKind = Literal["cut", "mask", "drop", "summary", "pin", "exclude", "expand", "reactive", "reset", "clip", "edited"]
RECAP_INDEX = -1  # the recap's mark among the compactor's outbound indices


@dataclass(frozen=True)
class Recap:
    """The message that stands in for the dropped span: built from it deterministically."""

    covers: int  # messages [start, covers) are behind it (less pinned ones, which are still sent)
    text: str
    prompts: tuple[str, ...]
    files: tuple[str, ...]
    commands: int
    tokens: int
    summary: str | None = None
    call: int = 0
    start: int = 0


@dataclass(frozen=True)
class LossReport:
    """What an event took out of the request, and what of it no longer appears anywhere in it."""

    left_request: tuple[int, ...] = ()  # history indices no longer sent (dropped at this event)
    masked: tuple[int, ...] = ()  # history indices whose results were masked at this event
    missing_prompts: tuple[str, ...] = ()  # user prompts in neither the request nor the recap
    missing_paths: tuple[str, ...] = ()  # touched file paths in neither the request nor the recap
    at_risk: tuple[str, ...] = ()  # identifiers that left the request at this event, most recently used first
    # the event's quality (`compaction.in_use`): of the identifiers the last replies used that came from
    # earlier messages, how many the request still holds outside those replies (kept, used)
    in_use: tuple[int, int] = (0, 0)

    @property
    def clean(self) -> bool:
        return not self.missing_prompts and not self.missing_paths


@dataclass(frozen=True)
class CompactEvent:
    """A deliberate change of the sticky decisions: the only time the cached prefix may move."""

    call: int
    kinds: tuple[EventKind, ...]
    reason: str
    tokens_before: int
    tokens_after: int
    dropped: int = 0
    masked: int = 0
    cut: int = 0
    edited: int = 0  # kept Write islands shown after their later Edits that left (`island_edits`)
    recap_prompts: int = 0
    recap_files: int = 0
    loss: LossReport = field(default_factory=LossReport)

    @property
    def major(self) -> bool:
        """Worth a line in the chat: something left the request or was replaced (not a routine cut)."""
        return any(kind != "cut" for kind in self.kinds)

    def line(self) -> str:
        """One plain-words line: "call 21 · over 120k: dropped 14 old messages, masked 6 results,
        recap keeps 3 prompts and 9 files · 121k → 47k tok"."""
        return (f"call {self.call} · {self.reason}: {self.changes()} · "
                f"{fmt_tokens(self.tokens_before)} → {fmt_tokens(self.tokens_after)} tok")

    def changes(self) -> str:
        """What the event does, in words: "dropped 14 old messages, masked 6 old results" ("no change")."""
        parts: list[str] = []
        if self.dropped:
            parts.append(f"dropped {self.dropped} old message{'s' * (self.dropped != 1)}")
        if self.masked:
            parts.append(f"masked {self.masked} old result{'s' * (self.masked != 1)}")
        if self.cut:
            parts.append(f"cut {self.cut} read result{'s' * (self.cut != 1)}")
        if self.edited:
            parts.append(f"showed {self.edited} kept write{'s' * (self.edited != 1)} as edited since")
        if self.dropped:
            parts.append(f"recap keeps {self.recap_prompts} prompt{'s' * (self.recap_prompts != 1)} "
                         f"and {self.recap_files} file{'s' * (self.recap_files != 1)}")
        for kind in self.kinds:
            if kind in ("pin", "exclude", "expand", "summary", "reset", "clip") and kind not in " ".join(parts):
                parts.append({"pin": "pins changed", "exclude": "excludes changed", "expand": "expanded a block",
                              "summary": "summary written", "reset": "history replaced",
                              "clip": "clipped a prompt larger than the window"}[kind])
        return ", ".join(parts) or "no change"


@dataclass(frozen=True)
class MessageOp:
    """What the plan does with one history message, in words a user understands."""

    index: int
    kind: OpKind
    reason: str


@dataclass(frozen=True)
class CompactPlan:
    """Per-message operations of one call, the sizes before and after, and the event that changed them.

    `outbound_indices` lists the history index of each outbound message in order; the recap stands at
    `recap_position`, so `position(i)` finds message i in `CompactResult.messages`.
    """

    mode: str
    enabled: bool
    call: int
    history_len: int
    drop_from: int = 0  # messages [drop_from, drop_until) are dropped: the head before it stays (cached)
    drop_until: int = 0
    kept_in_drop: frozenset[int] = frozenset()
    blocks: Decisions = field(default_factory=dict)  # per message: its block decisions (cut, masked…)
    pins: frozenset[int] = frozenset()
    excluded: frozenset[int] = frozenset()
    expanded: frozenset[int] = frozenset()  # messages whose results go out whole
    protected_from: int = 0
    protected_indices: tuple[int, ...] | None = None  # v1/seed: exactly the protected rounds' results
    recap: Recap | None = None
    outbound_indices: tuple[int, ...] = ()  # history indices sent, in order (ascending)
    recap_position: int | None = None  # where the recap stands among the outbound messages
    lead_placeholder: bool = False  # a stand-in user message opens the request
    message_tokens_before: int = 0
    message_tokens_after: int = 0
    baseline_tokens: int = 0
    estimated_tokens: int = 0
    high_tokens: int = 0
    low_tokens: int = 0
    budget_tokens: int = 0
    over_budget: bool = False
    event: CompactEvent | None = None
    last_event: CompactEvent | None = None  # the newest event up to this call (this one's, or earlier)
    cached_messages: int = 0  # leading outbound messages identical to the previous request's
    dropped_reason: str = ""  # the newest drop's reason (v1/seed: the only one)
    drop_reasons: tuple[tuple[int, int, str], ...] = ()  # (from, until, why) of each drop, oldest first
    summary_requested: bool = False
    budget_room: int = 0  # the working budget the marks are shares of (0: a strategy with no budget)
    budget_source: str = ""  # where it came from: "default for this model", "flag", "env", "learned", "the window"
    quiet_reason: str = ""  # over the high mark with no event: why (an undo holds, nothing could leave…)

    # -- per message --------------------------------------------------------------------------
    @cached_property
    def cuts(self) -> dict[int, tuple[Cut, ...]]:
        """The cut blocks per message (a view of `blocks`)."""
        return of_kind(self.blocks, Cut)

    @cached_property
    def masks(self) -> dict[int, tuple[Mask, ...]]:
        """The masked blocks per message (a view of `blocks`)."""
        return of_kind(self.blocks, Mask)

    def position(self, index: int) -> int | None:
        """Where history message `index` stands in the outbound messages (None: not sent)."""
        pos = bisect_left(self.outbound_indices, index)
        if pos >= len(self.outbound_indices) or self.outbound_indices[pos] != index:
            return None
        pos += self.lead_placeholder
        if self.recap_position is not None and pos >= self.recap_position:
            pos += 1
        return pos

    def recap_span(self) -> str:
        """"#3–#13": the first and last message the recap stands for. A kept island at an end of the span
        (the prompt of the turn in progress, a pin) is sent, so it is not named as left: "#3–#14" was said
        when #14, the prompt, was still sent."""
        recap = self.recap
        if recap is None:
            return ""
        first, last = recap.start, recap.covers - 1
        while first < last and first in self.kept_in_drop:
            first += 1
        while last > first and last in self.kept_in_drop:
            last -= 1
        return f"#{first}" if first == last else f"#{first}–#{last}"

    def is_sent(self, index: int) -> bool:
        if index >= self.history_len or index in self.excluded:
            return False
        return index < self.drop_from or index >= self.drop_until or index in self.kept_in_drop

    def op(self, index: int) -> MessageOp:
        if index >= self.history_len:
            return MessageOp(index, "new", "added after this call was planned; the next call sends it")
        if index in self.excluded:
            return MessageOp(index, "excluded", "excluded by you: never sent (the history keeps it)")
        if index in self.pins:
            return MessageOp(index, "pinned", "pinned by you: always sent verbatim")
        if not self.is_sent(index):
            why = self.drop_reason(index)
            if self.recap is not None and self.recap.summary:
                return MessageOp(index, "summarised", f"{why}; the summary in the recap covers it")
            return MessageOp(index, "dropped", f"{why}; the recap keeps its prompts and file paths")
        decided = self.blocks.get(index)
        if decided:
            decision = strongest(decided)
            return MessageOp(index, decision.op, decision.reason)
        if index >= self.protected_from:
            return MessageOp(index, "kept", "newest round: sent whole (the model has not read it yet)")
        return MessageOp(index, "kept", "sent whole")

    def drop_reason(self, index: int) -> str:
        """Why message `index` left: the reason of the event that dropped it (the first span holding it)."""
        return next((why for lo, hi, why in self.drop_reasons if lo <= index < hi), self.dropped_reason)

    # -- totals ---------------------------------------------------------------------------------
    @property
    def dropped_count(self) -> int:
        return (self.drop_until - self.drop_from - len(self.kept_in_drop)
                + sum(1 for i in self.excluded if i < self.history_len))

    @property
    def changed(self) -> bool:
        return bool(self.drop_until > self.drop_from or self.blocks or self.excluded)

    @property
    def sent_count(self) -> int:
        return len(self.outbound_indices) + (self.recap_position is not None) + self.lead_placeholder

    def left_out(self) -> tuple[int, ...]:
        """History indices this request does not send: dropped (less the pinned islands) and excluded."""
        out = [i for i in range(self.drop_from, self.drop_until) if i not in self.kept_in_drop]
        return tuple(sorted(set(out) | {i for i in self.excluded if i < self.history_len}))

    def not_sent_whole(self) -> list[tuple[int, str]]:
        """(index, kind) of every history message this request did not send as it is, in order: left out, or
        sent with blocks cut or masked. It reads the plan alone, so it lives here beside `left_out` and `op`:
        the context notice counts it and the Context tool lists and recalls from it."""
        out = [(i, self.op(i).kind) for i in self.left_out()]
        out += [(i, self.op(i).kind) for i, per in self.blocks.items() if per and i < self.history_len and self.is_sent(i)]
        return sorted(set(out))

    @property
    def tokens_left(self) -> int:
        """Tokens the request's budget (the window less the reply's reserve) had left after this request."""
        return max(self.budget_tokens - self.estimated_tokens, 0)

    def trace_fields(self) -> dict[str, int]:
        """The `compact.run` trace fields, in the seed's exact key order."""
        return {
            "before": self.history_len,
            "after": self.sent_count,
            "droppedMessages": self.dropped_count,
            "truncatedBlocks": sum(len(v) for v in self.cuts.values()),
        }

    def trace_line(self) -> str:
        """One line with the trace's numbers (the seed's `compact.run` format, plus tokens)."""
        fields = self.trace_fields()
        masked = sum(len(v) for v in self.masks.values())
        extra = f" maskedBlocks={masked}" if masked else ""
        return (f"compact.run before={fields['before']} after={fields['after']} "
                f"droppedMessages={fields['droppedMessages']} truncatedBlocks={fields['truncatedBlocks']}{extra} "
                f"tokens≈{self.message_tokens_before:,}→{self.message_tokens_after:,}")

    @property
    def digest(self) -> str:
        """A stable fingerprint of the decisions (not of the text): equal digests send equal requests."""
        h = hashlib.sha1()
        h.update(f"{self.mode}|{self.history_len}|{self.drop_from}|{self.drop_until}|{sorted(self.kept_in_drop)}|".encode())
        for kind in KINDS.values():  # every block kind, in the table's order
            for index in sorted(self.blocks):
                if decided := [d for d in self.blocks[index] if isinstance(d, kind)]:
                    h.update(kind.digest_part(index, decided))
        h.update(f"|{sorted(self.excluded)}|{self.recap.text if self.recap else ''}".encode())
        return h.hexdigest()[:16]


@dataclass(frozen=True)
class CompactResult:
    """The outbound messages of one call and the plan that describes them."""

    messages: list[Message]
    plan: CompactPlan
