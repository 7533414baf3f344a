"""What the model may learn about its own context: the status of the request it was sent, and the
original content of what compaction took out of it.

History is append-only, so every compaction is reversible: whatever left the request (dropped, cut or
masked) is still in memory. These pure functions read the session's current plan (the plan of the call
the model is answering, owned by the session) and the history; they never plan anything themselves, so
what they report is exactly what the model was sent. The Context tool (`core/tools/context.py`) is
their only caller in a turn: it reads them through `ContextView`, which satisfies the tools floor's
`ContextLens` (checked by mypy where the session hands its view to `ToolContext.context_view`).
"""

from __future__ import annotations

from typing import Any

import json
from collections.abc import Sequence
from dataclasses import dataclass

from tui_agent.core.compaction.decisions import KINDS
from tui_agent.core.compaction.plan import CompactPlan, fmt_tokens
from tui_agent.core.tools.base import ToolError
from tui_agent.core.messages import Message, blocks, result_text, text_of, tool_results, tool_uses
from tui_agent.core.tokens import CHARS_PER_TOKEN
from tui_agent.core.formats import plural

# The most a recall returns, in characters: a recall must not undo the compaction it reads from.
RECALL_MAX_CHARS = 12_000
# A recall never takes more than this share of the tokens left in the request's budget (but never less
# than RECALL_MIN_CHARS, so a nearly full request can still fetch one small thing back).
RECALL_SHARE_OF_LEFT = 0.5
RECALL_MIN_CHARS = 1_000
# How many not-sent messages `status` lists one by one (a long session drops thousands).
STATUS_MAX_LINES = 40
_DESCRIPTION_CHARS = 70
# Kinds a recall can bring back: what compaction took out of the request (not what the user excluded).
RECALLABLE = ("dropped", "summarised", *(kind.op for kind in KINDS.values()))  # and every block kind


@dataclass(frozen=True)
class ContextView:
    """The session's history and the plan of the request the model is answering (None before a call)."""

    history: Sequence[Message]
    plan: CompactPlan | None

    def status(self) -> str:
        return status_text(self)

    def recalled(self, index: int | None, start: int | None, end: int | None, search: str | None) -> str:
        """What `recall` returns for what the model asked (`ToolError` when it cannot: one line)."""
        chosen = select(self, index, start, end, search)
        if isinstance(chosen, str):
            raise ToolError(chosen)
        return recall(self, chosen, recall_cap(self.plan)).text


def _short(text: str, limit: int = _DESCRIPTION_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _call_label(use: dict) -> str:
    tool_input: dict[str, Any] = use["input"] if isinstance(use.get("input"), dict) else {}
    for key in ("file_path", "pattern", "command", "path", "skill", "action", "query"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return f"{use.get('name', '?')}({_short(value, 50)})"
    return str(use.get("name", "?"))


def _uses_by_id(history: Sequence[Message], index: int) -> dict[str, dict]:
    """The tool calls that message `index`'s results answer (they stand in the message before it)."""
    if index <= 0:
        return {}
    return {str(u.get("id")): u for u in tool_uses(history[index - 1])}


def describe(history: Sequence[Message], index: int) -> str:
    """One line for history message `index`: who said it and what it holds."""
    message = history[index]
    results = tool_results(message)
    if results:
        uses = _uses_by_id(history, index)
        parts = []
        for block in results:
            use = uses.get(str(block.get("tool_use_id")), {"name": "?"})
            error = " error" if block.get("is_error") else ""
            parts.append(f"{_call_label(use)}{error} ({fmt_tokens(len(result_text(block)))} chars)")
        return "tool results: " + ", ".join(parts)
    text = text_of(message)
    if message.get("role") == "assistant":
        calls = [_call_label(u) for u in tool_uses(message)]
        said = f'"{_short(text)}"' if text.strip() else ""
        return "assistant: " + " then ".join(p for p in (said, "calls " + ", ".join(calls) if calls else "") if p)
    return f'user prompt: "{_short(text)}"'


def recall_cap(plan: CompactPlan | None) -> int:
    """The most characters one recall returns now (RECALL_MAX_CHARS, less when the request is nearly full)."""
    if plan is None:
        return RECALL_MAX_CHARS
    share = int(plan.tokens_left * CHARS_PER_TOKEN * RECALL_SHARE_OF_LEFT)
    return max(RECALL_MIN_CHARS, min(RECALL_MAX_CHARS, share))


def status_text(view: ContextView) -> str:
    """Tokens used and left, the marks, and what was dropped, cut or masked by message index."""
    plan = view.plan
    if plan is None:
        return "No model call has been planned yet: your context is the whole conversation."
    left = plan.tokens_left
    room = plan.budget_room or plan.budget_tokens  # the meter's one denominator (`CallFigures.room`), named
    named = "budget" if plan.budget_room else "window less the answer's reserve"
    lines = [f"Context of call {plan.call}: ≈{fmt_tokens(plan.estimated_tokens)} tokens, "
             f"{plan.estimated_tokens * 100 // max(room, 1)}% of the {fmt_tokens(room)} {named}; "
             f"≈{fmt_tokens(left)} left in the window "
             f"(history: {plural(plan.history_len, 'message')}, {plan.sent_count} sent; compaction {plan.mode}"
             f"{'' if plan.enabled else ' off'}).",
             f"Above ≈{fmt_tokens(plan.high_tokens)} older messages leave the request; "
             f"the history keeps all of them."]
    missing = plan.not_sent_whole()
    if not missing:
        lines.append("Nothing was dropped, cut or masked: every message is sent whole.")
        return "\n".join(lines)
    counts: dict[str, int] = {}
    for _i, kind in missing:
        counts[kind] = counts.get(kind, 0) + 1
    lines.append("Not sent whole: " + ", ".join(f"{n} {kind}" for kind, n in counts.items()) + ".")
    for index, kind in missing[-STATUS_MAX_LINES:]:
        lines.append(f"#{index} {kind}: {describe(view.history, index)}")
    if len(missing) > STATUS_MAX_LINES:
        lines.insert(3, f"(the oldest {len(missing) - STATUS_MAX_LINES} of them are not listed; "
                        f"#{missing[0][0]}–#{missing[-STATUS_MAX_LINES - 1][0]})")
    lines.append('Get any of them back whole: {"action": "recall", "index": N}, '
                 '{"action": "recall", "start": N, "end": M} or {"action": "recall", "search": "text"} '
                 f"(at most {fmt_tokens(recall_cap(plan))} chars per recall).")
    return "\n".join(lines)


def original_text(history: Sequence[Message], index: int) -> str:
    """Message `index` as it stands in the history, every block as plain text."""
    message = history[index]
    uses = _uses_by_id(history, index)
    parts: list[str] = []
    for block in blocks(message):
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            parts.append(str(block["text"]))
        elif kind == "tool_use":
            parts.append(f"[call {block.get('name')} {json.dumps(block.get('input', {}), ensure_ascii=False)}]")
        elif kind == "tool_result":
            use = uses.get(str(block.get("tool_use_id")), {"name": "?"})
            parts.append(f"[result of {_call_label(use)}]\n{result_text(block)}")
    return "\n".join(parts)


@dataclass(frozen=True)
class Recall:
    """What one recall returns: the text, the messages it covers and whether the cap cut it."""

    text: str
    indices: tuple[int, ...]
    capped: bool


def _matches(history: Sequence[Message], plan: CompactPlan, search: str) -> list[int]:
    """Recallable messages that mention `search`: first the calls whose input names it with their results
    (a path finds its reads; a masked result whose call is still sent too), then every other mention, each
    group in history order (an older mention never crowds a read out of the cap)."""
    wanted = search.casefold()
    recallable = {i for i, kind in plan.not_sent_whole() if kind in RECALLABLE}
    direct: set[int] = set()
    other: set[int] = set()
    for i in sorted(recallable):
        calls = tool_uses(history[i]) or (tool_uses(history[i - 1]) if i and tool_results(history[i]) else [])
        named = any(wanted in json.dumps(u.get("input", {}), ensure_ascii=False).casefold() for u in calls)
        if named:
            direct.add(i)
            if i + 1 in recallable and tool_uses(history[i]):
                direct.add(i + 1)
        elif wanted in original_text(history, i).casefold():
            other.add(i)
    return sorted(direct) + sorted(other - direct)


def select(view: ContextView, index: int | None, start: int | None, end: int | None,
           search: str | None) -> list[int] | str:
    """The history indices a recall asks for, or why it cannot (one line)."""
    plan, size = view.plan, len(view.history)
    if plan is None:
        return "Nothing to recall: no call has been planned yet, so nothing has left your context."
    if search is not None:
        if not search.strip():
            return "The search string is empty: give a word, a path or an identifier to look for."
        found = _matches(view.history, plan, search)
        return found or f"No dropped, cut or masked message mentions {search!r}; status lists what is not sent."
    if index is not None:
        start = end = index
    if start is None or end is None:
        return "Say what to recall: an index, a range (start and end, both included) or a search string."
    if start > end:
        start, end = end, start
    if start < 0 or end >= size:
        return f"No message #{start if start < 0 or start >= size else end}: the history has #0–#{size - 1}."
    kinds = {i: plan.op(i).kind for i in range(start, end + 1)}
    chosen = [i for i, kind in kinds.items() if kind in RECALLABLE]
    if not chosen:
        what = "is" if start == end else "are all"
        return (f"#{start}{'' if start == end else f'–#{end}'} {what} in your context already "
                f"({', '.join(sorted(set(kinds.values())))}): nothing to recall.")
    return chosen


def recall(view: ContextView, indices: Sequence[int], cap: int) -> Recall:
    """The original content of `indices`, newest last, cut at `cap` characters (and saying so)."""
    plan = view.plan
    assert plan is not None
    pieces: list[str] = []
    used, taken = 0, []
    rest: list[int] = []  # not shown in full
    for n, i in enumerate(indices):
        piece = f"--- #{i} ({plan.op(i).kind} in your context; original follows) {describe(view.history, i)}\n"
        piece += original_text(view.history, i)
        if used + len(piece) > cap:
            room = cap - used
            if room > 200:
                pieces.append(piece[:room])
                taken.append(i)
            rest = list(indices[n:])
            break
        pieces.append(piece)
        taken.append(i)
        used += len(piece) + 1
    text = "\n".join(pieces)
    if rest:
        text += (f"\n[recall capped at {fmt_tokens(cap)} chars; not shown in full: "
                 f"{', '.join(f'#{i}' for i in rest[:20])}{' …' if len(rest) > 20 else ''}. "
                 "Recall a narrower index or range for the rest.]")
    return Recall(text, tuple(taken), bool(rest))
