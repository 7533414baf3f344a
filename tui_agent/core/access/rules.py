"""The permission rule language: `Tool` or `Tool(pattern)`, a path glob (gitignore's, through pathspec) or
a Bash command prefix, and what an allow rule can vouch for in a shell line.

Kept apart from the gate (`permissions.py`) so the order of checks there reads as one page; the matching
rules here are where the security fixes live (deny bypasses, deep paths, slow globs).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tui_agent.core.shell import reach as shell_reach, words as shell_words
from tui_agent.core.tools.base import Tool
from tui_agent.core.tools.paths import is_inside, resolve_path

if TYPE_CHECKING:
    import pathspec

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.:-]+$")
# Commands whose first word alone says little: remember `git status`, not `git`.
_MULTIPLEXERS = {
    "git", "npm", "npx", "pnpm", "yarn", "bun", "cargo", "go", "uv", "uvx", "pip", "pip3", "poetry",
    "docker", "kubectl", "make", "python", "python3", "node", "dotnet", "gradle", "mvn", "hatch", "tox",
}




MAX_DOUBLE_STARS = 3  # `**` segments per path rule: matching cost grows as depth ** (number of `**`)
MAX_PATH_PARTS = 256  # deeper paths are refused by the gate rather than matched (no real file is that deep)


def _normal_globstars(pattern: str) -> str:
    """`**/**/x` → `**/x` (the same set of paths), so repeated `**/` cannot make matching slow."""
    parts = pattern.split("/")
    out: list[str] = []
    for part in parts:
        if part == "**" and out and out[-1] == "**":
            continue
        out.append(part)
    return "/".join(out)


@functools.lru_cache(maxsize=512)
def _path_spec(pattern: str) -> "pathspec.GitIgnoreSpec":
    """One rule pattern as a gitignore pattern (pathspec): `*` within a folder, `**` across folders, a
    name without `/` at any depth, a match on a folder covering everything below it."""
    import pathspec  # lazy: only paid when a path rule is matched

    if pattern.startswith(("!", "#")):
        pattern = "\\" + pattern  # a literal `!` or `#`, not gitignore's negation or comment
    return pathspec.GitIgnoreSpec.from_lines([pattern])


def escape_glob(text: str) -> str:
    """`text` as a pattern that matches only itself (for remembered exact paths)."""
    return re.sub(r"([*?\[\\])", r"\\\1", text)


@dataclass(frozen=True)
class Rule:
    """`Tool` or `Tool(pattern)`: pattern is a path glob, or `prefix:*` / an exact command for Bash.

    Path patterns: `.env` (no slash) matches that name at any depth; `src/*.py` is relative to the
    workspace root (`*` stays in one folder, `**` crosses folders) and also matches files below a
    matching folder; `/abs/path`, `//abs/path` and `~/path` are absolute.
    """

    tool: str
    pattern: str | None = None
    source: str = field(default="session", compare=False)
    # From the repository's own settings file: applies only once the user approved it, and never
    # lifts the headless gate (a cloned repository must not be able to allow itself Bash).
    project: bool = field(default=False, compare=False)

    @classmethod
    def parse(cls, text: str, source: str = "session") -> "Rule":
        """Parse `Tool` or `Tool(pattern)`; ValueError names what is wrong."""
        text = text.strip()
        pattern: str | None = None
        if "(" in text or ")" in text:
            if not text.endswith(")") or "(" not in text:
                raise ValueError(f"Invalid permission rule {text!r}: expected Tool or Tool(pattern).")
            name, _, rest = text.partition("(")
            pattern = rest[:-1].strip() or None
        else:
            name = text
        name = name.strip()
        if not name or not _TOOL_NAME.match(name):
            raise ValueError(f"Invalid permission rule {text!r}: {name!r} is not a tool name.")
        if pattern and name != "Bash" and _normal_globstars(pattern).split("/").count("**") > MAX_DOUBLE_STARS:
            raise ValueError(f"Invalid permission rule {text!r}: at most {MAX_DOUBLE_STARS} `**` per path pattern.")
        return cls(name, pattern, source)

    def __str__(self) -> str:
        return f"{self.tool}({self.pattern})" if self.pattern else self.tool

    # -- matching ------------------------------------------------------------------------------
    def _tool_matches(self, tool: Tool) -> bool:
        if self.tool == tool.name:
            return True
        # `mcp__server` covers every tool of that MCP server.
        return self.tool.startswith("mcp__") and tool.name.startswith(self.tool + "__")

    def matches(self, tool: Tool, tool_input: dict[str, Any], workspace: Path | None = None) -> bool:
        """Deny-side matching: true when the rule names any part of the call (any path, any command)."""
        return self.deny_verdict(tool, tool_input, workspace)[0] == "match"

    def deny_verdict(self, tool: Tool, tool_input: dict[str, Any],
                     workspace: Path | None = None) -> tuple[Literal["match", "unknown", "no"], str]:
        """("match", ""), ("no", ""), or ("unknown", why) for a command whose programs cannot all be named
        (`$cmd args`): the gate then asks, or refuses when it cannot ask."""
        if not self._tool_matches(tool):
            return "no", ""
        if self.pattern is None:
            return "match", ""
        command = tool_input.get("command")
        if isinstance(command, str):
            return self._command_verdict(command)
        root = Path(workspace or Path.cwd()).resolve()
        for raw in tool.paths(tool_input):
            lexical = Path(os.path.normpath(root / Path(raw).expanduser()))
            for path in {resolve_path(raw, root), lexical}:
                if self._path_matches(path, root, outside_ok=True):
                    return "match", ""
        return "no", ""

    def _command_verdict(self, command: str) -> tuple[Literal["match", "unknown", "no"], str]:
        assert self.pattern is not None
        if "*" in self.pattern and not self.pattern.endswith(":*") and fnmatchcase(command.strip(), self.pattern):
            return "match", ""
        found = shell_reach.effective_commands(command)
        if any(self.command_matches(words, deny=True) for words in found.commands):
            return "match", ""
        if found.opaque:
            return "unknown", found.opaque[0]
        return "no", ""

    def allows(self, tool: Tool, tool_input: dict[str, Any], workspace: Path) -> bool:
        """Allow-side matching: true only when the rule covers every part of the call."""
        if not self._tool_matches(tool):
            return False
        root = Path(workspace).resolve()
        paths = [resolve_path(raw, root) for raw in tool.paths(tool_input)]
        if self.pattern is None:
            # A tool-wide rule never reaches outside the workspace.
            return all(is_inside(path, root) for path in paths)
        command = tool_input.get("command")
        if isinstance(command, str):
            return bash_allowed([self], command)
        return bool(paths) and all(self._path_matches(path, root, outside_ok=False) for path in paths)

    def command_matches(self, words: list[str], deny: bool = False) -> bool:
        """Does this Bash rule name the simple command `words`?

        `prefix:*` matches the prefix's words and anything after them; a pattern with `*` is a glob over
        the words joined by spaces; anything else must equal the words. Allow rules compare the command
        name literally (`/tmp/x/git` is not `git`); deny rules also catch `/bin/rm` for `rm`."""
        assert self.pattern is not None
        if not words:
            return False
        if self.pattern.endswith(":*"):
            wanted = shell_words.rule_words(self.pattern[:-2])
            if not wanted or len(words) < len(wanted):
                return False
            head = words[: len(wanted)]
        elif "*" in self.pattern:
            candidates = [" ".join(words)]
            if deny:
                candidates.append(" ".join([os.path.basename(words[0]), *words[1:]]))
            return any(fnmatchcase(c, self.pattern) for c in candidates)
        else:
            wanted = shell_words.rule_words(self.pattern)
            if len(words) != len(wanted):
                return False
            head = words
        if not wanted or head[1:] != wanted[1:]:
            return False
        return shell_words.same_program(head[0], wanted[0]) if deny else head[0] == wanted[0]

    def _path_matches(self, path: Path, root: Path, outside_ok: bool) -> bool:
        """Does the pattern name `path` or a folder above it? Relative patterns need `path` inside `root`.

        Matching is gitignore's (pathspec). A path deeper than MAX_PATH_PARTS matches every deny rule
        and no allow rule (`outside_ok` is the deny side), so an absurd path cannot make matching slow."""
        assert self.pattern is not None
        if len(path.parts) > MAX_PATH_PARTS:
            return outside_ok
        pattern = self.pattern.replace("\\", "/") if os.name == "nt" else self.pattern
        if pattern.startswith("//"):
            pattern = pattern[1:]
        elif pattern.startswith("~/") or pattern == "~":
            pattern = Path(pattern).expanduser().as_posix()
        elif pattern.startswith("./"):
            pattern = pattern[2:]
        pattern = _normal_globstars(pattern.rstrip("/") or "/")
        if pattern.startswith("/"):
            if pattern == "/":
                return True
            return _path_spec(pattern).match_file(path.as_posix().lstrip("/"))
        inside = is_inside(path, root)
        if "/" not in pattern:
            # A bare name matches a file or folder of that name at any depth (gitignore style).
            if not inside and not outside_ok:
                return False
            target = path.relative_to(root).as_posix() if inside else path.as_posix().lstrip("/")
            return target != "." and _path_spec(pattern).match_file(target)
        if not inside or path == root:
            return False
        return _path_spec(pattern).match_file(path.relative_to(root).as_posix())


def bash_allowed(rules: list[Rule], command: str) -> bool:
    """Allow rules cover a Bash command only when it is a plain list of simple commands (no substitution,
    subshell, here-document, writing redirection...) and each command is covered by one of the rules.

    A remembered exact command (what the user saw in the question) is allowed as it is."""
    if not rules:  # the rules given are those naming the tool (Bash, or any tool with a `command` input)
        return False
    stripped = command.strip()
    if any(rule.pattern is None or rule.pattern == stripped for rule in rules):
        return True
    line = shell_words.parse(command)
    if not line.plain:
        return False
    for words in line.commands:
        assignments, rest = shell_words.strip_assignments(words)
        if assignments or not rest or shell_words.is_dynamic(rest[0]):
            return False  # `LD_PRELOAD=x git status`, `$cmd`: not what a rule names
        if not any(rule.command_matches(rest) for rule in rules if rule.pattern):
            return False
    return True


def command_rule_pattern(command: str) -> str:
    """The pattern "allow for this session" records for a Bash command.

    A plain simple command gives a prefix rule (`pytest:*`, `git status:*`, `python -m pytest:*`); any
    other line (pipes, `&&`, substitutions, redirections, `X=1 cmd`) is remembered exactly, since a
    prefix would allow more than was asked.
    """
    command = command.strip()
    line = shell_words.parse(command)
    if not line.plain or len(line.commands) != 1:
        return command
    words = line.commands[0]
    assignments, _ = shell_words.strip_assignments(words)
    if assignments or shell_words.is_dynamic(words[0]):
        return command
    take = 1
    if words[0] in _MULTIPLEXERS and len(words) > 1:
        if words[1] == "-m" and len(words) > 2:
            take = 3
        elif not words[1].startswith("-"):
            take = 2
    return shell_words.join(words[:take]) + ":*"
