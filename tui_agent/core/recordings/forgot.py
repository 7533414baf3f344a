"""What the recorded agent forgot at one of its own compactions (`tui-agent watch`).

After a compaction the recorded agent sends its summary instead of everything before it. What it forgot
is what came before and the summary no longer names: the user's prompts (text-only, as the report's
"prompts missing" counts them) and the file paths its tools touched. A prompt counts as named when its
opening words (whitespace folded, case ignored) appear in the summary: summaries quote the user's
messages, rarely word for word to the end. A path counts as named when the summary holds the path or
its file name.

Beside the lists, the future-entity coverage (`core.coverage`) of the calls right after the compaction:
the share of what the agent's next replies use that its own requests still held, and the same for our
requests at those calls. It needs those next replies, so live it covers the calls written so far.
"""

from __future__ import annotations

from collections.abc import Sequence, Set as AbstractSet
from dataclasses import dataclass
from pathlib import PurePath

from tui_agent.core.recordings.coverage import HORIZON, Coverage, EntityIndex, future_entities
from tui_agent.core.messages import Message, is_user_text, text_of, tool_uses
from tui_agent.core.compaction.recap import PATH_KEYS  # the inputs that name a touched path, defined once

PROMPT_MAX_CHARS = 2_000  # as the report's prompt check (`economics.PROMPT_MAX_CHARS`)
OPENING_CHARS = 60


@dataclass(frozen=True)
class Forgotten:
    summary_index: int  # the history index of the agent's summary
    prompts: tuple[str, ...]  # user prompts before it that the summary does not name
    paths: tuple[str, ...]  # touched file paths before it that the summary does not name
    prompts_before: int
    paths_before: int


def _fold(text: str) -> str:
    return " ".join(text.split()).lower()


def forgotten(history: Sequence[Message], summary_index: int, start: int = 0) -> Forgotten:
    """What `history[start:summary_index]` held that the summary at `summary_index` does not name
    (`start`: where the agent's request began before this compaction, after an earlier one)."""
    summary = _fold(text_of(history[summary_index])) if summary_index < len(history) else ""
    prompts: list[str] = []
    paths: list[str] = []
    seen: set[str] = set()
    for message in history[start:summary_index]:
        if is_user_text(message):
            text = text_of(message)
            if text.strip() and len(text) <= PROMPT_MAX_CHARS:
                prompts.append(text)
        for use in tool_uses(message):
            tool_input = use.get("input")
            if not isinstance(tool_input, dict):
                continue
            for key in PATH_KEYS:
                value = tool_input.get(key)
                if isinstance(value, str) and value and value not in seen:
                    seen.add(value)
                    paths.append(value)
    lost_prompts = tuple(p for p in prompts if _fold(p)[:OPENING_CHARS] not in summary)
    lost_paths = tuple(p for p in paths if p.lower() not in summary and PurePath(p).name.lower() not in summary)
    return Forgotten(summary_index, lost_prompts, lost_paths, len(prompts), len(paths))


@dataclass(frozen=True)
class CoverageAfter:
    """Future-entity coverage of the calls just after a compaction: the recorded agent's and ours."""

    calls: tuple[int, ...]  # call numbers measured (1-based)
    recorded: Coverage
    ours: Coverage


def coverage_after(history: Sequence[Message], calls: Sequence[int], segment_start: Sequence[int], first_call: int,
                   ours: Sequence[Sequence[Message] | AbstractSet[str]], horizon: int = HORIZON) -> CoverageAfter:
    """Coverage at calls `first_call` .. `first_call + horizon - 1` (1-based) that exist: the recorded
    request is `history[segment_start[k]:calls[k]]`, ours is `ours[k]` (one request per call index, or
    the entity set of one, `coverage.request_entities`: the watch keeps that, not the request)."""
    future = future_entities(history, calls, horizon)
    index = EntityIndex()
    recorded, mine = Coverage(), Coverage()
    measured = []
    for k in range(first_call - 1, min(first_call - 1 + horizon, len(calls), len(ours))):
        wanted = future[k]
        recorded.add(len(wanted), index.present(wanted, history[segment_start[k]:calls[k]]))
        request = ours[k]
        mine.add(len(wanted), len(wanted & request) if isinstance(request, AbstractSet)
                 else index.present(wanted, request))
        measured.append(k + 1)
    return CoverageAfter(tuple(measured), recorded, mine)
