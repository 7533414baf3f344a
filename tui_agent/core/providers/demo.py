"""The demo model: an offline, deterministic "model" that drives the agent like a real one.

It is the embedded default when no API key is configured, so a new user sees the app work at once.
Each prompt it looks around (Glob), reads a few files (Read, two at a time), searches (Grep), reads
what the search found, and answers in Markdown naming what it read, streaming word by word. That is
six tool rounds per prompt: one request over a repository with large files already makes compaction
truncate older results, and a session of three prompts grows past 40 messages, so old turns drop.

It follows the prompt well enough for a first try: paths named in the prompt are read first; "biggest"
or "largest" files are ranked by their real sizes (a Grep line count over the repository, one
`path:count` per file); a greeting or "what did we do so far?" is answered from the conversation it is
sent, without exploring. Text quoted from files or prompts is Markdown-escaped (`__name__` stays
`__name__`, not a bold "name").

It decides only from what it is sent (the compacted outbound copy, the system prompt and the tool list),
like a real model; the workspace path is used only to skip paths that are not readable files.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

from tui_agent.core.compaction.summary import extractive_summary, is_summary_request
from tui_agent.core.messages import Message, is_user_text, result_text, text_of, tool_results, tool_uses
from tui_agent.core.providers.base import ModelRequest, Provider, ProviderEvent, StreamDone, StreamText
from tui_agent.core.providers.scripted import words

# Said once, in the first reply. It must agree with the start-up warning when a key is missing (which
# names the same variables): `--model claude-…` alone does not reach Claude without a key.
DEMO_NOTICE = (
    "*Demo model (offline): no real model is called. Set `ANTHROPIC_API_KEY` for Claude, or "
    "`OPENAI_API_KEY` for an OpenAI-compatible endpoint, and start again.*\n\n"
)
CHOSEN_NOTICE = "*Demo model (offline): chosen with `--model demo`, no real model is called.*\n\n"
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
_LINE_NUMBER = re.compile(r"^\s*\d+\t")
_CUT_MARK = "…[tool_result cut"
_GREETING = re.compile(r"^\W*(hi|hello|hey|hallo|howdy|yo|thanks|thank you|good (morning|afternoon|evening))"
                       r"(\s+there)?\W*$", re.IGNORECASE)
_RECAP = re.compile(r"\b(what (did|have) we (do|done|talk(ed)? about)|so far|recap|remind me what|"
                    r"summari[sz]e (our|the|this) (conversation|session|chat))\b", re.IGNORECASE)
_BIGGEST = re.compile(r"\b(biggest|largest|longest|heaviest|bulkiest)\b", re.IGNORECASE)
_PATH_TOKEN = re.compile(r"[\w./-]*[\w-]\.[A-Za-z0-9]{1,8}|[\w.-]+/[\w./-]+")
_MD_SPECIAL = re.compile(r"([\\`*\[<>])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")  # a lone ] is never markup


@dataclass
class _Turn:
    """What the demo can see of the current prompt's turn in the request it was sent."""

    prompt: str
    rounds: int
    calls: list[tuple[str, dict[str, Any], str, bool]]  # (tool name, input, result text, is_error)


@dataclass
class DemoProvider(Provider):
    model: str = "demo"
    name: str = "demo"
    context_window: int = 16_000  # small on purpose: the meter moves and compaction shows in a demo
    max_output_tokens: int = 4_096
    workspace: Path | None = None
    delay: float = 0.0  # seconds between streamed words (the TUI uses a little, tests none)
    chosen: bool = False  # picked with --model demo (rather than for want of a key): the notice says so
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
        turn = _current_turn(request.messages)
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
    def _decide(self, turn: _Turn, request: ModelRequest, available: set[str]) -> tuple[str, list[tuple[str, dict]]]:
        if _GREETING.match(turn.prompt) or _RECAP.search(turn.prompt):
            return _from_conversation(turn.prompt, request.messages), []  # no exploring: it is all in the talk
        named = self._named_files(turn.prompt)
        if named and "Context" in available:
            recalled = _recall_step(turn, named, request.messages)
            if recalled is not None:
                return recalled
        if named and "Read" in available:
            return self._follow_named(turn, named)
        if _BIGGEST.search(turn.prompt) and {"Glob", "Grep", "Read"} <= available:
            return self._biggest(turn)
        listed = self._listed_files(turn)
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
            intro = "I'll start by looking at how the repository is laid out."
            if "AGENTS.md" in request.system or "CLAUDE.md" in request.system:
                intro = "I have the project's instructions (AGENTS.md) in mind. " + intro
            return intro, [("Glob", {"pattern": "**/*"})]
        if step == 1 and "Read" in available:
            picks = _pick(listed, seen, keyword, 2)
            if len(picks) < 2:
                picks += _pick([f for f in listed if f not in picks], set(picks), keyword, 2 - len(picks))
            if picks:
                names = " and ".join(f"`{p}`" for p in picks)
                return f"Let me read {names} first.", [("Read", {"file_path": p}) for p in picks]
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
                return f"`{picks[0]}` looks relevant; reading it.", [("Read", {"file_path": picks[0]})]
        return _answer(turn, keyword), []

    # -- prompts that say what they want -------------------------------------------------------
    def _named_files(self, prompt: str) -> list[str]:
        """Paths the prompt names (`src/app.py`, "README.md"), in order, that are files here."""
        found: list[str] = []
        for token in _PATH_TOKEN.findall(prompt):
            path = token.strip(".,;:!?'\"()`").removeprefix("./")
            if path and path not in found and self._is_file(path):
                found.append(path)
        return found[:3]

    def _follow_named(self, turn: _Turn, named: list[str]) -> tuple[str, list[tuple[str, dict]]]:
        """Read the named files (once), search them for the prompt's keyword, then answer."""
        keyword = _keyword(" ".join(w for w in turn.prompt.split() if w.strip(".,;:!?'\"()`") not in named))
        unread = [p for p in named if p not in _read_in_turn(turn)]
        if unread:
            names = " and ".join(f"`{p}`" for p in unread)
            return f"Reading {names}, as you asked.", [("Read", {"file_path": p}) for p in unread]
        if keyword and not _used(turn, "Grep"):
            return (f"Now I'll look for `{keyword}` in the repository.",
                    [("Grep", {"pattern": keyword, "output_mode": "content", "-n": True, "head_limit": 20, "-i": True})])
        return _answer(turn, keyword), []

    def _biggest(self, turn: _Turn) -> tuple[str, list[tuple[str, dict]]]:
        """List the files, count their lines (their real size, from the tools), read the two largest."""
        if not _used(turn, "Glob"):
            return "I'll list the files first, then measure them.", [("Glob", {"pattern": "**/*"})]
        sizes = _line_counts(turn)
        if not _used(turn, "Grep"):
            return ("Now I'll count the lines of every file (a Grep for `^` in count mode), to compare real sizes.",
                    [("Grep", {"pattern": "^", "output_mode": "count", "head_limit": 0})])
        biggest = [p for p, _n in sizes if Path(p).suffix.lower() not in _SKIP_SUFFIXES and self._is_file(p)][:2]
        unread = [p for p in biggest if p not in _read_in_turn(turn)]
        if unread:
            names = " and ".join(f"`{p}`" for p in unread)
            return f"The largest are {names}; reading them.", [("Read", {"file_path": p}) for p in unread]
        return _biggest_answer(turn, sizes), []

    def _listed_files(self, turn: _Turn) -> list[str]:
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

    def _is_file(self, path: str) -> bool:
        if self.workspace is None:
            return bool(Path(path).suffix) and " " not in path
        return (self.workspace / path).is_file()


def _current_turn(messages: list[Message]) -> _Turn:
    start = max((i for i, m in enumerate(messages) if is_user_text(m)), default=0)
    prompt = text_of(messages[start]) if messages else ""
    uses: dict[str, tuple[str, dict]] = {}
    calls: list[tuple[str, dict[str, Any], str, bool]] = []
    rounds = 0
    for message in messages[start + 1:]:
        if message.get("role") == "assistant":
            rounds += 1
            for use in tool_uses(message):
                uses[use["id"]] = (use["name"], use.get("input", {}))
        for result in tool_results(message):
            name, tool_input = uses.get(result.get("tool_use_id", ""), ("?", {}))
            calls.append((name, tool_input, result_text(result), bool(result.get("is_error"))))
    return _Turn(prompt, rounds, calls)


def _whole_reads(messages: list[Message]) -> set[str]:
    """Paths whose Read result this request still carries whole (not cut, not a placeholder)."""
    results = {str(r.get("tool_use_id")): result_text(r) for m in messages for r in tool_results(m)}
    whole = set()
    for message in messages:
        for use in tool_uses(message):
            text = results.get(str(use.get("id")))
            if use.get("name") == "Read" and text is not None and _CUT_MARK not in text and not text.startswith("[Read"):
                whole.add(str(use.get("input", {}).get("file_path")))
    return whole


def _recall_step(turn: _Turn, named: list[str], messages: list[Message]) -> tuple[str, list[tuple[str, dict]]] | None:
    """A named file that was read earlier but left the request (the ledger or a placeholder still names
    it): recall it with the Context tool instead of reading it again, then answer from the recall."""
    if turn.prompt.startswith("[Context ledger"):  # the prompt itself left the request: not a question to recall for
        return None
    recalls = [(i.get("search"), t, e) for name, i, t, e in turn.calls if name == "Context"]
    if recalls:
        ok = [(path, text) for path, text, error in recalls if not error]
        return (_recalled_answer(ok), []) if ok else None  # nothing came back: read it again instead
    whole = _whole_reads(messages)
    # Read before: a Read of it still stands in the request (its result cut or masked), or the ledger of
    # the dropped part lists it. A path only listed by Glob was never read: it is read, not recalled.
    ledgers = "\n".join(text_of(m) for m in messages[:-1] if text_of(m).startswith("[Context ledger"))
    earlier = _already_read(messages) | {p for p in named if p in ledgers}
    lost = [p for p in named if p in earlier and p not in whole and p not in _read_in_turn(turn)]
    if not lost:
        return None
    return (f"`{lost[0]}` was read earlier but is no longer whole in my context; recalling it.",
            [("Context", {"action": "recall", "search": lost[0]})])


def _recalled_answer(recalled: list[tuple[str, str]]) -> str:
    lines = []
    for path, text in recalled:
        head = f"[result of Read({path})]"
        part = text.split(head, 1)[1] if head in text else text  # the file's own result, not its neighbours'
        part = re.split(r"\n(?:\[result of |--- #)", part, maxsplit=1)[0]
        body = [l for l in (_LINE_NUMBER.sub("", raw) for raw in part.splitlines() if _LINE_NUMBER.match(raw)) if l.strip()]
        lines.append(f"`{path}` had left my context (compaction took it out), so I recalled it with the Context "
                     f"tool instead of reading it again. It said:")
        lines.append("")
        lines += [f"> {md_escape(line[:120])}" for line in body[:6]] or ["> (the recall held no file lines)"]
        lines.append("")
    lines.append("The panel shows the recall and what it cost.")
    return "\n".join(lines)


def _already_read(messages: list[Message]) -> set[str]:
    return {
        str(use.get("input", {}).get("file_path"))
        for m in messages
        for use in tool_uses(m)
        if use.get("name") == "Read"
    }


def _read_in_turn(turn: _Turn) -> set[str]:
    return {str(i.get("file_path")) for name, i, _t, _e in turn.calls if name == "Read"}


def _used(turn: _Turn, tool: str) -> bool:
    return any(name == tool for name, *_ in turn.calls)


def _keyword(prompt: str) -> str:
    candidates = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", prompt) if w.lower() not in _STOPWORDS]
    return max(candidates, key=len) if candidates else ""


def _skills(system: str) -> list[str]:
    if "## Available Skills" not in system:
        return []
    section = system.split("## Available Skills", 1)[1]
    return re.findall(r"^- ([\w.-]+)", section, flags=re.MULTILINE)


def _grep_files(turn: _Turn) -> list[str]:
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


def _first_line(text: str) -> str:
    for raw in text.splitlines():
        line = _LINE_NUMBER.sub("", raw).strip().strip("#").strip().strip('"').strip()
        if len(line) > 3 and not line.startswith(("---", "```", "<", "import ", "from ", "#!", "…[", "[")):
            return line[:100]
    return ""


def md_escape(text: str) -> str:
    """Quoted text as literal Markdown: `__name__`, `*args` and `[x]` stay as written. An underscore
    inside a word (`handler_0`) cannot start emphasis and is left alone, so plain output stays clean."""
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), text)


def _line_counts(turn: _Turn) -> list[tuple[str, int]]:
    """(path, lines) from this turn's Grep count results, largest first (ties by path: deterministic)."""
    counts: dict[str, int] = {}
    for name, tool_input, text, is_error in turn.calls:
        if name != "Grep" or is_error or tool_input.get("output_mode") != "count":
            continue
        for line in text.splitlines():
            path, sep, number = line.rpartition(":")
            if sep and path and number.strip().isdigit():
                counts[path.strip()] = int(number)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def _biggest_answer(turn: _Turn, sizes: list[tuple[str, int]]) -> str:
    if not sizes:
        return "I could not measure the files here (the line count found nothing readable)."
    lines = ["The largest files by line count (counted with Grep, so these are real sizes):", ""]
    for path, count in sizes[:5]:
        lines.append(f"- `{path}`: {count:,} lines")
    reads = [(i.get("file_path"), t) for name, i, t, e in turn.calls if name == "Read" and not e]
    if reads:
        lines += ["", "What the largest ones hold:"]
        for path, text in reads:
            first = _first_line(text)
            lines.append(f"- `{path}`" + (f": {md_escape(first)}" if first else ""))
    lines += ["", "Large results like these are what the budget panel cuts (✂) in later calls."]
    return "\n".join(lines)


def _from_conversation(prompt: str, messages: list[Message]) -> str:
    """A greeting or "what did we do so far?": answered from the messages this call was sent."""
    prompts = [text_of(m) for m in messages if is_user_text(m)][:-1]  # the last one is this prompt
    files = list(dict.fromkeys(str(u.get("input", {}).get("file_path")) for m in messages for u in tool_uses(m)
                               if u.get("name") == "Read"))
    if _GREETING.match(prompt) and not _RECAP.search(prompt):
        lead = "Hello! I'm the offline demo model."
        if not prompts:
            return (f"{lead} Ask me about the code here, for example “what does the README say?” or “which "
                    "are the biggest files?”, and watch the budget panel as I read files.")
        return f"{lead} We have talked about {len(prompts)} thing{'s' if len(prompts) != 1 else ''} so far; ask on."
    if not prompts:
        return "Nothing yet: this is the first prompt of the conversation. Ask me about the code here."
    lines = [f"From what is still in my context, you asked {len(prompts)} thing{'s' if len(prompts) != 1 else ''}:", ""]
    lines += [f"{n}. “{md_escape(' '.join(p.split())[:100])}”" for n, p in enumerate(prompts, start=1)]
    if files:
        shown = ", ".join(f"`{f}`" for f in files[:8]) + (f" and {len(files) - 8} more" if len(files) > 8 else "")
        lines += ["", f"I read {shown}."]
    lines += ["", "Older turns that compaction dropped are no longer sent to me; the budget panel still shows them."]
    return "\n".join(lines)


def _answer(turn: _Turn, keyword: str) -> str:
    reads = [(i.get("file_path"), t, e) for name, i, t, e in turn.calls if name == "Read"]
    ok = [(p, t) for p, t, e in reads if not e]
    lines = ["Here is what I found."]
    if ok:
        lines.append("")
        lines.append(f"I read {len(ok)} file{'s' if len(ok) != 1 else ''}:")
        for path, text in ok:
            numbered = [l for l in text.splitlines() if _LINE_NUMBER.match(l)]
            size = f"{len(numbered)} lines shown" if numbered else f"{len(text):,} chars"
            first = _first_line(text)
            lines.append(f"- `{path}` ({size})" + (f": {md_escape(first)}" if first else ""))
    listed = sum(1 for name, *_ in turn.calls if name == "Glob")
    hits = [(i.get("pattern", ""), t) for name, i, t, e in turn.calls if name == "Grep" and not e]
    if hits:
        pattern, found = hits[0]
        count = len([l for l in found.splitlines() if re.match(r"^[^\s:]+:\d+:", l)])
        lines.append("")
        lines.append(f"Searching for `{pattern}` gave {count} matching line{'s' if count != 1 else ''}.")
    if not ok and not listed:
        lines.append("")
        lines.append("I could not find readable files here.")
    lines.append("")
    lines.append("Ask me about any of these files, or open the context panel to see what I still remember.")
    return "\n".join(lines)


_DEMO_ID = re.compile(r"^toolu_demo_(\d+)_\d+$")


def _highest_demo_call(messages: list[Message]) -> int:
    highest = 0
    for message in messages:
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            match = _DEMO_ID.match(str(block.get("id", ""))) if isinstance(block, dict) else None
            if match:
                highest = max(highest, int(match.group(1)))
    return highest
