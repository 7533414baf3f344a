"""What the demo model reads in a prompt: what it asks for, in the words a user types.

A real model understands "what is in this repo? read the data files" as two wishes; the demo finds them by
pattern: an overview, a search ("grep for X and Y"), the biggest files, paths it names (existing or not),
the data files. Each reader here is pure (text in, wish out), so the flows that act on them stay small.
"""

from __future__ import annotations

import re
from pathlib import Path

from tui_agent.core.messages import Message, tool_uses

STOPWORDS = {
    "what", "which", "where", "there", "this", "that", "these", "those", "with", "from", "about", "does",
    "into", "repo", "repository", "code", "file", "files", "have", "show", "tell", "explain", "please",
    "project", "work", "works", "could", "would", "should", "their", "them", "they", "your", "some",
    "look", "find", "here", "in", "is", "the", "and", "how", "why", "are", "read", "data",
}
BIGGEST = re.compile(r"\b(biggest|largest|longest|heaviest|bulkiest)\b", re.IGNORECASE)
OVERVIEW = re.compile(r"\b(what('s| is) (in )?(this|the) (repo|repository|project|folder|directory|codebase|"
                      r"workspace)|overview|give me a tour|what is here)\b", re.IGNORECASE)
_GREP_ASK = re.compile(r"^\W*(?:please\s+)?(?:grep(?:\s+for)?|search\s+for|look\s+for|find\s+(?:all\s+)?(?:the\s+)?"
                       r"(?:occurrences|uses|mentions)\s+of)\s+(?P<terms>.+?)"
                       r"(?:\s+(?:in\s+(?:the|this)\s+(?:repo|repository|project|code(?:base)?)|here|everywhere)"
                       r"|\s+in\s+(?P<path>[\w./-]+))?\W*$", re.IGNORECASE | re.DOTALL)
_TERM_SPLIT = re.compile(r"\s*(?:,|&|\band\b|\bor\b)\s*", re.IGNORECASE)
_PATH_TOKEN = re.compile(r"[\w./-]*[\w-]\.[A-Za-z0-9]{1,8}|[\w.-]+/[\w./-]+")
# "read the data files", "show me the csv files", "open the datasets": data named as what to read
_DATA_ASK = re.compile(r"\b(?:read|open|show|look\s+at|load|inspect|summari[sz]e|check)\b[^.?!]*?"
                       r"\b(?:data(?:\s*sets?|\s+files?)?|datasets?|(?:csv|tsv|json|jsonl|yaml|yml|parquet|xml)"
                       r"(?:\s+files?)?)\b(?![/\w.])", re.IGNORECASE)
# Extensions a path a user names is likely to have: "e.g." or "3.11" are no files to look for.
FILE_SUFFIXES = frozenset(
    "py pyi ipynb js jsx ts tsx mjs cjs md rst txt json jsonl yaml yml toml ini cfg conf csv tsv parquet xml html "
    "css scss tcss sql sh bash zsh rs go java kt c h cc cpp hpp cs rb php swift lua r scala ex exs erl hs ml vue "
    "svelte lock env log proto graphql tf dockerfile mk gradle".split())


def grep_ask(prompt: str) -> tuple[list[str], str | None]:
    """"grep for TODO and FIXME [in src]" → (["TODO", "FIXME"], "src"); a quoted term stays whole."""
    match = _GREP_ASK.match(prompt.strip())
    if not match:
        return [], None
    text = match.group("terms")
    quoted = re.findall(r"[`'\"]([^`'\"]+)[`'\"]", text)
    terms = quoted or [t.strip(" `'\"") for t in _TERM_SPLIT.split(text)]
    return list(dict.fromkeys(t for t in terms if t))[:4], match.group("path")


def path_tokens(prompt: str) -> list[str]:
    """The paths a prompt names ("src/app.py", "README.md"), cleaned, in order, once each."""
    found: list[str] = []
    for token in _PATH_TOKEN.findall(re.sub(r"\w+://\S+", " ", prompt)):  # a URL names no file here
        path = token.strip(".,;:!?'\"()`").removeprefix("./")
        if path and path not in found:
            found.append(path)
    return found


def looks_like_a_file(path: str) -> bool:
    """A named path worth looking for when it is not here: a folder in it, or a file's extension."""
    suffix = Path(path).suffix.lower().lstrip(".")
    return ("/" in path and bool(suffix)) or suffix in FILE_SUFFIXES


def wants_data(prompt: str) -> bool:
    """Whether the prompt asks to read the data files ("read the data files", "show me the csv files")."""
    return bool(_DATA_ASK.search(prompt))


def keyword(prompt: str) -> str:
    """The longest word worth searching for (no stopword, at least four characters), or ""."""
    candidates = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", prompt) if w.lower() not in STOPWORDS]
    return max(candidates, key=len) if candidates else ""


def skills(system: str) -> list[str]:
    if "## Available Skills" not in system:
        return []
    section = system.split("## Available Skills", 1)[1]
    return re.findall(r"^- ([\w.-]+)", section, flags=re.MULTILINE)


def intro(system: str, text: str) -> str:
    if "AGENTS.md" in system or "CLAUDE.md" in system:
        return "I have the project's instructions (AGENTS.md) in mind. " + text
    return text


def already_read(messages: list[Message]) -> set[str]:
    return {str(use.get("input", {}).get("file_path")) for m in messages for use in tool_uses(m)
            if use.get("name") == "Read"}


def files_read(messages: list[Message]) -> list[str]:
    """The files read in what the demo was sent, in order, once each."""
    return list(dict.fromkeys(str(use.get("input", {}).get("file_path")) for m in messages for use in tool_uses(m)
                              if use.get("name") == "Read"))


__all__ = ["BIGGEST", "OVERVIEW", "already_read", "files_read", "grep_ask", "intro", "keyword", "looks_like_a_file",
           "path_tokens", "skills", "wants_data"]
