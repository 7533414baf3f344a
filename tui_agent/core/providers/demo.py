"""The demo model: an offline, deterministic "model" that drives the agent like a real one.

It is the embedded default when no API key is configured, so a new user sees the app work at once.
A question about the code gets a look around (Glob), two files read at once, a search (Grep) and a few
reads of what it found, then an answer in Markdown naming what it read, streamed word by word. Prompts
that say what they want get just that: "what is in this repo?" (the listing and the README: three
calls), "grep for X and Y" (one search per term), named paths (read first), "biggest" files (ranked by
a Grep line count), a greeting or "what did we do so far?" (from the conversation, no tools).

It decides only from what it is sent (the compacted outbound copy, the system prompt and the tool list),
like a real model, and answers the newest prompt the user typed, never the recap compaction put in place
of older turns (`demo_turn`). The workspace path is used only to skip paths that are not readable files.

Its window and policy (`demo_policy`) are sized so that every compaction tier shows within a few prompts
on a real repository (cut, mask, a drop that keeps the head, the summary) while the prompt being worked
on always stays in the request.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.summary import extractive_summary, is_summary_request
from tui_agent.core.formats import plural
from tui_agent.core.messages import Message, tool_uses
from tui_agent.core.providers.base import ModelRequest, Provider, ProviderEvent, StreamDone, StreamText
from tui_agent.core.providers.demo_answers import (
    GREETING,
    HEADLESS_WORDS,
    RECAP,
    TUI_WORDS,
    Words,
    answer,
    biggest_answer,
    folder_note,
    from_conversation,
    grep_answer,
    md_escape,
)
from tui_agent.core.providers.demo_recall import recall_step
from tui_agent.core.providers.demo_turn import Turn, current_turn, earlier_prompts, line_counts, still_held
from tui_agent.core.providers.scripted import words

__all__ = ["DemoProvider", "demo_policy", "md_escape", "DEMO_NOTICE", "CHOSEN_NOTICE"]

# Said once, in the first reply. It must agree with the start-up warning when a key is missing (which
# names the same variables): `--model claude-…` alone does not reach Claude without a key.
DEMO_NOTICE = (
    "*Demo model (offline): no real model is called. Set `ANTHROPIC_API_KEY` for Claude, or "
    "`OPENAI_API_KEY` for an OpenAI-compatible endpoint, and start again.*\n\n"
)
CHOSEN_NOTICE = "*Demo model (offline): chosen with `--model demo`, no real model is called.*\n\n"
DEMO_CONTEXT_WINDOW = 24_000  # small on purpose: the meter moves and every tier shows in a demo
DEMO_OUTPUT_TOKENS = 4_096
READ_SHARE = 8  # one Read takes at most about an eighth of the window: a turn of reads stays in it
READ_MIN_CHARS = 16_000  # files up to this size are always read whole (a window this small is a test's)
READ_LINE_CHARS = 60  # a typical source line, to turn that share into a line limit
HEAD_LINES = 60  # a look at what a file is (the overview's README, the biggest files): its head, as a model pages


def demo_policy() -> CompactPolicy:
    """The demo's marks, as fractions of its (small) window, so they scale with `--context-window`.

    The low mark sits well above the base (system prompt and tools, about 4.6k tokens here), so a drop
    keeps a head, a recap and the turn in progress; the masked results' protected tail (at most 4k, and
    at each event no more than half of what the drop keeps: `ranking.mask_protection`) leaves room for a
    turn's older results to be masked before its prompt would have to go; the summary tier is on (extractive,
    no model needed). Cut, mask, drop and summary all show by the third or fourth prompt here. The low mark
    is 0.4 (at 0.5 the masks alone reached it: no drop within five prompts); the rest is compaction 3's
    (compaction 4 keeps little but the agent's writes: a 20k window's tour would show no drop)."""
    return CompactPolicy(high_water=0.65, low_water=0.4, keep_head=0.06, mask_protect_tokens=4_000, summary=True,
                         keep_for_use_share=0.25, keep_recurring_share=0.0, cut_keep_chars=2000)


_STOPWORDS = {
    "what", "which", "where", "there", "this", "that", "these", "those", "with", "from", "about", "does",
    "into", "repo", "repository", "code", "file", "files", "have", "show", "tell", "explain", "please",
    "project", "work", "works", "could", "would", "should", "their", "them", "they", "your", "some",
    "look", "find", "here", "in", "is", "the", "and", "how", "why", "are",
}
_SKIP_SUFFIXES = {
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".pdf", ".zip", ".gz", ".tar", ".whl", ".so", ".pyc",
    ".lock", ".svg", ".woff", ".woff2", ".ttf", ".bin", ".db", ".sqlite", ".jsonl",
}
_PREFERRED = ("readme", "agents.md", "claude.md", "pyproject.toml", "package.json", "cargo.toml", "go.mod")
_BIGGEST = re.compile(r"\b(biggest|largest|longest|heaviest|bulkiest)\b", re.IGNORECASE)
_OVERVIEW = re.compile(r"\b(what('s| is) (in )?(this|the) (repo|repository|project|folder|directory|codebase|"
                       r"workspace)|overview|give me a tour|what is here)\b", re.IGNORECASE)
_GREP_ASK = re.compile(r"^\W*(?:please\s+)?(?:grep(?:\s+for)?|search\s+for|look\s+for|find\s+(?:all\s+)?(?:the\s+)?"
                       r"(?:occurrences|uses|mentions)\s+of)\s+(?P<terms>.+?)"
                       r"(?:\s+(?:in\s+(?:the|this)\s+(?:repo|repository|project|code(?:base)?)|here|everywhere)"
                       r"|\s+in\s+(?P<path>[\w./-]+))?\W*$", re.IGNORECASE | re.DOTALL)
_TERM_SPLIT = re.compile(r"\s*(?:,|&|\band\b|\bor\b)\s*", re.IGNORECASE)
_PATH_TOKEN = re.compile(r"[\w./-]*[\w-]\.[A-Za-z0-9]{1,8}|[\w.-]+/[\w./-]+")


@dataclass
class DemoProvider(Provider):
    model: str = "demo"
    name: str = "demo"
    context_window: int = DEMO_CONTEXT_WINDOW
    max_output_tokens: int = DEMO_OUTPUT_TOKENS
    workspace: Path | None = None
    delay: float = 0.0  # seconds between streamed words (the TUI uses a little, tests none)
    chosen: bool = False  # picked with --model demo (rather than for want of a key): the notice says so
    headless: bool = False  # `-p`: answers point at flags and TRACE=1, not at the panel
    _calls: int = field(default=0, repr=False)
    _announced: bool = field(default=False, repr=False)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        # Continue the numbering of the ids already in the conversation: a resumed session (a new
        # process) must not repeat a tool_use id, which the API would reject.
        self._calls = max(self._calls, _highest_demo_call(request.messages)) + 1
        if is_summary_request(request.messages):  # compaction's summary tier: an extractive summary
            summary = extractive_summary(request.messages)
            yield StreamDone({"role": "assistant", "content": [{"type": "text", "text": summary}]}, "end_turn", None)
            return
        turn = still_held(current_turn(request.messages))  # a placeholder is not content: fetch it again
        available = {tool["name"] for tool in request.tools}
        text, uses = self._decide(turn, request, available)
        if not self._announced:
            self._announced = True
            text = (CHOSEN_NOTICE if self.chosen else DEMO_NOTICE) + text
        for chunk in words(text):
            await asyncio.sleep(self.delay)
            yield StreamText(chunk)
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for k, (name, tool_input) in enumerate(uses, start=1):
            content.append({"type": "tool_use", "id": f"toolu_demo_{self._calls:03d}_{k}", "name": name,
                            "input": tool_input})
        message: Message = {"role": "assistant", "content": content}
        yield StreamDone(message, "tool_use" if uses else "end_turn", None)

    # -- the "policy" ----------------------------------------------------------------------------
    def _decide(self, turn: Turn, request: ModelRequest, available: set[str]) -> tuple[str, list[tuple[str, dict]]]:
        hints = HEADLESS_WORDS if self.headless else TUI_WORDS
        if GREETING.match(turn.prompt) or RECAP.search(turn.prompt):  # no exploring: it is all in the talk
            return from_conversation(turn.prompt, earlier_prompts(request.messages),
                                     _files_read(request.messages), hints), []
        terms, where = _grep_ask(turn.prompt)
        if terms and "Grep" in available:
            if not _used(turn, "Grep"):
                names = " and ".join(f"`{md_escape(t)}`" for t in terms)
                return (f"Searching for {names}" + (f" in `{where}`." if where else "."),
                        [("Grep", _grep_input(t, where)) for t in terms])
            return grep_answer(turn, [(t, _grep_input(t)["pattern"]) for t in terms], hints), []
        named = self._named_files(turn.prompt)
        if named and "Context" in available:
            recalled = recall_step(turn, named, request.messages)
            if recalled is not None:
                return recalled
        if named and "Read" in available:
            return self._follow_named(turn, named, hints)
        if _BIGGEST.search(turn.prompt) and {"Glob", "Grep", "Read"} <= available:
            return self._biggest(turn, hints)
        listed = self._listed_files(turn)
        if _OVERVIEW.search(turn.prompt) and {"Glob", "Read"} <= available:
            return self._overview(turn, listed, hints, request.system, available)
        seen = _already_read(request.messages)
        keyword = _keyword(turn.prompt)
        skills = _skills(request.system)
        step = turn.rounds
        invoked = re.match(r"^/([\w.-]+)\s*(.*)$", turn.prompt.strip(), flags=re.DOTALL)
        if invoked and invoked.group(1) in skills and "Skill" in available:
            # `/<skill> args`: load the skill first, as the system prompt asks, then explore as usual.
            if step == 0:
                skill_input = {"skill": invoked.group(1)}
                if invoked.group(2).strip():
                    skill_input["args"] = invoked.group(2).strip()
                return f"Loading the `{invoked.group(1)}` skill first.", [("Skill", skill_input)]
            step -= 1
            skills = []
        if step == 0 and "Glob" in available:
            return _intro(request.system, "I'll start by looking at how the repository is laid out."), [
                ("Glob", {"pattern": "**/*"})]
        if step == 1 and "Read" in available:
            picks = _pick(listed, seen, keyword, 2)
            if len(picks) < 2:
                picks += _pick([f for f in listed if f not in picks], set(picks), keyword, 2 - len(picks))
            if picks:
                names = " and ".join(f"`{p}`" for p in picks)
                return f"Let me read {names} first.", [self._read(p) for p in picks]
        if step == 2 and skills and "Skill" in available and not _used(turn, "Skill"):
            return f"There is a `{skills[0]}` skill for this project; let me load it.", [("Skill", {"skill": skills[0]})]
        if step in (2, 3) and "Grep" in available and not _used(turn, "Grep"):
            pattern = keyword or "TODO|FIXME|def |class |function "
            return (f"Now I'll search for `{pattern}` to see where it comes up.",
                    [("Grep", {"pattern": pattern, "output_mode": "content", "-n": True, "head_limit": 20, "-i": True})])
        if step in (3, 4, 5) and "Read" in available:
            found = [f for f in _grep_files(turn) if self._is_file(f)]
            picks = _pick(found + listed, seen | _read_in_turn(turn), keyword, 1)
            if not picks:  # everything was read in earlier turns: re-read what this turn has not seen
                picks = _pick(found + listed, _read_in_turn(turn), keyword, 1)
            if picks:
                return f"`{picks[0]}` looks relevant; reading it.", [self._read(picks[0])]
        return answer(turn, hints), []

    # -- prompts that say what they want -------------------------------------------------------
    def _named_files(self, prompt: str) -> list[str]:
        """Paths the prompt names (`src/app.py`, "README.md"), in order, that are files here."""
        found: list[str] = []
        for token in _PATH_TOKEN.findall(prompt):
            path = token.strip(".,;:!?'\"()`").removeprefix("./")
            if path and path not in found and self._is_file(path):
                found.append(path)
        return found[:3]

    def _follow_named(self, turn: Turn, named: list[str], hints: Words) -> tuple[str, list[tuple[str, dict]]]:
        """Read the named files (once), search them for the prompt's keyword, then answer."""
        keyword = _keyword(" ".join(w for w in turn.prompt.split() if w.strip(".,;:!?'\"()`") not in named))
        unread = [p for p in named if p not in _read_in_turn(turn)]
        if unread:
            names = " and ".join(f"`{p}`" for p in unread)
            return f"Reading {names}, as you asked.", [self._read(p) for p in unread]
        if keyword and not _used(turn, "Grep"):
            return (f"Now I'll look for `{keyword}` in the repository.",
                    [("Grep", {"pattern": keyword, "output_mode": "content", "-n": True, "head_limit": 20, "-i": True})])
        return answer(turn, hints), []

    def _overview(self, turn: Turn, listed: list[str], hints: Words, system: str,
                  available: set[str]) -> tuple[str, list[tuple[str, dict]]]:
        """"What is in this repo?": the top level and every file's line count at once (the layout: folders
        with their sizes, then loose files), the README (or manifest), then the answer."""
        if not _used(turn, "Glob"):
            uses: list[tuple[str, dict[str, Any]]] = [("Glob", {"pattern": "*"})]
            if "Grep" in available and not _used(turn, "Grep"):
                uses.append(("Grep", {"pattern": "^", "output_mode": "count", "head_limit": 0}))
                return _intro(system, "I'll list the top level and count every file's lines, folder by folder."), uses
            return _intro(system, "I'll list the top level first."), uses
        if not _used(turn, "Read"):
            known = {"agents.md", "claude.md"} if "AGENTS.md" in system or "CLAUDE.md" in system else set()
            fresh = [p for p in listed if p.lower() not in known]  # the instructions are in the system prompt
            picks = [p for p in _pick(fresh, set(), "", 2) if Path(p).name.lower().startswith(_PREFERRED)]
            picks = picks or _pick(fresh, set(), "", 1)
            if picks:
                names = " and ".join(f"`{p}`" for p in picks)
                layout = folder_note(turn)
                return ((f"The folders: {layout}. " if layout else "")
                        + f"Reading the head of {names} for what the project says of itself.",
                        [self._read(p, HEAD_LINES) for p in picks])
        return answer(turn, hints), []

    def _biggest(self, turn: Turn, hints: Words) -> tuple[str, list[tuple[str, dict]]]:
        """List the files, count their lines (their real size, from the tools), read the two largest."""
        sizes = line_counts(turn)  # from the counts, or from what it wrote down of them
        if not sizes and not _used(turn, "Glob"):
            return "I'll list the files first, then measure them.", [("Glob", {"pattern": "**/*"})]
        if not sizes and not _used(turn, "Grep"):
            return ("Now I'll count the lines of every file (a Grep for `^` in count mode), to compare real sizes.",
                    [("Grep", {"pattern": "^", "output_mode": "count", "head_limit": 0})])
        biggest = [p for p, _n in sizes if Path(p).suffix.lower() not in _SKIP_SUFFIXES and self._is_file(p)][:2]
        unread = [p for p in biggest if p not in _read_in_turn(turn)]
        if unread:
            ranking = ", ".join(f"`{p}` ({plural(n, 'line')})" for p, n in sizes[:5])
            return (f"By line count the largest are {ranking}; reading the heads of the two largest.",
                    [self._read(p, HEAD_LINES) for p in unread])
        return biggest_answer(turn, sizes, hints), []

    def _listed_files(self, turn: Turn) -> list[str]:
        files: list[str] = []
        for name, _input, text, is_error in turn.calls:
            if name != "Glob" or is_error:
                continue
            for line in text.splitlines():
                line = line.strip()
                if not line or line.startswith(("…", "(", "[")) or " " in line and not Path(line).suffix:
                    continue
                if self._is_file(line):
                    files.append(line)
        return files

    def _read(self, path: str, head: int | None = None) -> tuple[str, dict[str, Any]]:
        """A Read that fits the demo's small window: a file larger than an eighth of the window (in
        characters, about 4 a token; at least READ_MIN_CHARS) is read as its first lines, as a real model
        pages a long file. One huge read would otherwise overflow the window and take the prompt with it."""
        budget_chars = max(4 * max(self.context_window - self.max_output_tokens, 1) // READ_SHARE, READ_MIN_CHARS)
        tool_input: dict[str, Any] = {"file_path": path}
        try:
            size = (self.workspace / path).stat().st_size if self.workspace is not None else 0
        except OSError:
            size = 0
        if size > budget_chars:
            tool_input["limit"] = max(budget_chars // READ_LINE_CHARS, 20)
        if head is not None and size > head * READ_LINE_CHARS:
            tool_input["limit"] = min(tool_input.get("limit", head), head)
        return "Read", tool_input

    def _is_file(self, path: str) -> bool:
        if self.workspace is None:
            return bool(Path(path).suffix) and " " not in path
        return (self.workspace / path).is_file()


def _already_read(messages: list[Message]) -> set[str]:
    return {
        str(use.get("input", {}).get("file_path"))
        for m in messages
        for use in tool_uses(m)
        if use.get("name") == "Read"
    }


def _intro(system: str, text: str) -> str:
    if "AGENTS.md" in system or "CLAUDE.md" in system:
        return "I have the project's instructions (AGENTS.md) in mind. " + text
    return text


def _files_read(messages: list[Message]) -> list[str]:
    """The files read in what the demo was sent, in order, once each."""
    return list(dict.fromkeys(str(use.get("input", {}).get("file_path")) for m in messages for use in tool_uses(m)
                              if use.get("name") == "Read"))


def _grep_ask(prompt: str) -> tuple[list[str], str | None]:
    """"grep for TODO and FIXME [in src]" → (["TODO", "FIXME"], "src"); a quoted term stays whole."""
    match = _GREP_ASK.match(prompt.strip())
    if not match:
        return [], None
    text = match.group("terms")
    quoted = re.findall(r"[`'\"]([^`'\"]+)[`'\"]", text)
    terms = quoted or [t.strip(" `'\"") for t in _TERM_SPLIT.split(text)]
    return list(dict.fromkeys(t for t in terms if t))[:4], match.group("path")


def _grep_input(term: str, path: str | None = None) -> dict[str, Any]:
    """One Grep per term, literal, case-insensitive only when typed in lower case (smart case)."""
    tool_input: dict[str, Any] = {"pattern": re.escape(term), "output_mode": "content", "-n": True,
                                  "head_limit": 20, "-i": term == term.lower()}
    if path:
        tool_input["path"] = path
    return tool_input


def _read_in_turn(turn: Turn) -> set[str]:
    return {str(i.get("file_path")) for name, i, _t, _e in turn.calls if name == "Read"}


def _used(turn: Turn, tool: str) -> bool:
    return any(name == tool for name, *_ in turn.calls)


def _keyword(prompt: str) -> str:
    candidates = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", prompt) if w.lower() not in _STOPWORDS]
    return max(candidates, key=len) if candidates else ""


def _skills(system: str) -> list[str]:
    if "## Available Skills" not in system:
        return []
    section = system.split("## Available Skills", 1)[1]
    return re.findall(r"^- ([\w.-]+)", section, flags=re.MULTILINE)


def _grep_files(turn: Turn) -> list[str]:
    files: list[str] = []
    for name, _i, text, is_error in turn.calls:
        if name == "Grep" and not is_error:
            for line in text.splitlines():
                path = line.split(":", 1)[0].strip()
                if path and path not in files and Path(path).suffix:
                    files.append(path)
    return files


def _pick(candidates: list[str], seen: set[str], keyword: str, count: int) -> list[str]:
    """Prefer READMEs and manifests, then files whose path mentions the keyword, then the listing order."""
    pool = [c for c in dict.fromkeys(candidates) if c not in seen and Path(c).suffix.lower() not in _SKIP_SUFFIXES]

    def rank(path: str) -> tuple[int, int]:
        lower = path.lower()
        name = Path(lower).name
        if any(name.startswith(p) for p in _PREFERRED) and "/" not in lower:
            return (0, _PREFERRED.index(next(p for p in _PREFERRED if name.startswith(p))))
        if keyword and keyword.lower() in lower:
            return (1, 0)
        if name.startswith(".") or "/." in lower:
            return (3, 0)
        return (2, 0)

    return sorted(pool, key=rank)[:count]


_DEMO_ID = re.compile(r"^toolu_demo_(\d+)_\d+$")


def _highest_demo_call(messages: list[Message]) -> int:
    highest = 0
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            match = _DEMO_ID.match(str(block.get("id", ""))) if isinstance(block, dict) else None
            if match:
                highest = max(highest, int(match.group(1)))
    return highest
