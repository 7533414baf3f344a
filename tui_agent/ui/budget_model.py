"""The budget panel's data, kept apart from drawing so it stays cheap at 10,000 messages.

History is append-only, so each message is described and estimated exactly once (`HistoryIndex.sync`
only looks at messages it has not seen). A model call then costs O(changed rows): the outbound view
keeps the compaction boundary as one index (`first_kept`) instead of a set of dropped rows, and reads
the cut blocks from the plan row by row (`SentCuts`). Nothing here imports Textual, so the benchmark and the unit
tests can drive it directly.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Sequence

from tui_agent.core.agent.budget import fmt_usd  # noqa: F401 - the panel's name for it
from tui_agent.core.compaction import CompactPlan, Cut
from tui_agent.core.messages import key_value
from tui_agent.core.compaction.plan import OpKind
from tui_agent.core.formats import fmt_tokens, plural
from tui_agent.core.messages import Message, blocks, result_text
from tui_agent.core.tokens import message_sizes, message_tokens

RowState = Literal["sent", "dropped", "new"]
SPARK = "▁▂▃▄▅▆▇█"


counted = plural  # "1 msg", "14 msgs": one way to say a count with its noun (core/formats.py)
fmt_k = fmt_tokens  # compact sizes (812, 1.2k, 12.4k, 124k, 1.2M): the engine's reasons use the same


def key_input(tool_input: Any, workspace: Path | None = None) -> str:
    """The input a person recognises a call by (path, pattern, command), workspace paths made relative."""
    value = key_value(tool_input)
    if workspace is not None and value.startswith(str(workspace) + "/"):
        value = value[len(str(workspace)) + 1:]
    return " ".join(value.split())


def preview(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(slots=True)
class Row:
    """One history message as the panel lists it."""

    index: int
    role: str
    what: str
    tokens: int
    chars: int
    tool_label: str = ""  # "Read" for a tool_result row, so a ✂ mark can name it


@dataclass
class HistoryIndex:
    """Row descriptions and token estimates for the full history, built incrementally."""

    workspace: Path | None = None
    rows: list[Row] = field(default_factory=list)
    total_tokens: int = 0
    max_tokens: int = 0
    _source: list[Message] | None = None
    _tool_names: dict[str, str] = field(default_factory=dict)

    def sync(self, history: list[Message], upto: int | None = None) -> bool:
        """Describe messages not seen yet (of `history[:upto]`: replay shows a recorded history up to the
        call it steps to, without cutting the list); True when the rows were rebuilt (e.g. `/clear`)."""
        end = len(history) if upto is None else min(upto, len(history))
        reset = history is not self._source or end < len(self.rows)
        if reset:
            self.rows = []
            self.total_tokens = self.max_tokens = 0
            self._tool_names = {}
            self._source = history
        for i in range(len(self.rows), end):
            row = self._describe(i, history[i])
            self.rows.append(row)
            self.total_tokens += row.tokens
            self.max_tokens = max(self.max_tokens, row.tokens)
        return reset

    def _describe(self, index: int, message: Message) -> Row:
        role = "user" if message.get("role") == "user" else "asst"
        content = blocks(message)
        uses = [b for b in content if b.get("type") == "tool_use"]
        results = [b for b in content if b.get("type") == "tool_result"]
        label = ""
        if uses:
            for use in uses:
                self._tool_names[use.get("id", "")] = use.get("name", "?")
            first = uses[0]
            what = f"tool_use {first.get('name', '?')}({key_input(first.get('input'), self.workspace)})"
            if len(uses) > 1:
                what += f" +{len(uses) - 1}"
        elif results:
            names = [self._tool_names.get(b.get("tool_use_id", ""), "?") for b in results]
            label = names[0]
            size = sum(len(result_text(b)) for b in results)
            what = f"tool_result {label} {fmt_k(size)}"
            if len(results) > 1:
                what = f"tool_result {label} +{len(results) - 1} {fmt_k(size)}"
            if any(b.get("is_error") for b in results):
                what += " error"
        else:
            text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
            what = f"“{preview(text)}”" if text.strip() else "(empty)"
        return Row(index, role, what, *message_sizes(message), label)  # tokens and chars in one walk


class SentCuts(Mapping[int, tuple[Cut, ...]]):
    """The plan's cuts of the rows it sends, looked up row by row: a dict of them, built for every call,
    grew with the history (a long session's thousands of old cuts) while a frame draws forty rows."""

    def __init__(self, plan: CompactPlan) -> None:
        self._plan = plan

    def __getitem__(self, index: int) -> tuple[Cut, ...]:
        if index not in self._plan.cuts or not self._plan.is_sent(index):
            raise KeyError(index)
        return tuple(self._plan.cuts[index])

    def __iter__(self) -> Iterator[int]:
        return (i for i in self._plan.cuts if self._plan.is_sent(i))

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass(frozen=True)
class OutboundView:
    """Which rows one call sent, read from the engine's plan (never recomputed here).

    `messages` is the request the plan describes, so the message view shows exactly what went out.
    """

    label: str
    plan: CompactPlan
    history_len: int
    truncated: Mapping[int, tuple[Cut, ...]]  # of the rows sent (`SentCuts`)
    messages: Sequence[Message] = ()
    caches: bool = True  # False: the API reported no caching, so no row lies in a cached prefix

    @classmethod
    def of_plan(cls, plan: CompactPlan, history_len: int, label: str,
                messages: Sequence[Message] = (), caches: bool = True) -> "OutboundView":
        return cls(label, plan, history_len, SentCuts(plan), messages, caches)

    @property
    def first_kept(self) -> int:
        return self.plan.drop_until

    @property
    def protected(self) -> frozenset[int]:
        plan = self.plan
        if plan.protected_indices is not None:  # v1/seed: exactly the protected rounds' results
            return frozenset(plan.protected_indices)
        return frozenset(range(plan.protected_from, plan.history_len))

    def state(self, index: int) -> RowState:
        if index >= self.history_len:
            return "new"
        return "sent" if self.plan.is_sent(index) else "dropped"

    def sent_message(self, index: int) -> Message | None:
        pos = self.plan.position(index)
        if pos is None or pos >= len(self.messages):
            return None
        return self.messages[pos]

    def kind(self, index: int) -> OpKind:
        """The plan's operation on row `index` (kept, cut, masked, dropped, summarised, pinned, excluded, new)."""
        if index >= self.history_len:
            return "new"
        return self.plan.op(index).kind

    def in_cache(self, index: int) -> bool:
        """Row `index` lies in the prefix the next call reads from the provider's cache."""
        pos = self.plan.position(index)
        return self.caches and pos is not None and pos < self.plan.cached_messages

    def sent_tokens(self, index: int, memory_tokens: int) -> int:
        """Tokens of row `index` as sent (0 when not sent): its in-memory size unless cut or masked."""
        if index >= self.history_len or not self.plan.is_sent(index):
            return 0
        if index not in self.plan.cuts and index not in self.plan.masks:
            return memory_tokens
        sent = self.sent_message(index)
        return message_tokens(sent) if sent is not None else memory_tokens

    @property
    def recap_in_cache(self) -> bool:
        pos = self.plan.recap_position
        return self.caches and pos is not None and pos < self.plan.cached_messages


def cache_parts(usage_read: int, usage_written: int, usage_uncached: int) -> tuple[str, int]:
    """"cached 12.3k · written 1.2k · uncached 800" and the cache-read share of the input, in percent."""
    total = usage_read + usage_written + usage_uncached
    share = usage_read * 100 // total if total else 0
    return f"cached {fmt_k(usage_read)} · written {fmt_k(usage_written)} · uncached {fmt_k(usage_uncached)}", share


def spark(values: Sequence[int], width: int) -> str:
    """A text sparkline of the last `width` values, scaled to their maximum."""
    tail = list(values)[-width:] if width > 0 else []
    if not tail:
        return ""
    top = max(tail) or 1
    return "".join(SPARK[min(len(SPARK) - 1, (v * (len(SPARK) - 1) + top - 1) // top)] for v in tail)
