"""The demo model recalling what compaction took out, with the Context tool.

A named file that was read earlier but is no longer whole in the request (its result cut or masked, or
its read dropped and only the recap naming it) is recalled from the history instead of read again, and
the answer quotes the recall. A path only listed by Glob was never read: it is read, not recalled.
"""

from __future__ import annotations

import re

from tui_agent.core.compaction.marks import is_recap
from tui_agent.core.messages import Message, result_text, text_of, tool_results, tool_uses
from tui_agent.core.providers.demo_answers import md_escape
from tui_agent.core.providers.demo_turn import Turn

LINE_NUMBER = re.compile(r"^\s*\d+\t")
CUT_MARK = "…[tool_result cut"
QUOTED_LINES = 6


def files_read(messages: list[Message]) -> set[str]:
    """Paths some Read of the request asked for (whatever became of its result)."""
    return {str(use.get("input", {}).get("file_path")) for m in messages for use in tool_uses(m)
            if use.get("name") == "Read"}


def whole_reads(messages: list[Message]) -> set[str]:
    """Paths whose Read result this request still carries whole (not cut, not a placeholder)."""
    results = {str(r.get("tool_use_id")): result_text(r) for m in messages for r in tool_results(m)}
    whole = set()
    for message in messages:
        for use in tool_uses(message):
            text = results.get(str(use.get("id")))
            if use.get("name") == "Read" and text is not None and CUT_MARK not in text and not text.startswith("[Read"):
                whole.add(str(use.get("input", {}).get("file_path")))
    return whole


def recall_step(turn: Turn, named: list[str], messages: list[Message]) -> tuple[str, list[tuple[str, dict]]] | None:
    """Recall a named file that left the request, or answer from a recall this turn made (None: read it)."""
    recalls = [(str(i.get("search")), t, e) for name, i, t, e in turn.calls if name == "Context"]
    if recalls:  # nothing came back, or no line of the file did: read it again instead
        ok = [(path, text) for path, text, error in recalls if not error and file_lines(path, text)]
        return (recalled_answer(ok), []) if ok else None
    read_now = {str(i.get("file_path")) for name, i, _t, _e in turn.calls if name == "Read"}
    recaps = "\n".join(text_of(m) for m in messages[:-1] if is_recap(m))
    earlier = files_read(messages) | {p for p in named if p in recaps}
    whole = whole_reads(messages)
    lost = [p for p in named if p in earlier and p not in whole and p not in read_now]
    if not lost:
        return None
    return (f"`{lost[0]}` was read earlier but is no longer whole in my context; recalling it.",
            [("Context", {"action": "recall", "search": lost[0]})])


def file_lines(path: str, text: str) -> list[str]:
    """The file's own lines in a recall (its Read result's, not a neighbour's): none when the recall held
    only mentions of the path."""
    head = f"[result of Read({path})]"
    if head not in text:
        return []
    part = re.split(r"\n(?:\[result of |--- #)", text.split(head, 1)[1], maxsplit=1)[0]
    return [line for line in (LINE_NUMBER.sub("", raw) for raw in part.splitlines() if LINE_NUMBER.match(raw))
            if line.strip()]


def recalled_answer(recalled: list[tuple[str, str]]) -> str:
    lines = []
    for path, text in recalled:
        body = file_lines(path, text)
        lines.append(f"`{path}` had left my context (compaction took it out), so I recalled it with the Context "
                     f"tool instead of reading it again. It said:")
        lines.append("")
        lines += [f"> {md_escape(line[:120])}" for line in body[:QUOTED_LINES]]
        lines.append("")
    lines.append("The panel shows the recall and what it cost.")
    return "\n".join(lines)
