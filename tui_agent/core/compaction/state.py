"""The compaction decisions of one session as one value: what the next request is made of, and nothing
else. `Compactor` holds exactly one `CompactState`; each tier returns a new one; the journal stores it as
it is (`to_json`) and a resumed session loads it (`from_json`) — so a resumed compactor holds the same
value as the old one, and plans the same request. Everything else a compactor keeps (rendered messages,
sizes, the request laid out) is derived from this value and the history, and can be rebuilt from them.

Its invariants live in one place, `problems()`: a state that would render an invalid request (a drop that
splits a tool round, a mask on a text block, half an exchange left out, an index outside the history) is
refused there, whether it came from a journal, a forged file or a bug.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Sequence

from tui_agent.core.compaction.decisions import KINDS, BlockDecision, Cut, Decisions, Mask, of_kind
from tui_agent.core.compaction.facts import Facts, digest, exchange, newest_round_start
from tui_agent.core.compaction.marks import OLD_RECAP_MARK, RECAP_MARK, RECAP_MARKS
from tui_agent.core.messages import Block, Message, blocks, protocol_errors

# 3: one list of block decisions ("blocks", each tagged with its kind). 2: "cuts" and "masks" apart, and the
# saved `skip`. 1: what main wrote before CompactState (the excludes' partners are derived). All are read.
VERSION = 3
UNBOUNDED = 1 << 62  # steering may name a message the history does not hold yet (it applies once it does)
_VIEWS = ("cuts", "masks")  # derived from `blocks` on first use; a new state starts without them


@dataclass(frozen=True)
class CompactState:
    """The sticky decisions. Maps are never changed in place: a tier that decides builds new ones."""

    calls: int = 0  # the number of the last planned call
    history_len: int = 0  # the history the decisions cover (newer messages are appended as they are)
    first: str = ""  # digest of history[0] (a state saved over another history is not applied)
    blocks: Decisions = field(default_factory=dict)  # message index → what was decided about its blocks
    drop_from: int = 0  # messages [drop_from, drop_until) are behind the recap, less `kept_in_drop`
    drop_until: int = 0
    kept_in_drop: frozenset[int] = frozenset()  # pinned islands inside the drop, sent in place
    kept_for_use: frozenset[int] = frozenset()  # islands an event kept for the agent's own later use (`keep_for_use`)
    recap_call: int = 0  # the call whose event built the recap
    summary: str | None = None  # the model's summary of the dropped span, inside the recap
    recap_mark: str = RECAP_MARK  # the recap's first words (a state saved before the rename: the old ones, until a drop)
    read_upto: int = 0  # cut on read has looked at every message before this one
    pins: frozenset[int] = frozenset()  # the user's wishes (applied at the next call: `dirty`)
    excludes: frozenset[int] = frozenset()
    expanded: frozenset[int] = frozenset()  # messages whose results go out whole
    skip: frozenset[int] = frozenset()  # what the request leaves out: the applied excludes and partners
    dropped_reason: str = ""  # the newest drop's reason
    drop_reasons: tuple[tuple[int, int, str], ...] = ()  # (from, until, why) of each drop, oldest first
    summary_failures: int = 0
    versions: Mapping[int, int] = field(default_factory=dict)  # how often a message's outbound form changed
    pending: tuple[str, ...] = ()  # event kinds the next call is to run (/compact, too_long, user changes)
    dirty: bool = False  # user changes not applied yet (they apply at the next call)
    reactive_target: int | None = None  # the lower mark a "prompt is too long" asks of the next event
    learned_window: int | None = None  # the real window a "prompt is too long" revealed
    tokens: Mapping[str, Any] = field(default_factory=dict)  # the estimator's export (filled on export)
    replaced: bool = False  # saved over a history since replaced (/clear): forgotten at the next call
    hold_until: int | None = None  # an undone event holds: no event by the marks until the request passes this

    def evolve(self, **changes: Any) -> CompactState:
        """This state with `changes`: `dataclasses.replace` without its field-by-field `__init__` (a call
        makes a few new states, and at 10,000 messages a call with no event costs ~100 µs in all)."""
        if not changes.keys() <= self.__dict__.keys():
            raise TypeError(f"no such fields: {sorted(changes.keys() - self.__dict__.keys())}")
        new = object.__new__(CompactState)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        if "blocks" in changes and changes["blocks"] is not self.blocks:
            for view in _VIEWS:  # derived from `blocks`: made again when asked (kept while `blocks` is the same)
                new.__dict__.pop(view, None)
        return new

    @cached_property
    def cuts(self) -> dict[int, tuple[Cut, ...]]:
        """The cut blocks per message (a view of `blocks`)."""
        return of_kind(self.blocks, Cut)

    @cached_property
    def masks(self) -> dict[int, tuple[Mask, ...]]:
        """The masked blocks per message (a view of `blocks`)."""
        return of_kind(self.blocks, Mask)

    @property
    def dropping(self) -> bool:
        return self.drop_until > self.drop_from

    def is_sent(self, i: int) -> bool:
        """Whether message i (< history_len) goes out (in place or as a pinned island)."""
        if i in self.skip:
            return False
        return not (self.drop_from <= i < self.drop_until) or i in self.kept_in_drop

    def version(self, i: int) -> int:
        return self.versions.get(i, 0)

    # -- JSON ---------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """JSON-safe data: what the journal stores, as it is (`hold_until` only while an undone event holds)."""
        data: dict[str, Any] = {
            "version": VERSION, "calls": self.calls, "history_len": self.history_len, "first": self.first,
            "blocks": [d.to_json() for i in sorted(self.blocks) for d in self.blocks[i]],
            "drop_from": self.drop_from, "drop_until": self.drop_until, "kept_in_drop": sorted(self.kept_in_drop),
            "kept_for_use": sorted(self.kept_for_use),
            "recap_call": self.recap_call, "summary": self.summary, "recap_mark": self.recap_mark,
            "cut_scan": self.read_upto, "pins": sorted(self.pins), "excluded": sorted(self.excludes),
            "skip": sorted(self.skip), "expanded": sorted(self.expanded), "dropped_reason": self.dropped_reason,
            "drop_reasons": [list(span) for span in self.drop_reasons], "summary_failures": self.summary_failures,
            "tokens": dict(self.tokens), "variant": [[i, v] for i, v in sorted(self.versions.items())],
            "pending": list(self.pending), "dirty": self.dirty, "reactive_target": self.reactive_target,
            "learned_window": self.learned_window,
        }
        if self.hold_until is not None:
            data["hold_until"] = self.hold_until
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any], history: Sequence[Message], facts: Facts) -> CompactState:
        """The state `to_json` (or main's version 1 `export_state`) wrote, over the history it was saved
        with. Raises ValueError/TypeError/KeyError on malformed data; `problems()` checks the rest."""
        learned = data.get("learned_window")
        common = dict(calls=_count(data.get("calls", 0), "calls"), tokens=dict(data.get("tokens", {})),
                      learned_window=None if learned is None else _count(learned, "learned window"))
        saved_len = _count(data.get("history_len", 0), "history length", -SAVED_COUNT)
        if saved_len > len(history) or (history and data.get("first", "") not in ("", digest(history[0]))):
            return cls(replaced=True, **common)  # type: ignore[arg-type]
        n = min(saved_len, len(history))
        if n < 0:
            raise ValueError(f"history_len {n}")
        decided = _decisions(data, history, n, facts)
        drop_from = _index(min(_count(data.get("drop_from", 0), "drop start", -SAVED_COUNT), n), n + 1)
        drop_until = _index(min(_count(data.get("drop_until", 0), "drop end", -SAVED_COUNT), n), n + 1)
        kept = frozenset(_index(i, max(drop_until, 1)) for i in data.get("kept_in_drop", []))
        excludes = frozenset(_index(i, UNBOUNDED) for i in data.get("excluded", []))
        if _count(data.get("version", 1), "version") >= 2:
            skip = frozenset(_index(i, n) for i in data.get("skip", []))
        else:  # version 1 derived what the excludes leave out (and applied them eagerly)
            skip = effective_skip(history[:n], excludes)
        return cls(
            history_len=n, first=str(data.get("first", "")),
            blocks=decided,
            drop_from=drop_from, drop_until=drop_until, kept_in_drop=kept,
            kept_for_use=frozenset(_index(i, max(drop_until, 1)) for i in data.get("kept_for_use", [])),
            recap_call=_count(data.get("recap_call", data.get("ledger_call")) or 0, "recap call"),  # (saved before the rename)
            summary=data.get("summary"),
            # no mark saved: written before the rename, so its recap opened with the old words
            recap_mark=_known(data.get("recap_mark", OLD_RECAP_MARK), RECAP_MARKS, RECAP_MARK),
            read_upto=_count(data.get("cut_scan", 0), "read-up-to mark", -SAVED_COUNT),
            pins=frozenset(_index(i, UNBOUNDED) for i in data.get("pins", [])), excludes=excludes,
            # message indices (an older journal saved (message, block) pairs: the message is what was expanded)
            expanded=frozenset(_index(x[0] if isinstance(x, list) else x, UNBOUNDED) for x in data.get("expanded", [])),
            skip=skip, dropped_reason=str(data.get("dropped_reason", "")),
            drop_reasons=tuple((_count(lo, "drop reason"), _count(hi, "drop reason"), str(why)) for lo, hi, why in data.get("drop_reasons", [])),
            summary_failures=_count(data.get("summary_failures", 0), "summary failures"),
            versions={_count(i, "variant"): _count(v, "variant") for i, v in data.get("variant", [])},
            pending=tuple(str(kind) for kind in data.get("pending", [])), dirty=bool(data.get("dirty", False)),
            reactive_target=None if data.get("reactive_target") is None else _count(data["reactive_target"], "reactive target"),
            hold_until=None if data.get("hold_until") is None else _count(data["hold_until"], "hold"),
            **common,  # type: ignore[arg-type]
        )

    # -- invariants ---------------------------------------------------------------------------
    def problems(self, history: Sequence[Message], requests: Callable[[], Iterable[list[Message]]]) -> str:
        """Why this state must not be used over `history` ("" when it may): every invariant, checked in
        this one place. `requests` lays out the requests it gives (the restored one and the next call's),
        checked last and only when the rest holds: a restored part can still break once the rest joins."""
        if self.replaced:
            return ""
        n = self.history_len
        if n > len(history):
            return f"history_len {n} is beyond the history ({len(history)})"
        for i, per in self.blocks.items():
            for decision in per:
                if not 0 <= i < n or decision.message_index != i:
                    return f"a decision names message {i} outside the history"
                content = blocks(history[i])
                j = decision.block_index
                if not 0 <= j < len(content) or not _decides(history[i], content[j], decision.block_type):
                    return f"block {j} of message {i} is not a {_words(decision.block_type)}"
        if not 0 <= self.read_upto <= n:
            return f"the read-up-to mark {self.read_upto} is outside the history"
        if not 0 <= self.drop_from <= n or not 0 <= self.drop_until <= n:
            return f"the dropped span {self.drop_from}–{self.drop_until} is outside the history"
        if self.dropping:
            for edge in {self.drop_from, self.drop_until} - {0, n}:  # a drop is cut before an assistant message
                if history[edge].get("role") != "assistant":
                    return f"the dropped span {self.drop_from}–{self.drop_until} splits a tool round"
            if any(not self.drop_from <= i < self.drop_until for i in self.kept_in_drop):
                return "a kept island lies outside the dropped span"
        elif self.kept_in_drop:
            return "kept islands without a drop"
        for i in self.skip:
            if not 0 <= i < n or not exchange(history[:n], i) <= self.skip:
                return f"message {i} is left out without its partner"
        for out in requests():
            if not out:  # nothing planned yet (a state saved before the first call)
                continue
            errors = protocol_errors(out, allow_pending=True)
            errors += [f"message {p}: empty content" for p, m in enumerate(out) if m.get("content") in ([], "")]
            if errors:
                return "; ".join(errors[:3])
        return ""


def _known(value: object, known: tuple[str, ...], default: str) -> str:
    """`value` if it is one of `known` (a forged state names no words of its own for the model)."""
    return value if isinstance(value, str) and value in known else default


def effective_skip(history: Sequence[Message], excludes: frozenset[int], newest: int | None = None) -> frozenset[int]:
    """What the excludes leave out: each with the partners it cannot be sent without; an exclude that
    reaches the newest round leaves nothing out (a request must end with what the model is to answer)."""
    newest = newest_round_start(history) if newest is None else newest
    skip: set[int] = set()
    for i in excludes:
        members = exchange(history, i) if i < len(history) else {i}
        if max(members) < newest:
            skip.update(members)
    return frozenset(skip)


SAVED_COUNT = 10 ** 15  # calls, tokens, indices: far above any session, far below float trouble


def _count(value: object, name: str, low: int = 0) -> int:
    """A count read from a saved state: an int from `low` to `SAVED_COUNT` (a float with a whole value too,
    as an older version may have written); text, flags and anything huge make the state refused (ValueError;
    a forged count of 4,000 digits overflowed the float arithmetic of the next plan)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= SAVED_COUNT:
        shown = f"{type(value).__name__} out of range" if isinstance(value, int) else type(value).__name__
        raise ValueError(f"its {name} is not a count ({shown})")
    return value


def _index(value: object, size: int) -> int:
    """A message index read from a saved state: an int in [0, size), else the state is refused."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < size:
        raise ValueError(f"message index {value!r} outside the history (0–{size - 1})")
    return value


def _decisions(data: Mapping[str, Any], history: Sequence[Message], n: int, facts: Facts) -> Decisions:
    """The saved block decisions: version 3's tagged "blocks", and versions 1–2's "cuts" and "masks" lists
    (read in any version, so a state written before version 3 loads as the same value)."""
    entries: list[Sequence[Any]] = [entry for entry in data.get("blocks", [])]
    entries += [("cut", i, j, call, tool_id, name, original, kept, hard)
                for i, j, tool_id, name, original, kept, call, hard in data.get("cuts", [])]
    entries += [("mask", i, j, call) for i, j, call in data.get("masks", [])]
    found: dict[int, dict[tuple[int, int], BlockDecision]] = {}
    for entry in entries:
        kind = KINDS.get(entry[0]) if entry and isinstance(entry[0], str) else None
        if kind is None:
            raise ValueError(f"unknown block decision {entry[0] if entry else entry!r}")
        i, j = entry[1], entry[2]
        block = _result_block(history, _index(i, len(history)), j, kind.block_type)
        if i < n:
            decision = kind.from_json(entry, block, facts.call_of)
            found.setdefault(i, {})[(decision.block_index, decision.rank)] = decision
    return {i: tuple(per[key] for key in sorted(per)) for i, per in found.items()}


_WORDS = {"tool_result": "tool result", "text": "prompt's text", "tool_use": "tool call"}


def _decides(message: Message, block: Block, block_type: str | tuple[str, ...]) -> bool:
    """Whether a decision about `block_type` blocks (one type, or several: `Edited`) may name `block` (a
    clip: a user's text block only)."""
    types = (block_type,) if isinstance(block_type, str) else block_type
    kind = block.get("type")
    return kind in types and (kind != "text" or message.get("role") == "user")


def _words(block_type: str | tuple[str, ...]) -> str:
    types = (block_type,) if isinstance(block_type, str) else block_type
    return " or ".join(_WORDS.get(t, t) for t in types)


def _result_block(history: Sequence[Message], i: int, j: object,
                  block_type: str | tuple[str, ...] = "tool_result") -> Block:
    """Block j of message i, which a saved cut, mask or clip names: it must be the kind of block it decides
    about (a tool_result; a user's text block for a clip)."""
    content = blocks(history[i])
    if not isinstance(j, int) or not 0 <= j < len(content) or not _decides(history[i], content[j], block_type):
        raise ValueError(f"block {j!r} of message {i} is not a {_words(block_type)}")
    return content[j]
