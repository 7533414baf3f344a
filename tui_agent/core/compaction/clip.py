"""Fitting the window's last resort: a prompt larger than the window is sent clipped (`decisions.Clip`).

A prompt that cannot fit is refused before it is sent (`core/agent/prompt_fit.py`), but a history may hold
one already: a journal written before that refusal existed (every later `--continue` failed
"prompt is too long: 378,128 tokens > 200,000", `/compact` said "Nothing to compact"), or a prompt whose
estimate fitted while its real size did not. Such a prompt sits in the newest round or just before it (a
failed turn has no answer after its prompt), where no drop can reach (a drop ends at an assistant
message). So when every other step leaves the request over the window, the largest text blocks of user
messages are clipped, largest first, each to its beginning and end with a note between them that says how
much is left out: never forgotten silently, never a split tool round (a text block only), outbound only (the
history keeps it whole), and decided once (later requests repeat it byte for byte until a drop takes it).
"""

from __future__ import annotations

import math

from tui_agent.core import tokens as tk
from tui_agent.core.compaction.decisions import BlockDecision, Clip, merged
from tui_agent.core.compaction.state import CompactState
from tui_agent.core.compaction.request_view import RequestView
from tui_agent.core.compaction.tiers import with_decisions
from tui_agent.core.messages import blocks

KEEP_SHARE = 0.25  # a clipped prompt keeps at most this share of the working budget (room for the rest)
MIN_KEEP_CHARS = 2_000  # and at least this much of itself: its question is usually at its beginning or end
NOTE_TOKENS = 80  # the note a clip puts between its beginning and end


def clip_prompts(state: CompactState, view: RequestView, target: int) -> tuple[CompactState, list[int]]:
    """Clip the largest user text blocks of the request until its estimate is at most `target` (the window
    less the answer's reserve); the new state and the messages changed (none: nothing left to clip)."""
    history, layout, tokens, policy = view.history, view.layout, view.tokens, view.policy
    ratio = max(tokens.ratio, 1e-6)
    cap = max(MIN_KEEP_CHARS, int(policy.room * KEEP_SHARE / ratio * tk.CHARS_PER_TOKEN))
    candidates = []
    for i in layout.pos:
        if i < 0 or history[i].get("role") != "user":
            continue
        clipped = {d.block_index for d in state.blocks.get(i, ()) if isinstance(d, Clip)}
        for j, block in enumerate(blocks(history[i])):
            text = block.get("text")
            if block.get("type") == "text" and isinstance(text, str) and j not in clipped:
                candidates.append((len(text), i, j))
    over: float = tokens.estimate() - target
    new: dict[int, dict[int, BlockDecision]] = {}
    for chars, i, j in sorted(candidates, reverse=True):
        if over <= 0 or chars <= MIN_KEEP_CHARS:
            break
        need = math.ceil((over + NOTE_TOKENS) / ratio * tk.CHARS_PER_TOKEN)  # what must go, in characters
        keep = max(MIN_KEEP_CHARS, min(cap, chars - need))
        if keep >= chars:
            continue
        new.setdefault(i, {})[j] = Clip(i, j, "", "", chars, keep, view.call, hard=True)
        over -= (chars - keep) / tk.CHARS_PER_TOKEN * ratio - NOTE_TOKENS
    if not new:
        return state, []
    return with_decisions(state, merged(state.blocks, new), set(new)), sorted(new)


__all__ = ["clip_prompts"]
