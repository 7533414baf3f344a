"""What compaction decided about one block, as one typed value: `BlockDecision = Cut | Mask | Edited`.

Every per-block kind carries what the rest of the house needs of it, so adding a kind (for example "clear
this result but keep its tool input") is one class here, the tier that makes it, and the glyph the UI maps:
- `reason`: the words the panel and the Context tool show for it;
- `render(block)`: the block as sent (the only place its bytes are made);
- `to_json()` / `KINDS[tag].from_json(...)`: how the journal keeps it (the state's version 3);
- `op`: the plan's per-message kind, which is also the glyph key the UI maps (✂ cut, ▒ masked, ✎ edited);
- `rank`: which decision names a message that holds several (the stronger one wins: a mask over a cut);
- `digest_part(index, decisions)`: its share of `CompactPlan.digest` (equal digests send equal requests);
- `lost`: whether the event's loss report (`events_of.py`) counts its messages as content that left the
  request (a mask replaces a result; a cut keeps the head the model has read);
- `glyph`: the panel's row mark (`ui/widgets/history_rows.MARKS[op]` and the legend show it);
- `block_type`: the kind(s) of block it may name (a saved one is checked: `state._decides`).
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
from tui_agent.core.tools.edit import replaced

DecisionOp = Literal["cut", "masked", "edited"]


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


EDIT_TOOLS = ("Edit", "MultiEdit")  # the calls an island's Write is shown after (`island_edits`)


def edits_of(tool_input: Any) -> list[tuple[Any, Any, bool]]:
    """(old_string, new_string, replace_all) of an Edit's input, or of each of a MultiEdit's, in order."""
    if not isinstance(tool_input, dict):
        return []
    listed = tool_input.get("edits")
    found = listed if isinstance(listed, list) else [tool_input]
    return [(e.get("old_string"), e.get("new_string"), bool(e.get("replace_all", False)))
            for e in found if isinstance(e, dict)]


def replay(content: str, inputs: Sequence[Any]) -> tuple[str, int]:
    """`content` with the edits of `inputs` (Edit or MultiEdit inputs) applied in order, each as the Edit tool
    would (`tools.edit.replaced`), up to the first that does not apply; and how many calls applied."""
    for n, tool_input in enumerate(inputs):
        text: str | None = content
        for old, new, every in edits_of(tool_input):
            text = replaced(text, old, new, every) if text is not None else None
        if text is None or not edits_of(tool_input):
            return content, n
        content = text
    return content, len(inputs)


@dataclass(frozen=True)
class Edited:
    """An island's Write shown as the file stood after its later Edits that left the request:
    on the Write's tool_use block, its input's content replaced by the edited file (`content`); on its
    tool_result block (`content` None), a one-line note saying so. Decided at an event and frozen until the
    next; the journal keeps the Edit calls' ids, and the content is replayed from the history."""

    message_index: int
    block_index: int
    tool_use_id: str  # the Write's
    edit_ids: tuple[str, ...]  # the Edit calls applied, in order
    call: int
    content: str | None = None  # the file after them (the tool_use block); None: the result's note

    tag: ClassVar[str] = "edited"
    op: ClassVar[DecisionOp] = "edited"
    rank: ClassVar[int] = 2  # its own key beside a cut or a mask of the same block (`merged`)
    block_type: ClassVar[tuple[str, ...]] = ("tool_use", "tool_result")
    lost: ClassVar[bool] = False  # the Edits left with the drop (counted there); the island shows their effect
    glyph: ClassVar[str] = "✎"

    @classmethod
    def digest_part(cls, index: int, decisions: Sequence[Any]) -> bytes:
        return ";".join(f"{d.block_index}:{','.join(d.edit_ids)}" for d in decisions).encode() + b"e%d" % index

    @property
    def note(self) -> str:
        n = len(self.edit_ids)
        return (f"[compaction: the Write above shows the file as it stood after {n} later edit{'s' * (n != 1)} "
                f"that left this request]")

    @property
    def reason(self) -> str:
        return f"a kept Write shown after {len(self.edit_ids)} later edit(s) that left the request (call {self.call})"

    def render(self, original: Block, current: Block) -> Block:
        if self.content is not None:
            return {**current, "input": {**current.get("input", {}), "content": self.content}}
        body = current.get("content")
        if isinstance(body, list):
            return {**current, "content": [*body, {"type": "text", "text": self.note}]}
        return {**current, "content": f"{body}\n{self.note}" if body else self.note}

    def to_json(self) -> list[Any]:
        return [self.tag, self.message_index, self.block_index, self.call, list(self.edit_ids)]

    @classmethod
    def from_json(cls, data: Sequence[Any], block: Block, facts_call: Any) -> Edited:
        _, i, j, call, ids = data
        if not isinstance(ids, list) or not ids or not all(isinstance(x, str) for x in ids):
            raise ValueError(f"edited block {j} of message {i}: no Edit calls named")
        if block.get("type") == "tool_result":
            return cls(int(i), int(j), str(block.get("tool_use_id", "")), tuple(ids), int(call))
        written = (block.get("input") or {}).get("content") if isinstance(block.get("input"), dict) else None
        inputs = [facts_call(x)[1] for x in ids]
        if block.get("name") != "Write" or not isinstance(written, str):
            raise ValueError(f"edited block {j} of message {i} is not a Write")
        content, applied = replay(written, inputs)
        if applied != len(ids):
            raise ValueError(f"edited block {j} of message {i}: its Edit calls do not apply")
        return cls(int(i), int(j), str(block.get("id", "")), tuple(ids), int(call), content)


BlockDecision = Union[Cut, Mask, Edited]  # (a Clip is a Cut)
KINDS: dict[str, type[Cut] | type[Mask] | type[Edited]] = {kind.tag: kind for kind in (Cut, Mask, Clip, Edited)}
Decisions = Mapping[int, tuple[BlockDecision, ...]]  # message index → its decisions, by (block, rank)
D = TypeVar("D", Cut, Mask, Edited)


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
