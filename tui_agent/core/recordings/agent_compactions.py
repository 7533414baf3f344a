"""Where a recorded agent compacted its own context, one entry per compaction, with its summary's words.

Why apart from the replay: a log says it in its own way (Claude Code's compact_boundary and the summary after
it, Codex's compacted record and its replacement history, our journals' events), and each face lists the
compactions (the replay card, `[`/`]`, `replay --json`, the watch's `--json` lines): a boundary and its summary
are one compaction, counted once, and the words shown are the summary's (`codex_rollout.compaction_summary`).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, replace

from tui_agent.core.events import ServerEdited
from tui_agent.core.recordings.codex_rollout import compaction_summary
from tui_agent.core.recordings.recorded import Recorded


@dataclass(frozen=True)
class AgentCompaction:
    """Where the recorded agent compacted its own context (Claude Code's summary / compact_boundary, or
    a compaction event in one of our journals)."""

    index: int  # the history index it happened at
    call: int  # the number of the first recorded call after it (1-based; 0 when no call follows)
    kind: str  # "summary" | "boundary" | "event"
    text: str
    summary: int | None = None  # the history index of its summary (a boundary's, or a summary's own)



def _first_call_after(recorded: Recorded, index: int) -> int:
    k = bisect_right(recorded.calls, index)  # the calls are in history order
    return k + 1 if k < len(recorded.calls) else 0


def agent_compactions(recorded: Recorded) -> list[AgentCompaction]:
    """Where the recorded agent compacted, in history order (a boundary before its summary)."""
    out: list[AgentCompaction] = []
    if recorded.journal is not None:
        for call in getattr(recorded.journal, "calls", []):
            if call.event:
                k = next((k for k, c in enumerate(recorded.calls) if c >= call.history_len), -1)
                out.append(AgentCompaction(call.history_len, k + 1, "event", str(call.event)))
        for edit in getattr(recorded.journal, "server_events", []):  # what the server did (server-clear/compact)
            if isinstance(edit, ServerEdited):
                k = next((k for k, c in enumerate(recorded.calls) if c >= edit.history_index), -1)
                out.append(AgentCompaction(edit.history_index, k + 1, "server", edit.line()))
        out.sort(key=lambda c: c.index)
        return out
    for index in recorded.boundaries:
        out.append(AgentCompaction(index, _first_call_after(recorded, index), "boundary",
                                   "compact_boundary: the agent compacted its context here"))
    for index in recorded.summaries:
        text = compaction_summary(recorded.history[index]) if index < len(recorded.history) else ""
        call = _first_call_after(recorded, index)
        # a boundary and the summary after it, before the same call, are one compaction (Claude Code's
        # compact_boundary and its summary, Codex's compacted record and its replacement history)
        at = next((n for n, c in enumerate(out) if c.kind == "boundary" and c.summary is None and c.call == call
                   and c.index <= index), None)
        opening = " ".join(text.split())[:160]
        if at is None:
            out.append(AgentCompaction(index, call, "summary", opening, index))
        else:
            out[at] = replace(out[at], text=opening, summary=index)
    out.sort(key=lambda c: (c.index, c.kind != "boundary"))
    return out
