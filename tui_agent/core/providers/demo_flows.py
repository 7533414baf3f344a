"""The demo model's flows for prompts that say what they want, beside the look-around for a question.

"what is in this repo?" (the top level with every file's line count, the README, the data files when asked),
"read the data files", "the biggest files" (ranked by a Grep line count), "grep for X and Y", and the
look-around a question about the code gets (a Glob, two reads, a search, a few reads of what it found).
Each flow is a function of the turn so far: the next round's words and tool calls, or the answer.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tui_agent.core.formats import plural
from tui_agent.core.providers.demo_answers import (
    Words,
    answer,
    biggest_answer,
    folder_note,
    grep_answer,
    md_escape,
    names,
)
from tui_agent.core.providers.demo_data import data_files, data_lines, data_reads, look_for_data
from tui_agent.core.providers.demo_files import HEAD_LINES, PREFERRED, SKIP_SUFFIXES, DemoFiles, pick
from tui_agent.core.providers.demo_prompts import intro, keyword
from tui_agent.core.providers.demo_turn import Turn, line_counts

Uses = list[tuple[str, dict[str, Any]]]
Step = tuple[str, Uses]


def used(turn: Turn, tool: str) -> bool:
    return any(name == tool for name, *_ in turn.calls)


def read_in_turn(turn: Turn) -> set[str]:
    return {str(i.get("file_path")) for name, i, _t, _e in turn.calls if name == "Read"}


def listed_files(turn: Turn, files: DemoFiles) -> list[str]:
    """The files this turn's Globs listed (not its placeholders, notes or folders)."""
    found: list[str] = []
    for name, _input, text, is_error in turn.calls:
        if name != "Glob" or is_error:
            continue
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith(("…", "(", "[")) or " " in line and not Path(line).suffix:
                continue
            if files.is_file(line):
                found.append(line)
    return found


def grep_files(turn: Turn) -> list[str]:
    found: list[str] = []
    for name, _i, text, is_error in turn.calls:
        if name == "Grep" and not is_error:
            for line in text.splitlines():
                path = line.split(":", 1)[0].strip()
                if path and path not in found and Path(path).suffix:
                    found.append(path)
    return found


def grep_input(term: str, path: str | None = None) -> dict[str, Any]:
    """One Grep per term, literal, case-insensitive only when typed in lower case (smart case)."""
    tool_input: dict[str, Any] = {"pattern": re.escape(term), "output_mode": "content", "-n": True,
                                  "head_limit": 20, "-i": term == term.lower()}
    if path:
        tool_input["path"] = path
    return tool_input


def grep_flow(turn: Turn, terms: list[str], where: str | None, hints: Words) -> Step:
    if not used(turn, "Grep"):
        names = " and ".join(f"`{md_escape(t)}`" for t in terms)
        return (f"Searching for {names}" + (f" in `{where}`." if where else "."), [("Grep", grep_input(t, where)) for t in terms])
    return grep_answer(turn, [(t, grep_input(t)["pattern"]) for t in terms], hints), []


def overview(turn: Turn, files: DemoFiles, hints: Words, system: str, available: set[str], data: bool) -> Step:
    """"What is in this repo?": the top level and every file's line count at once (the layout: folders
    with their sizes, then loose files), the README (or manifest) and, when asked, the data files'
    Globs, then the data files' heads, then the answer."""
    if not used(turn, "Glob"):
        uses: Uses = [("Glob", {"pattern": "*"})]
        if "Grep" in available and not used(turn, "Grep"):
            uses.append(("Grep", {"pattern": "^", "output_mode": "count", "head_limit": 0}))
            return intro(system, "I'll list the top level and count every file's lines, folder by folder."), uses
        return intro(system, "I'll list the top level first."), uses
    if not used(turn, "Read"):
        known = {"agents.md", "claude.md"} if "AGENTS.md" in system or "CLAUDE.md" in system else set()
        fresh = [p for p in listed_files(turn, files) if p.lower() not in known]  # the instructions are in the system prompt
        picks = [p for p in pick(fresh, set(), "", 2) if Path(p).name.lower().startswith(PREFERRED)]
        picks = picks or pick(fresh, set(), "", 1)
        looks = look_for_data() if data and data_files(turn) is None else []
        if picks or looks:
            layout = folder_note(turn)
            said = (f"The folders: {layout}. " if layout else "") + (
                f"Reading the head of {names(picks)} for what the project says of itself" if picks else "")
            said += (", and looking for the data files." if picks else "Looking for the data files.") if looks else "."
            return said, [files.read(p, HEAD_LINES) for p in picks] + looks
    if data:
        return data_flow(turn, hints)
    return answer(turn, hints), []


def data_flow(turn: Turn, hints: Words) -> Step:
    """"Read the data files": look for them (by extension and by folder), read their heads, answer."""
    if data_files(turn) is None:
        return "Looking for the data files (by extension and in data folders).", look_for_data()
    reads = data_reads(turn)
    if reads:
        return f"Reading the head of {names([str(i['file_path']) for _n, i in reads])}.", reads
    return answer(turn, hints, data=data_lines(turn)), []


def biggest(turn: Turn, files: DemoFiles, hints: Words) -> Step:
    """List the files, count their lines (their real size, from the tools), read the two largest."""
    sizes = line_counts(turn)  # from the counts, or from what it wrote down of them
    if not sizes and not used(turn, "Glob"):
        return "I'll list the files first, then measure them.", [("Glob", {"pattern": "**/*"})]
    if not sizes and not used(turn, "Grep"):
        return ("Now I'll count the lines of every file (a Grep for `^` in count mode), to compare real sizes.",
                [("Grep", {"pattern": "^", "output_mode": "count", "head_limit": 0})])
    largest = [p for p, _n in sizes if Path(p).suffix.lower() not in SKIP_SUFFIXES and files.is_file(p)][:2]
    unread = [p for p in largest if p not in read_in_turn(turn)]
    if unread:
        ranking = ", ".join(f"`{p}` ({plural(n, 'line')})" for p, n in sizes[:5])
        return (f"By line count the largest are {ranking}; reading the heads of the two largest.",
                [files.read(p, HEAD_LINES) for p in unread])
    return biggest_answer(turn, sizes, hints), []


def explore(turn: Turn, step: int, files: DemoFiles, hints: Words, system: str, available: set[str],
            seen: set[str], skills: list[str]) -> Step:
    """A question about the code: a look around (Glob), two files, a search, a few reads of what it found
    (`step`: the rounds since the question, less a skill's loading)."""
    word, listed = keyword(turn.prompt), listed_files(turn, files)
    if step == 0 and "Glob" in available:
        return intro(system, "I'll start by looking at how the repository is laid out."), [("Glob", {"pattern": "**/*"})]
    if step == 1 and "Read" in available:
        picks = pick(listed, seen, word, 2)
        if len(picks) < 2:
            picks += pick([f for f in listed if f not in picks], set(picks), word, 2 - len(picks))
        if picks:
            return f"Let me read {names(picks)} first.", [files.read(p) for p in picks]
    if step == 2 and skills and "Skill" in available and not used(turn, "Skill"):
        return f"There is a `{skills[0]}` skill for this project; let me load it.", [("Skill", {"skill": skills[0]})]
    if step in (2, 3) and "Grep" in available and not used(turn, "Grep"):
        pattern = word or "TODO|FIXME|def |class |function "
        return (f"Now I'll search for `{pattern}` to see where it comes up.",
                [("Grep", {"pattern": pattern, "output_mode": "content", "-n": True, "head_limit": 20, "-i": True})])
    if step in (3, 4, 5) and "Read" in available:
        found = [f for f in grep_files(turn) if files.is_file(f)]
        picks = pick(found + listed, seen | read_in_turn(turn), word, 1)
        if not picks:  # everything was read in earlier turns: re-read what this turn has not seen
            picks = pick(found + listed, read_in_turn(turn), word, 1)
        if picks:
            return f"`{picks[0]}` looks relevant; reading it.", [files.read(picks[0])]
    return answer(turn, hints), []


__all__ = ["biggest", "data_flow", "explore", "grep_flow", "overview", "used"]
