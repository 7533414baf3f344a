"""Compaction engine v1: a pure, outbound-only trimming function with a structured report.

History is append-only and never edited here. Before each model call the loop asks for a compacted *copy*;
the report says exactly what was dropped and truncated so the budget panel can draw it and the trace can
print it. Nothing is lost: the full history stays in memory and on screen.

Rules (from the seed, with its flaws fixed):
- Level 1, truncation: a tool_result longer than `max_tool_result_chars` is cut to that many characters
  and ends with `TRUNCATION_NOTE`. The newest `protect_recent_rounds` tool rounds are left whole, because
  the model has not read them yet (the seed cut even those, so a model never saw more than 4000 characters
  of any file). `protect_recent_rounds=0` gives the seed's exact behaviour.
- Level 2, tail retention: over `max_messages`, the oldest messages are dropped, cutting only at a user
  message made only of text, so every tool_result keeps its tool_use. With no such message, nothing is
  dropped: better to exceed a soft limit than to send an invalid request.
- Optional token budget (`max_tokens`): when the estimate is still over it, protected rounds are truncated
  too, then later safe cut points are used, then results are cut harder. Used to stay under the model's
  context window and to recover from "prompt is too long".

Lengths are Python characters (code points), not UTF-16 units as in the seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import compress
from typing import Sequence

from tui_agent.core.compaction.memo import MessageMemo
from tui_agent.core.compaction.modes import off_in_env
from tui_agent.core.messages import Block, Message, blocks, is_user_text, result_text

TRUNCATION_NOTE = "\n…[tool_result truncated (compact)]"
HARD_TOOL_RESULT_CHARS = 1000  # what the token budget cuts results to when the normal limit is not enough


@dataclass(frozen=True)
class CompactOptions:
    """`enabled=None` means: on unless the environment says `COMPACT=0` (read at call time)."""

    enabled: bool | None = None
    max_tool_result_chars: int = 4000
    max_messages: int = 40
    protect_recent_rounds: int = 1
    max_tokens: int | None = None

    def is_enabled(self) -> bool:
        if self.enabled is not None:
            return self.enabled
        return not off_in_env()


@dataclass(frozen=True)
class TruncatedBlock:
    """One tool_result cut in the outbound copy, addressed by its place in the full history."""

    message_index: int
    block_index: int
    tool_use_id: str
    original_chars: int
    kept_chars: int


@dataclass(frozen=True)
class CompactReport:
    """What one compaction did. Indices refer to the full history, so the panel can mark its rows.

    The outbound copy is `history[first_kept:]` with the `truncated` blocks cut; `cleared` and
    `summarised` are reserved for later tiers (always empty in v1).
    """

    enabled: bool
    before: int
    after: int
    first_kept: int
    dropped: tuple[int, ...]
    truncated: tuple[TruncatedBlock, ...]
    chars_before: int
    chars_after: int
    tokens_before: int
    tokens_after: int
    options: CompactOptions = field(default_factory=CompactOptions)
    protected: tuple[int, ...] = ()
    cleared: tuple[int, ...] = ()
    summarised: tuple[int, ...] = ()
    over_budget: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.dropped or self.truncated or self.cleared or self.summarised)

    @property
    def dropped_messages(self) -> int:
        return len(self.dropped)

    @property
    def truncated_blocks(self) -> int:
        return len(self.truncated)

    def trace_fields(self) -> dict[str, int]:
        """The `compact.run` trace fields, in the seed's exact key order."""
        return {
            "before": self.before,
            "after": self.after,
            "droppedMessages": self.dropped_messages,
            "truncatedBlocks": self.truncated_blocks,
        }

    def summary(self) -> str:
        """One human line with the trace's numbers, for the panel and the chat."""
        return (
            f"compact.run before={self.before} after={self.after} "
            f"droppedMessages={self.dropped_messages} truncatedBlocks={self.truncated_blocks} "
            f"tokens≈{self.tokens_before:,}→{self.tokens_after:,}"
        )


@dataclass(frozen=True)
class CompactResult:
    messages: list[Message]
    report: CompactReport


def _retain_start(messages: Sequence[Message], max_messages: int, start_from: int = 0,
                  prompts: list[bool] | None = None) -> int:
    """First index to keep so that at most `max_messages` remain and the copy starts at user text
    (`prompts`: whether each message is user text, known already: `MessageMemo.measure`)."""
    n = len(messages)
    if n <= max_messages:
        return start_from
    start = max(n - max_messages, start_from)
    if prompts is not None:
        try:
            return prompts.index(True, start)
        except ValueError:  # no user text from there on
            return start_from
    while start < n and not is_user_text(messages[start]):
        start += 1
    return start if start < n else start_from


def _tool_round_indices(messages: Sequence[Message], start: int, flags: Sequence[bool] | None = None) -> list[int]:
    """History indices of user messages that carry tool_results, from `start` on (`flags`: that fact per
    message, known already: `MessageMemo.measure`)."""
    if flags is not None:
        return list(compress(range(start, len(messages)), flags[start:]))
    return [
        i
        for i in range(start, len(messages))
        if messages[i].get("role") == "user" and any(b.get("type") == "tool_result" for b in blocks(messages[i]))
    ]


def _truncate_block(block: Block, limit: int) -> tuple[Block, int] | None:
    """A cut copy of a tool_result longer than `limit`, with the kept size; None when it fits."""
    content = block.get("content")
    if isinstance(content, str):
        if len(content) <= limit:
            return None
        kept = content[:limit]
        return {**block, "content": kept + TRUNCATION_NOTE}, len(kept)
    if isinstance(content, list):
        if len(result_text(block)) <= limit:
            return None
        budget = limit
        new_content: list = []
        noted = False
        for inner in content:
            if isinstance(inner, dict) and inner.get("type") == "text":
                text = inner.get("text", "")
                if budget <= 0:
                    if not noted:  # cut exactly at a block boundary: the note still says so
                        new_content.append({"type": "text", "text": TRUNCATION_NOTE})
                        noted = True
                    continue
                if len(text) > budget:
                    new_content.append({**inner, "text": text[:budget] + TRUNCATION_NOTE})
                    noted = True
                    budget = 0
                else:
                    new_content.append(inner)
                    budget -= len(text)
            else:
                new_content.append(inner)
        return {**block, "content": new_content}, limit - budget
    return None


def _cut_message(message: Message, limit: int) -> tuple[Message | None, tuple[tuple[int, str, int, int], ...]]:
    """The cut copy of one message (None when nothing in it is over `limit`) and, per cut block, its
    (block index, tool_use_id, original chars, kept chars)."""
    content = message.get("content")
    if not isinstance(content, list):
        return None, ()
    new_blocks = None
    cut_blocks: list[tuple[int, str, int, int]] = []
    for j, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        cut = _truncate_block(block, limit)
        if cut is None:
            continue
        if new_blocks is None:
            new_blocks = list(content)
        new_blocks[j], kept = cut
        cut_blocks.append((j, block.get("tool_use_id", ""), len(result_text(block)), kept))
    return ({**message, "content": new_blocks} if new_blocks is not None else None), tuple(cut_blocks)


def _truncate_messages(
    messages: Sequence[Message], indices: Sequence[int], limit: int, already: dict[tuple[int, int], TruncatedBlock],
    memo: MessageMemo,
) -> dict[int, Message]:
    """Cut the tool_results of the messages at `indices`; return replacements by history index (a message's
    cut copy is made once per memo, so repeated calls return the same objects)."""
    replaced: dict[int, Message] = {}
    for i in indices:
        message = messages[i]
        copy, cut_blocks = memo.cut(message, limit, lambda: _cut_message(message, limit))
        for j, tool_use_id, original_chars, kept in cut_blocks:
            original = already[(i, j)].original_chars if (i, j) in already else original_chars
            already[(i, j)] = TruncatedBlock(i, j, tool_use_id, original, kept)
        if copy is not None:
            replaced[i] = copy
    return replaced


def compact_messages(messages: list[Message], options: CompactOptions | None = None,
                     memo: MessageMemo | None = None) -> CompactResult:
    """Compact the outbound copy of `messages`; pure, never mutates its input.

    `result.messages` is the same list object when nothing changed. `memo` (kept by a caller that
    compacts the same growing history again and again) remembers each message's size and cut copy.
    """
    options = options or CompactOptions()
    memo = memo or MessageMemo()
    n = len(messages)
    per_message, chars, round_flags, prompts = memo.measure(messages)
    tokens_before, chars_before = sum(per_message), sum(chars)

    def unchanged(enabled: bool, protected: tuple[int, ...] = ()) -> CompactResult:
        report = CompactReport(
            enabled=enabled, before=n, after=n, first_kept=0, dropped=(), truncated=(),
            chars_before=chars_before, chars_after=chars_before, tokens_before=tokens_before,
            tokens_after=tokens_before, options=options, protected=protected,
            over_budget=options.max_tokens is not None and tokens_before > options.max_tokens,
        )
        return CompactResult(messages, report)

    if not options.is_enabled():
        return unchanged(False)

    start = _retain_start(messages, options.max_messages, prompts=prompts)
    rounds = _tool_round_indices(messages, start, round_flags)
    keep_whole = max(options.protect_recent_rounds, 0)
    protected = rounds[len(rounds) - keep_whole:] if keep_whole else []
    truncatable = rounds[: len(rounds) - len(protected)]
    cuts: dict[tuple[int, int], TruncatedBlock] = {}
    replaced = _truncate_messages(messages, truncatable, options.max_tool_result_chars, cuts, memo)

    def size_after() -> int:
        total = 0
        for i in range(start, n):
            total += memo.tokens(replaced[i]) if i in replaced else per_message[i]
        return total

    tokens_after = size_after()
    if options.max_tokens is not None and tokens_after > options.max_tokens:
        # Token budget: the newest round too, then any later safe cut point, then harder cuts.
        replaced.update(_truncate_messages(messages, protected, options.max_tool_result_chars, cuts, memo))
        protected = []
        tokens_after = size_after()
        while tokens_after > options.max_tokens:
            later = next((i for i in range(start + 1, n) if prompts[i]), None)
            if later is None:
                break
            start = later
            tokens_after = size_after()
        if tokens_after > options.max_tokens:
            limit = min(HARD_TOOL_RESULT_CHARS, options.max_tool_result_chars)
            current = [replaced.get(i, messages[i]) for i in range(n)]
            replaced.update(_truncate_messages(current, _tool_round_indices(messages, start, round_flags), limit, cuts,
                                               memo))
            tokens_after = size_after()

    cuts = {key: cut for key, cut in cuts.items() if key[0] >= start}
    if start == 0 and not cuts:
        return unchanged(True, tuple(protected))

    outbound = [replaced.get(i, messages[i]) for i in range(start, n)]
    chars_after = sum(memo.chars(replaced[i]) if i in replaced else chars[i] for i in range(start, n))
    report = CompactReport(
        enabled=True, before=n, after=len(outbound), first_kept=start, dropped=tuple(range(start)),
        truncated=tuple(sorted(cuts.values(), key=lambda c: (c.message_index, c.block_index))),
        chars_before=chars_before, chars_after=chars_after, tokens_before=tokens_before,
        tokens_after=tokens_after, options=options, protected=tuple(protected),
        over_budget=options.max_tokens is not None and tokens_after > options.max_tokens,
    )
    return CompactResult(outbound, report)


def with_budget(options: CompactOptions, max_tokens: int | None) -> CompactOptions:
    return replace(options, max_tokens=max_tokens)
