"""Paths the prompt names: the demo reads those that are here, and looks for those that are not.

Why: the README's "what does src/app.py do?" (no such file in most repositories) once sent the demo reading
three unrelated files, never saying the file does not exist. A model that follows the prompt reads a named
file that is here; for one that is not, it looks (a Glob for its name anywhere), says that it does not
exist and offers the closest paths; when a file of that very name is elsewhere, it reads that one and says
which. Its answer counts what it did.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.core.formats import plural
from tui_agent.core.providers.demo_answers import Words, answer, names
from tui_agent.core.providers.demo_files import DemoFiles
from tui_agent.core.providers.demo_prompts import keyword, looks_like_a_file, path_tokens
from tui_agent.core.providers.demo_turn import Turn
from tui_agent.core.tools.glob import NO_FILES

Step = tuple[str, list[tuple[str, dict[str, Any]]]]
CLOSEST = 5


@dataclass(frozen=True)
class Named:
    """The paths a prompt names: files that are here, and paths that are neither a file nor a folder."""

    here: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.here or self.missing)


def named_paths(prompt: str, files: DemoFiles) -> Named:
    here, missing = [], []
    for path in path_tokens(prompt):
        if files.is_file(path):
            here.append(path)
        elif not files.exists(path) and looks_like_a_file(path):
            missing.append(path)
    return Named(here[:3], missing[:2])


def search_for(path: str, files: DemoFiles) -> list[dict[str, Any]]:
    """The Globs that look for a missing path: its name anywhere ("src/app.py" → `**/*app*`), and what
    its folder holds when the folder is here (`src/*`: a misspelt name's neighbours)."""
    stem = Path(path).stem or Path(path).name
    parent = str(Path(path).parent)
    return [{"pattern": f"**/*{stem}*"}] + ([{"pattern": f"{parent}/*"}] if parent != "." and files.exists(parent) else [])


def found_for(turn: Turn, path: str, files: DemoFiles) -> list[str] | None:
    """What the Globs for `path` listed (None: not looked for yet), closest first: the same file name, then
    the paths most like the one asked for."""
    patterns = [glob["pattern"] for glob in search_for(path, files)]
    listed = [text for name, i, text, _e in turn.calls if name == "Glob" and i.get("pattern") in patterns]
    if not listed:
        return None
    hits = {line.strip() for text in listed for line in text.splitlines()
            if line.strip() and line.strip() != NO_FILES and not line.startswith(("(", "…", "["))}
    name = Path(path).name

    def rank(hit: str) -> tuple[int, float, str]:
        return (Path(hit).name != name, -difflib.SequenceMatcher(None, path, hit).ratio(), hit)

    return sorted((hit for hit in hits if files.is_file(hit)), key=rank)


def where(path: str) -> str:
    """A bare name is looked for at the top level ("no `app.py` at the top level"), a path in the repository."""
    return "in this repository" if "/" in path else "at the top level"


def same_name(path: str, found: list[str]) -> str | None:
    """The file of the very name asked for, elsewhere (the closest such path), if any."""
    return next((hit for hit in found if Path(hit).name == Path(path).name), None)


def named_step(turn: Turn, named: Named, files: DemoFiles, hints: Words) -> Step:
    """Look for the missing paths and read the named files (one round), read a same-name file found
    elsewhere, search the keyword when only present files were named, then answer."""
    read = {str(i.get("file_path")) for name, i, _t, _e in turn.calls if name == "Read"}  # held: a placeholder is no read
    unlooked = [p for p in named.missing if found_for(turn, p, files) is None]
    unread = [p for p in named.here if p not in read]
    if unlooked or unread:
        said = [f"There is no `{p}` {where(p)}; I'll look for a file named like it." for p in unlooked]
        if unread:
            said.append(f"Reading {names(unread)}, as you asked.")
        looks = [("Glob", glob) for p in unlooked for glob in search_for(p, files)]
        return " ".join(said), looks + [files.read(p) for p in unread]
    instead = [(p, same_name(p, found_for(turn, p, files) or [])) for p in named.missing]
    to_read = [(p, hit) for p, hit in instead if hit is not None and hit not in read]
    if to_read:
        instead_said = " ".join(f"There is no `{p}` {where(p)}; the file of that name is `{hit}`, so I'm reading "
                                "that one." for p, hit in to_read)
        return instead_said, [files.read(hit) for _p, hit in to_read]
    word = keyword(" ".join(w for w in turn.prompt.split() if w.strip(".,;:!?'\"()`") not in named.here))
    if named.here and not named.missing and word and not any(name == "Grep" for name, *_ in turn.calls):
        return (f"Now I'll look for `{word}` in the repository.",
                [("Grep", {"pattern": word, "output_mode": "content", "-n": True, "head_limit": 20, "-i": True})])
    return answer(turn, hints, lead=missing_lines(turn, named, files)), []


def missing_lines(turn: Turn, named: Named, files: DemoFiles) -> list[str]:
    """"There is no `src/app.py` in this repository…": what was looked for and what came closest."""
    lines: list[str] = []
    for path in named.missing:
        found = found_for(turn, path, files) or []
        globs = search_for(path, files)
        looked = ("a Glob for " if len(globs) == 1 else "Globs for ") + names([glob["pattern"] for glob in globs])
        hit = same_name(path, found)
        if hit is not None:
            lines.append(f"There is no `{path}` {where(path)}. {looked[0].upper() + looked[1:]} found "
                         f"{plural(len(found), 'file')}; the file named `{Path(path).name}` is `{hit}`, so I read "
                         "that one instead.")
        elif found:
            lines.append(f"There is no `{path}` {where(path)}, and no file here is named `{Path(path).name}`. "
                         f"The closest files ({looked}): {names(found[:CLOSEST])}. Name one and I'll "
                         "read it.")
        else:
            lines.append(f"There is no `{path}` {where(path)}, and no file's name is like it ({looked} found "
                         "none).")
        lines.append("")
    return lines[:-1] if lines else lines


__all__ = ["Named", "found_for", "missing_lines", "named_paths", "named_step", "search_for"]
