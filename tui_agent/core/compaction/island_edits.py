"""A Write island shows the file as it is: its later Edits that left the request, applied.

Why: at a drop the newest Write of each file stays as an island (`keep_for_use`), but the Edits made to that
file afterwards leave with the dropped span; on the 17 shared and held-out sessions 28 % of the Write islands
sent showed a version of the file that no longer existed (`bench/stale_islands.py`). So, at the event, each
island's Write input is shown with those Edits applied in order, each only if the Edit tool would have applied
it (its old_string found, once unless replace_all); the first that does not apply ends the replay (the file as
of the last that did). An Edit still sent (in the kept tail, pinned, an island) is never applied, nor any after
it: the model would see an edit whose old_string is gone. A failed Edit (an error result) changed nothing and
is passed over; a Write superseded by a later Write is left as it is (that Write is what is current). The
Write's result carries a one-line note saying so (`decisions.Edited`). Outbound only: the history is never
changed; decided at the event and frozen until the next one (the journal keeps the Edit ids: a resumed
session replays the same). `CompactPolicy.islands_show_edits` (on by default; off: what the history holds, as before).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from tui_agent.core.compaction.decisions import EDIT_TOOLS, Edited, replay
from tui_agent.core.compaction.facts import Facts
from tui_agent.core.compaction.state import CompactState
from tui_agent.core.messages import Message, blocks


def later_edits(state: CompactState, facts: Facts, history: Sequence[Message], after: int,
                path: str) -> list[tuple[str, object]]:
    """(id, input) of the Edit calls of `path` after message `after` that no request sends, in order, up to
    the first one sent or another writer of the file; failed ones (an error result) left out. None at all when
    the file is written again before that (the island is superseded: `keep_for_use.choose_kept` keeps no such Write,
    the islands of what recurs may)."""
    out: list[tuple[str, object]] = []
    for k in facts.writers[bisect_right(facts.writers, after):]:
        for block in blocks(history[k]):
            if block.get("type") != "tool_use" or not isinstance(block.get("input"), dict):
                continue
            name, tool_input = block.get("name"), block["input"]
            if (tool_input.get("file_path") or tool_input.get("notebook_path")) != path:
                continue
            if name == "Write":
                return []  # written again: this island shows a superseded file, edited or not
            if name not in EDIT_TOOLS or state.is_sent(k):
                return out  # another writer, or an edit the model sees
            answers = facts.results[k + 1] if k + 1 < len(facts.results) else ()
            if not any(r.tool_use_id == block.get("id") and r.error for r in answers):
                out.append((str(block.get("id", "")), tool_input))
    return out


def edited_islands(state: CompactState, facts: Facts, history: Sequence[Message], call: int) -> CompactState:
    """The state with each kept-for-use Write island shown after its dropped Edits (`Edited` on the Write's
    tool_use block and on its result), and no such decision left on any other message. A decision equal
    to the one held is kept as it is (its call too), so an event that changes nothing here moves nothing."""
    new: dict[int, dict[int, Edited]] = {}
    islands = state.kept_for_use & state.kept_in_drop
    for i in sorted(islands - state.pins - state.expanded):
        for j, block in enumerate(blocks(history[i])):
            tool_input = block.get("input")
            if block.get("type") != "tool_use" or block.get("name") != "Write" or not isinstance(tool_input, dict):
                continue
            written, path = tool_input.get("content"), tool_input.get("file_path")
            if not isinstance(written, str) or not isinstance(path, str):
                continue
            edits = later_edits(state, facts, history, i, path)
            content, applied = replay(written, [edit for _, edit in edits])
            result = _result_of(facts, i, str(block.get("id", "")), islands)
            if not applied or result is None:
                continue
            ids = tuple(edit_id for edit_id, _ in edits[:applied])
            tool_id = str(block.get("id", ""))
            new.setdefault(i, {})[j] = Edited(i, j, tool_id, ids, call, content)
            new.setdefault(result[0], {})[result[1]] = Edited(result[0], result[1], tool_id, ids, call)
    return _swapped(state, new)


def _result_of(facts: Facts, i: int, tool_id: str, islands: frozenset[int]) -> tuple[int, int] | None:
    """(message, block) of the result of call `tool_id` made in message i, when it is sent with it and did
    not fail (a failed Write wrote nothing to show edited)."""
    k = i + 1
    if k not in islands or k >= len(facts.results):
        return None
    found = next((r for r in facts.results[k] if r.tool_use_id == tool_id), None)
    return None if found is None or found.error else (k, found.index)


def _swapped(state: CompactState, new: dict[int, dict[int, Edited]]) -> CompactState:
    """`state` with its `Edited` decisions replaced by `new` (an unchanged one keeps its old value)."""
    held = {(i, d.block_index): d for i, per in state.blocks.items() for d in per if isinstance(d, Edited)}
    wanted = {(i, j): d for i, per in new.items() for j, d in per.items()}
    for key, decision in wanted.items():
        old = held.get(key)
        if old is not None and (old.edit_ids, old.content) == (decision.edit_ids, decision.content):
            wanted[key] = old  # frozen: the same decision, from its first event
    if wanted == held:
        return state
    touched = {key[0] for key in set(held) | set(wanted) if held.get(key) != wanted.get(key)}
    decided = dict(state.blocks)
    for i in touched:
        kept = tuple(d for d in decided.get(i, ()) if not isinstance(d, Edited))
        mine = tuple(d for (k, _), d in sorted(wanted.items()) if k == i)
        merged = tuple(sorted((*kept, *mine), key=lambda d: (d.block_index, d.rank)))
        if merged:
            decided[i] = merged
        else:
            decided.pop(i, None)
    versions = dict(state.versions)
    for i in touched:
        versions[i] = versions.get(i, 0) + 1
    return state.evolve(blocks=decided, versions=versions)
