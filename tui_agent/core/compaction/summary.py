"""Tier 5, summary (optional): the model summarises what an event drops, into the recap.

The summary call sends the request as it stood before the event (so it reads the prompt cache written
by the previous call) and one more user message asking for the summary; the tools stay in the request for
the same reason, and a reply that calls a tool instead of answering counts as a failure. The summary is
an overlay on the recap (the history is untouched), reused until the next event; after
`CompactPolicy.summary_max_failures` failures in a row the tier stops asking (a circuit breaker).
"""

from __future__ import annotations

import re
from typing import Any

from tui_agent.core.compaction.marks import SUMMARY_MARK, is_recap, recap_files
from tui_agent.core.messages import Message, blocks, result_text, text_of, tool_uses, user_text
from tui_agent.core.formats import plural

FOCUS_LINE = "Focus on: "
_FOCUS_FILLER = {"keep", "the", "and", "details", "detail", "about", "focus", "for", "with", "please", "all", "any",
                 "what", "that", "this", "more", "info", "information", "facts", "notes", "parts", "part", "stuff"}
FOCUS_FACTS = 6


def summary_instruction(dropped: int, focus: str = "") -> str:
    lines = [
        f"{SUMMARY_MARK} The oldest {plural(dropped, 'message')} of this conversation {'is' if dropped == 1 else 'are'} about to leave the context. "
        "Write a summary of the conversation so far that lets you continue the work without them: the user's "
        "goals and requests, decisions taken, files read and changed (with paths), commands run and their "
        "results, errors met and how they were solved, and what is still to do.",
        "Reply with the summary only, in at most 500 words; do not call any tool.",
    ]
    if focus.strip():
        lines.append(f"{FOCUS_LINE}{focus.strip()}")
    return "\n".join(lines)


def summary_messages(before_event: list[Message], dropped: int, focus: str = "") -> list[Message]:
    """The summary call's messages: the pre-event request (a cached prefix), then the instruction."""
    return list(before_event) + [user_text(summary_instruction(dropped, focus))]


def is_summary_request(messages: list[Message]) -> bool:
    return bool(messages) and messages[-1].get("role") == "user" and text_of(messages[-1]).startswith(SUMMARY_MARK)


def extractive_summary(messages: list[Message]) -> str:
    """The demo model's summary: what the user asked, what was read or changed, and the answers' first lines
    (no model needed, so the tier is visible offline)."""
    prompts, files, answers = [], [], []
    for message in messages[:-1]:
        text = text_of(message).strip()
        if message.get("role") == "user" and text and not is_recap(message):
            prompts.append(" ".join(text.split())[:160])
        for listed in recap_files(message):  # read before an earlier event: the recap lists them
            if listed not in files:
                files.append(listed)
        for use in tool_uses(message):
            tool_input: dict[str, Any] = use["input"] if isinstance(use.get("input"), dict) else {}
            path = tool_input.get("file_path") or tool_input.get("path")
            if isinstance(path, str) and path not in files:
                files.append(path)
        if message.get("role") == "assistant" and text and not tool_uses(message):
            answers.append(" ".join(text.split())[:160])
    parts = ["Summary (extractive, written by the offline demo model):"]
    parts += _focus_part(messages, files)
    if prompts:
        parts.append("Asked: " + " | ".join(prompts[-8:]))
    if files:
        parts.append("Files looked at: " + ", ".join(files[-20:]))
    if answers:
        parts.append("Answered: " + " | ".join(answers[-5:]))
    return "\n".join(parts)


def _focus_terms(instruction: str) -> list[str]:
    """The words of the `/compact` focus that say what to keep ("keep the cache clock details" → cache, clock)."""
    focus = next((line[len(FOCUS_LINE):] for line in instruction.splitlines() if line.startswith(FOCUS_LINE)), "")
    return [w for w in re.findall(r"[a-z0-9]{3,}", _plain(focus)) if w not in _FOCUS_FILLER]


def _plain(text: str) -> str:
    """Lower case, `_` and `-` as spaces: "cache_clock.py" and "the cache clock" both hold "cache" and "clock"."""
    return re.sub(r"[_\-]", " ", text.lower())


def _focus_part(messages: list[Message], files: list[str]) -> list[str]:
    """The `/compact` focus honoured first: the files that name it (their path holds every focus word) or
    hold it (a line of what was read does), then those lines (a real model keeps what it was asked to keep).
    ("no file named it" was once said of a file it had read whose text held the focus.)"""
    terms = _focus_terms(text_of(messages[-1])) if messages else []
    if not terms:
        return []
    def held(text: str) -> bool:
        plain = _plain(text)
        return all(term in plain for term in terms)
    named = [f for f in files if held(f)]
    sources = {str(use.get("id")): use.get("input", {}).get("file_path") for m in messages for use in tool_uses(m)
               if isinstance(use.get("input"), dict)}
    facts: list[str] = []
    for message in messages[:-1]:
        results = [(sources.get(str(b.get("tool_use_id"))), result_text(b)) for b in blocks(message)
                   if b.get("type") == "tool_result"]
        for source, text in results or [(None, text_of(message))]:
            for line in (re.sub(r"^\d+\t", "", raw).strip() for raw in text.splitlines()):
                if line and held(line):
                    if isinstance(source, str) and source not in named:
                        named.append(source)
                    if " ".join(line.split())[:160] not in facts:
                        facts.append(" ".join(line.split())[:160])
    where = ", ".join(named) if named else "no file I read names or holds it"
    out = [f"Focus ({' '.join(terms)}): {where}"]
    out += [f"- {fact}" for fact in facts[:FOCUS_FACTS]]
    return out
