"""The demo model's answers: Markdown built only from what its tools returned and what it was sent.

Quoted text is Markdown-escaped (`__name__` stays `__name__`, not a bold "name"). Where an answer points
at the app, it names what the face at hand has: the context panel in the TUI, flags and `TRACE=1` under
`-p` (a headless user has no panel to open).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tui_agent.core.formats import plural
from tui_agent.core.providers.demo_turn import Turn, line_counts, lost
from tui_agent.core.tools.glob import NO_FILES

LINE_NUMBER = re.compile(r"^\s*\d+\t")
LARGE_RESULT = 2_000  # characters: a result this long is one compaction may cut (the demo's cut_keep_chars)
GREETING = re.compile(r"^\W*(hi|hello|hey|hallo|howdy|yo|thanks|thank you|good (morning|afternoon|evening))"
                      r"(\s+there)?\W*$", re.IGNORECASE)
RECAP = re.compile(r"\b(what (did|have) we (do|done|talk(ed)? about)|so far|recap|remind me what|"
                   r"summari[sz]e (our|the|this) (conversation|session|chat))\b", re.IGNORECASE)
_MD_SPECIAL = re.compile(r"([\\`*\[<>])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")  # a lone ] is never markup
_MATCH_LINE = re.compile(r"^[^\s:]+:\d+:")


@dataclass(frozen=True)
class Words:
    """The pointers to the app an answer ends with, for the face the demo runs in."""

    what_is_sent: str  # where to see what the model still gets
    older_turns: str  # what happened to turns compaction dropped
    cuts: str  # where cut results show


TUI_WORDS = Words(
    "open the context panel to see what I still remember",
    "Older turns that compaction dropped are no longer sent to me; the budget panel still shows them.",
    "Large results like these are what the budget panel cuts (✂) in later calls.",
)
HEADLESS_WORDS = Words(
    "run with `--print-outbound` to see the next request exactly, or `TRACE=1` for each call's compaction",
    "Older turns that compaction dropped are no longer sent to me; the saved session keeps them "
    "(`tui-agent export`).",
    "Large results like these are cut in later calls (`TRACE=1` shows each cut).",
)


def names(paths: list[str]) -> str:
    """"`a`", "`a` and `b`", "`a`, `b` and `c`"."""
    quoted = [f"`{p}`" for p in paths]
    return ", ".join(quoted[:-1]) + f" and {quoted[-1]}" if len(quoted) > 1 else "".join(quoted)


def md_escape(text: str) -> str:
    """Quoted text as literal Markdown: `__name__`, `*args` and `[x]` stay as written. An underscore
    inside a word (`handler_0`) cannot start emphasis and is left alone, so plain output stays clean."""
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), text)


def first_line(text: str) -> str:
    for raw in text.splitlines():
        line = LINE_NUMBER.sub("", raw).strip().strip("#").strip().strip('"').strip()
        if len(line) > 3 and not line.startswith(("---", "```", "<", "import ", "from ", "#!", "…[", "[")):
            return line[:100]
    return ""


def biggest_answer(turn: Turn, sizes: list[tuple[str, int]], words: Words) -> str:
    if not sizes:
        return "I could not measure the files here (the line count found nothing readable)."
    lines = ["The largest files by line count (counted with Grep, so these are real sizes):", ""]
    for path, count in sizes[:5]:
        lines.append(f"- `{path}`: {plural(count, 'line')}")
    reads = [(str(i.get("file_path")), t) for name, i, t, e in turn.calls if name == "Read" and not e
             and not lost(name, t)]
    if reads:
        lines += ["", "What the largest ones hold:"]
        for path, text in reads:
            first = first_line(text)
            lines.append(f"- `{path}`" + (f": {md_escape(first)}" if first else ""))
    if any(len(text) > LARGE_RESULT for name, _i, text, e in turn.calls if name in ("Read", "Grep") and not e):
        lines += ["", words.cuts]  # (said of results large enough to be cut, not of a 3-line README)
    return "\n".join(lines)


def from_conversation(prompt: str, earlier: list[str], files: list[str], words: Words, compacted: str = "") -> str:
    """A greeting or "what did we do so far?": answered from the user's earlier prompts (those still sent
    and those the recap lists) and the files read in what it was sent (its reads, and the recap's list).
    `compacted`: "dropped" (a recap stands for older turns), "trimmed" (results cut or masked), or ""."""
    if GREETING.match(prompt) and not RECAP.search(prompt):
        lead = "Hello! I'm the offline demo model."
        if not earlier:
            return (f"{lead} Ask me about the code here, for example “what does the README say?” or “which "
                    "are the biggest files?”, and watch the budget as I read files.")
        return f"{lead} You have asked me {plural(len(earlier), 'thing')} before this; ask on."
    if not earlier:
        return "Nothing yet: this is the first prompt of the conversation. Ask me about the code here."
    lines = [f"You asked {plural(len(earlier), 'thing')} before this, oldest first:", ""]
    lines += [f"{n}. “{md_escape(' '.join(p.split())[:100])}”" for n, p in enumerate(earlier, start=1)]
    if files:
        shown = ", ".join(f"`{f}`" for f in files[:8]) + (f" and {len(files) - 8} more" if len(files) > 8 else "")
        lines += ["", f"I read {shown}."]
    lines += ["", {"dropped": words.older_turns,
                   "trimmed": "Every earlier turn is still sent to me; some long tool results only in part (cut or "
                              "masked by compaction)."}.get(compacted, "Nothing has been compacted away yet: every "
                                                                       "earlier turn is still sent to me whole.")]
    return "\n".join(lines)


def grep_answer(turn: Turn, terms: list[tuple[str, str]], words: Words) -> str:
    """One line per (term, pattern) searched: how many matching lines, in which files."""
    lines = ["Here is what the search found:", ""]
    for term, pattern in terms:
        found = [(i, t) for name, i, t, e in turn.calls if name == "Grep" and not e and i.get("pattern") == pattern]
        hits = [line for _i, text in found for line in text.splitlines() if _MATCH_LINE.match(line)]
        files = list(dict.fromkeys(line.split(":", 1)[0] for line in hits))
        where = (": " + ", ".join(f"`{f}`" for f in files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
                 if files else "")
        lines.append(f"- `{md_escape(term)}`: {plural(len(hits), 'matching line')}"
                     + (f" in {plural(len(files), 'file')}" if files else "") + where)
    found_any = any(line.startswith("- `") and " 0 matching lines" not in line for line in lines)
    lines += ["", f"Ask me to read any of these files, or {words.what_is_sent}." if found_any
              else f"Nothing matched; ask for another term, or {words.what_is_sent}."]
    return "\n".join(lines)


def answer(turn: Turn, words: Words, lead: list[str] | None = None, data: list[str] | None = None) -> str:
    """The answer from what the turn did: `lead` (what was asked and not found) or "Here is what I found.",
    the layout, the files read (counted as read, whether or not compaction has taken them out since),
    `data` (the data files' own section: those files are not listed twice), the search, a pointer."""
    lines = list(lead) if lead else ["Here is what I found."]
    lines += layout_lines(turn)
    listed_apart = set(re.findall(r"^- `([^`]+)`", "\n".join(data or []), flags=re.MULTILINE))
    lines += read_lines(turn, listed_apart, "Besides the data, I read" if data else "I read")
    lines += data or []
    listed = [t for name, _i, t, e in turn.calls if name == "Glob" and not e]
    hits = [(i.get("pattern", ""), t) for name, i, t, e in turn.calls
            if name == "Grep" and not e and i.get("output_mode") != "count"]
    if hits:
        pattern, found = hits[0]
        count = len([l for l in found.splitlines() if _MATCH_LINE.match(l)])
        lines.append("")
        lines.append(f"Searching for `{md_escape(pattern)}` gave {plural(count, 'matching line')}.")
    if not turn.reads() and not listed and not lead:
        lines.append("")
        lines.append("I could not find readable files here.")
    lines.append("")
    if turn.reads() or data:
        lines.append(f"Ask me about any of these files, or {words.what_is_sent}.")
    else:
        lines.append(f"Name a file that is here (“what is in this repo?” lists them), or {words.what_is_sent}.")
    return "\n".join(lines)


def read_lines(turn: Turn, apart: set[str], heading: str) -> list[str]:
    """"I read 5 files:" and one line each: what it shows, or that compaction has taken it out since
    ("I read 1 file" was once said after four reads, three of them masked by then). When a recap just before
    the prompt stands for reads of this turn, it says so first: the count is then of the reads since."""
    held = {str(i.get("file_path")): t for name, i, t, e in turn.calls if name == "Read" and not e}
    reads = [p for p in turn.reads() if p not in apart]
    earlier = [p for p in turn.recapped if p not in reads and p not in apart]
    lines: list[str] = []
    if earlier:  # read before what I still see: compaction put a recap in their place
        lines += ["", f"The recap before your prompt lists {plural(len(earlier), 'file')} read earlier: "
                  + ", ".join(f"`{p}`" for p in earlier[:8]) + (" …" if len(earlier) > 8 else "") + "."]
        heading = "Since then, " + (heading if heading.startswith("I ") else heading[0].lower() + heading[1:])
    if reads:
        lines += ["", f"{heading} {plural(len(reads), 'file')}:"]
    for path in reads:
        text = held.get(path)
        if text is None:
            lines.append(f"- `{path}`: read, since taken out of my context by compaction (the panel shows it)")
            continue
        numbered = [l for l in text.splitlines() if LINE_NUMBER.match(l)]
        size = f"{plural(len(numbered), 'line')} shown" if numbered else f"{len(text):,} chars"
        first = first_line(text)
        lines.append(f"- `{path}` ({size})" + (f": {md_escape(first)}" if first else ""))
    return lines


_FOLDER_NOTE = re.compile(r"`([^`]+/)` \(([\d,]+) files?, ([\d,]+) lines?\)")  # the demo's own note of them


def folder_sizes(turn: Turn) -> dict[str, list[int]]:
    """Each top-level folder's [files, lines] from the Grep line count (text files only); when compaction
    took that count, from the note the demo wrote when it had it."""
    folders: dict[str, list[int]] = {}
    for path, count in line_counts(turn):
        if "/" in path:
            size = folders.setdefault(path.split("/", 1)[0] + "/", [0, 0])
            size[0] += 1
            size[1] += count
    for note in reversed(turn.notes if not folders else ()):
        folders = {name: [int(files.replace(",", "")), int(lines.replace(",", ""))]
                   for name, files, lines in _FOLDER_NOTE.findall(note)}
        if folders:
            break
    return folders


def folder_note(turn: Turn) -> str:
    """The layout in a line the demo says before reading on, so it still knows it if the count leaves."""
    folders = sorted(folder_sizes(turn).items(), key=lambda item: (-item[1][1], item[0]))
    return "; ".join(f"`{name}` ({plural(files, 'file')}, {plural(count, 'line')})" for name, (files, count) in folders)


def layout_lines(turn: Turn) -> list[str]:
    """The layout: each top-level folder with its files and lines (the Grep line count: text files only),
    largest first, then the loose files of the top-level listing."""
    out: list[str] = []
    folders = folder_sizes(turn)
    if folders:
        out += ["", f"The layout: {plural(len(folders), 'folder')} (text files and lines, counted with Grep):"]
        for name, (files, count) in sorted(folders.items(), key=lambda item: (-item[1][1], item[0])):
            out.append(f"- `{md_escape(name)}`: {plural(files, 'file')}, {plural(count, 'line')}")
    top_level = [t for name, i, t, e in turn.calls if name == "Glob" and not e and i.get("pattern") == "*"]
    if top_level:
        entries = [l.strip() for l in top_level[0].splitlines()
                   if l.strip() and l.strip() != NO_FILES and not l.startswith(("…", "(", "["))]  # Glob's "none"
        loose = [e for e in dict.fromkeys(entries) if "/" not in e and e.rstrip("/") + "/" not in folders]
        if loose:
            shown = ", ".join(f"`{md_escape(t)}`" for t in loose[:12]) + (" …" if len(loose) > 12 else "")
            out += ["", f"Loose files at the top level ({len(loose)}): {shown}."]
    return out
