"""One number for what an event kept of what is in use: of the identifiers the agent's last replies used
that came from earlier messages, the share the request still holds outside those replies.

Why beside the at-risk list: the list says what left; this says whether it mattered. It looks back (the
replies already written), so a live session can show it at every event, where the benchmark's coverage
looks ahead (the replies to come). The same entities as the at-risk list (`coverage.entities`), looked
for as text (as the at-risk list does: no entity extraction over the whole request at an event), and the
benchmark's rule for what counts: a recap, a placeholder or a cut note is not the conversation's own text.
"""

from __future__ import annotations

from collections.abc import Sequence

from tui_agent.core.compaction.facts import Facts
from tui_agent.core.compaction.layout import Layout
from tui_agent.core.compaction.state import CompactState
from tui_agent.core.compaction.names.entities import entities, held_text, mentioned_text, own_text
from tui_agent.core.messages import Message

RECENT_REPLIES = 10  # "the last turns": the agent's newest replies
LOOK_BACK = 100  # earlier messages read for where the used identifiers came from (bounded at 10,000 messages)


def in_use_kept(state: CompactState, facts: Facts, layout: Layout, history: Sequence[Message]) -> tuple[int, int]:
    """(kept, used) after an event laid out in `layout`."""
    replies = [i for i in range(len(history) - 1, -1, -1) if history[i].get("role") == "assistant"][:RECENT_REPLIES]
    if not replies:
        return 0, 0
    start = min(replies)
    mentioned: set[str] = set()
    for i in replies:
        mentioned |= entities(mentioned_text(history[i]))
    earlier = "\n".join(held_text(history[i]) for i in range(max(start - LOOK_BACK, 0), start))
    used = {name for name in mentioned if name in earlier}
    if not used:
        return 0, 0
    # the conversation's own text before the replies (never the recap: index < 0), searched once per name
    # (an event at 10,000 messages must not extract the entities of every cut copy again)
    text = "\n".join(own_text(layout.out[pos]) for pos, i in enumerate(layout.indices) if 0 <= i < start)
    return sum(1 for name in used if name in text), len(used)
