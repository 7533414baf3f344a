"""What compaction decided about one tool_result block, as one typed value: `BlockDecision = Cut | Mask`.

Every per-block kind carries what the rest of the house needs of it, so adding a kind (for example "clear
this result but keep its tool input") is one class here, the tier that makes it, and the glyph the UI maps:
- `reason`: the words the panel and the Context tool show for it;
- `render(block)`: the block as sent (the only place its bytes are made);
- `to_json()` / `KINDS[tag].from_json(...)`: how the journal keeps it (the state's version 3);
- `op`: the plan's per-message kind, which is also the glyph key the UI maps (✂ cut, ▒ masked);
- `rank`: which decision names a message that holds several (the stronger one wins: a mask over a cut);
- `digest_part(index, decisions)`: its share of `CompactPlan.digest` (equal digests send equal requests);
- `lost`: whether the event's loss report (`events_of.py`) counts its messages as content that left the
  request (a mask replaces a result; a cut keeps the head the model has read);
- `glyph`: the panel's row mark (`ui/widgets/history_rows.MARKS[op]` and the legend show it).
`tests/test_extension_points.py` names whatever a new kind still lacks, here or in those readers.

`CompactState.blocks` and `CompactPlan.blocks` hold them in one map, message index → its decisions sorted by
(block index, rank); a block may hold a cut and, later, a mask (rendered in that order, so the mask wins).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, Sequence, TypeVar, Union

from tui_agent.core.compaction.cut import clip_block, cut_block
from tui_agent.core.compaction.mask import masked_block, placeholder_text
from tui_agent.core.formats import fmt_tokens
from tui_agent.core.messages import Block, key_input, result_text

DecisionOp = Literal["cut", "masked"]


class ResultFacts(Protocol):
    """What a decision needs of a tool_result block (`facts.BlockFacts`, known once as its message arrived;
    a Protocol so that the facts, which import the recap, need not be imported here)."""

    @property
    def index(self) -> int: ...
    @property
    def tool_use_id(self) -> str: ...
    @property
    def tool(self) -> str: ...
    @property
    def input(self) -> Any: ...
    @property
    def chars(self) -> int: ...


@dataclass(frozen=True)
class Cut:
    """A tool_result cut to its head once the model had read it; frozen from `call` on."""

    message_index: int
    block_index: int
    tool_use_id: str
    tool_name: str
    original_chars: int
    kept_chars: int
    call: int
    hard: bool = False  # cut to fit the window (the newest round alone was too big)

    tag: ClassVar[str] = "cut"
    op: ClassVar[DecisionOp] = "cut"
    rank: ClassVar[int] = 0
    block_type: ClassVar[str] = "tool_result"  # the kind of block it decides about (a saved one is checked)
    lost: ClassVar[bool] = False
    glyph: ClassVar[str] = "✂"

    @classmethod
    def digest_part(cls, index: int, decisions: Sequence[Any]) -> bytes:
        return ";".join(f"{c.block_index}:{c.kept_chars}" for c in decisions).encode() + b"c%d" % index

    @property
    def reason(self) -> str:
        if self.hard:
            return (f"cut to fit the window: {fmt_tokens(self.kept_chars)} of "
                    f"{fmt_tokens(self.original_chars)} chars kept")
        return f"already read, {fmt_tokens(self.kept_chars)} of {fmt_tokens(self.original_chars)} chars kept"

    def render(self, original: Block, current: Block) -> Block:
        """The cut copy of `original` (`current` when its text already fits)."""
        done = cut_block(original, self.kept_chars, self.tool_name)
        return current if done is None else done[0]

    def to_json(self) -> list[Any]:
        return [self.tag, self.message_index, self.block_index, self.call, self.tool_use_id, self.tool_name,
                self.original_chars, self.kept_chars, self.hard]

    @classmethod
    def from_json(cls, data: Sequence[Any], block: Block, facts_call: Any) -> Cut:
        _, i, j, call, tool_id, name, original, kept, hard = data
        return cls(int(i), int(j), str(tool_id), str(name), int(original), int(kept), int(call), bool(hard))


@dataclass(frozen=True)
class Mask:
    """An old result of a re-runnable tool replaced by a placeholder that says how to get it back."""

    message_index: int
    block_index: int
    tool_use_id: str
    tool_name: str
    key_input: str
    original_chars: int
    placeholder: str
    call: int

    tag: ClassVar[str] = "mask"
    op: ClassVar[DecisionOp] = "masked"
    rank: ClassVar[int] = 1
    block_type: ClassVar[str] = "tool_result"
    lost: ClassVar[bool] = True
    glyph: ClassVar[str] = "▒"

    @classmethod
    def digest_part(cls, index: int, decisions: Sequence[Any]) -> bytes:
        return b"m%d" % index  # the placeholder follows from the history

    @property
    def reason(self) -> str:
        return (f"{self.tool_name} result cleared at call {self.call} ({fmt_tokens(self.original_chars)} chars); "
                f"a placeholder says how to fetch it again")

    def render(self, original: Block, current: Block) -> Block:
        return masked_block(original, self.placeholder)

    def to_json(self) -> list[Any]:
        return [self.tag, self.message_index, self.block_index, self.call]  # the rest is the history's

    @classmethod
    def from_json(cls, data: Sequence[Any], block: Block, facts_call: Any) -> Mask:
        _, i, j, call = data
        return cls.of(int(i), int(j), block, facts_call, int(call))

    @classmethod
    def of(cls, i: int, j: int, block: Block, call_of: Any, call: int) -> Mask:
        """The mask of block j of message i, from the block and its call (`Facts.call_of`)."""
        tool_id = block.get("tool_use_id", "")
        name, tool_input = call_of(tool_id)
        original = len(result_text(block))
        return cls(i, j, tool_id, name, key_input(tool_input), original, placeholder_text(name, tool_input, original),
                   call)

    @classmethod
    def of_facts(cls, i: int, result: ResultFacts, call: int) -> Mask:
        """The mask of message i's result block `result` (its facts, known once: `Facts.results`)."""
        return cls(i, result.index, result.tool_use_id, result.tool, key_input(result.input), result.chars,
                   placeholder_text(result.tool, result.input, result.chars), call)


@dataclass(frozen=True)
class Clip(Cut):
    """A prompt (a text block of a user message) too large for the window, sent as its head and tail with a
    note between them: fitting the window's last resort, so a session that holds one (a journal written before
    such prompts were refused) can go on. The history keeps the prompt whole. `tool_use_id`/`tool_name` are
    empty; a cut's view (the ✂ glyph, the counts) shows it, its reason says what it is."""

    tag: ClassVar[str] = "clip"
    block_type: ClassVar[str] = "text"

    @classmethod
    def digest_part(cls, index: int, decisions: Sequence[Any]) -> bytes:
        return ";".join(f"{c.block_index}:{c.kept_chars}" for c in decisions).encode() + b"p%d" % index

    @property
    def reason(self) -> str:
        return (f"a prompt too large for the window: {fmt_tokens(self.kept_chars)} of "
                f"{fmt_tokens(self.original_chars)} chars sent (its beginning and end)")

    def render(self, original: Block, current: Block) -> Block:
        done = clip_block(original, self.kept_chars)
        return current if done is None else done


BlockDecision = Union[Cut, Mask]  # (a Clip is a Cut)
KINDS: dict[str, type[Cut] | type[Mask]] = {kind.tag: kind for kind in (Cut, Mask, Clip)}
Decisions = Mapping[int, tuple[BlockDecision, ...]]  # message index → its decisions, by (block, rank)
D = TypeVar("D", Cut, Mask)


def merged(old: Decisions, new: Mapping[int, Mapping[int, BlockDecision]]) -> dict[int, tuple[BlockDecision, ...]]:
    """`old` with `new`'s decisions added; a new decision replaces one of the same kind on the same block."""
    out = dict(old)
    for i, per in new.items():
        by_key = {(d.block_index, d.rank): d for d in old.get(i, ())}
        by_key.update({(d.block_index, d.rank): d for d in per.values()})
        out[i] = tuple(by_key[key] for key in sorted(by_key))
    return out


def of_kind(decisions: Decisions, kind: type[D]) -> dict[int, tuple[D, ...]]:
    """The decisions of one kind, per message (the cuts, the masks): a view, for counting and showing."""
    out: dict[int, tuple[D, ...]] = {}
    for i, per in decisions.items():
        chosen = tuple(d for d in per if isinstance(d, kind))
        if chosen:
            out[i] = chosen
    return out


def strongest(per: Sequence[BlockDecision]) -> BlockDecision:
    """The decision that names a message: the highest rank, the first block among equals."""
    top = max(d.rank for d in per)
    return next(d for d in per if d.rank == top)


def render_blocks(content: Sequence[Block], decisions: Sequence[BlockDecision]) -> list[Block]:
    """A message's blocks as sent: each decision applied to its original block, in (block, rank) order."""
    out = list(content)
    for decision in decisions:
        out[decision.block_index] = decision.render(content[decision.block_index], out[decision.block_index])
    return out
