"""The permission gate: which tool calls run at once, which ask the user, which are refused.

The loop asks `PermissionPolicy.decide()` before every call. "ask" makes the loop emit a
`PermissionRequested` event whose future the face resolves (the TUI's modal; headless never asks).
A denial becomes an `is_error` tool_result the model can read, and the turn stops so the user can say
what to do instead.

The order of checks, most binding first:
1. a deny rule matches → deny (whatever the mode);
2. a file-changing call touching `.git/` internals → deny (never written, whatever the mode);
3. a read-only call inside the workspace → allow;
4. an allow rule covers the call → allow (a rule only covers a path outside the workspace when its
   pattern names that path: a tool-wide `Edit` rule does not reach beyond the workspace);
5. otherwise the mode decides: interactive asks; headless allows in-workspace changes only with
   `allow_write` and denies the rest; `allow_all` allows everything except file changes outside the
   workspace, which need an explicit rule in every mode.
"""

from __future__ import annotations

import enum
import os
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from tui_agent.core.tools.base import Tool, ToolContext
from tui_agent.core.tools.paths import is_inside, resolve_path

REJECT_MESSAGE = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
    "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
    "tell you how to proceed."
)
HEADLESS_DENY_MESSAGE = (
    "Permission denied: {tool} needs permission, and headless mode does not ask. "
    "Re-run with --allow-write or ALLOW_WRITE=1 to allow tools that change things."
)
GIT_DENY_MESSAGE = (
    "Refused: {path} is inside a .git/ directory. The agent never writes git internals; use git "
    "commands through Bash instead."
)
OUTSIDE_WRITE_MESSAGE = (
    "Permission denied: {paths} is outside the workspace {workspace}. {tool} only changes files outside "
    "the workspace with an explicit allow rule, e.g. /permissions allow {tool}({example})."
)
SKIPPED_MESSAGE = "Skipped because a previous tool use was rejected or the turn was aborted."

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.:-]+$")
# Shell control operators that chain commands; a prefix rule must cover every part.
# (`&` as part of a redirection, `2>&1` or `&>file`, is not a separator.)
_SPLIT = re.compile(r"\|\||&&|\|&?|[;\n]|(?<![<>])&(?!>)")
# Redirections that do not write files (`2>&1`, `>/dev/null`); any other `>` may write anywhere.
_HARMLESS_REDIRECT = re.compile(r"\d*>&\d+|&?\d*>>?\s*/dev/null")
# Commands whose first word alone says little: remember `git status`, not `git`.
_MULTIPLEXERS = {
    "git", "npm", "npx", "pnpm", "yarn", "bun", "cargo", "go", "uv", "uvx", "pip", "pip3", "poetry",
    "docker", "kubectl", "make", "python", "python3", "node", "dotnet", "gradle", "mvn", "hatch", "tox",
}


class PermissionDecision(enum.Enum):
    """The user's answer to a permission prompt."""

    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"
    DENY = "deny"


@dataclass(frozen=True)
class Decision:
    behavior: Literal["allow", "ask", "deny"]
    message: str = ""
    reason: str = ""


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A path glob where `*` and `?` stay within one path segment, `**` crosses them, `[..]` is a class."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")  # `a/**/b` also matches `a/b`
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            j = i + 1
            if j < n and pattern[j] == "!":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            end = pattern.find("]", j)
            if end == -1:
                out.append(re.escape(char))
                i += 1
                continue
            body = pattern[i + 1:end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + "".join("\\" + c if c in "\\[]" else c for c in body) + "]")
            i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def escape_glob(text: str) -> str:
    """`text` as a pattern that matches only itself (for remembered exact paths)."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def split_commands(command: str) -> list[str]:
    """The simple commands of a shell line, split on `&&`, `||`, `;`, `|`, `&` and newlines.

    Deliberately naive (quotes are not parsed): for allow rules that only makes the split stricter,
    so a quoted `&&` leads to a question rather than to a wrongly allowed command.
    """
    return [part.strip() for part in _SPLIT.split(command) if part.strip()]


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
        if not self._tool_matches(tool):
            return False
        if self.pattern is None:
            return True
        command = tool_input.get("command")
        if isinstance(command, str):
            parts = [command.strip(), *split_commands(command)]
            return any(self._command_matches(part) for part in parts)
        root = Path(workspace or Path.cwd()).resolve()
        for raw in tool.paths(tool_input):
            lexical = Path(os.path.normpath(root / Path(raw).expanduser()))
            for path in {resolve_path(raw, root), lexical}:
                if self._path_matches(path, root, outside_ok=True):
                    return True
        return False

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
            command = command.strip()
            if not self.pattern.endswith(":*") and command == self.pattern:
                return True  # an exact (remembered) command, compound or not
            if any(mark in command for mark in ("$(", "`", "<(", ">(")):
                return False
            parts = split_commands(command)
            return bool(parts) and all(
                self._command_matches(part) and ">" not in _HARMLESS_REDIRECT.sub("", part) for part in parts
            )
        return bool(paths) and all(self._path_matches(path, root, outside_ok=False) for path in paths)

    def _command_matches(self, command: str) -> bool:
        assert self.pattern is not None
        if self.pattern.endswith(":*"):
            prefix = self.pattern[:-2].strip()
            return command == prefix or command.startswith(prefix + " ") or command.startswith(prefix + "\t")
        if "*" in self.pattern:
            return fnmatchcase(command, self.pattern)
        return command == self.pattern

    def _path_matches(self, path: Path, root: Path, outside_ok: bool) -> bool:
        """Does the pattern name `path` or a folder above it? Relative patterns need `path` inside `root`."""
        assert self.pattern is not None
        pattern = self.pattern.replace("\\", "/")
        if pattern.startswith("//"):
            pattern = pattern[1:]
        elif pattern.startswith("~/") or pattern == "~":
            pattern = str(Path(pattern).expanduser()).replace("\\", "/")
        elif pattern.startswith("./"):
            pattern = pattern[2:]
        pattern = pattern.rstrip("/") or "/"
        regex = _glob_regex(pattern)
        if pattern.startswith("/"):
            target = path.as_posix()
            candidates = [target, *(p.as_posix() for p in path.parents)]
            return any(regex.fullmatch(c) for c in candidates)
        inside = is_inside(path, root)
        if "/" not in pattern:
            # A bare name matches a file or folder of that name at any depth (gitignore style).
            parts = path.relative_to(root).parts if inside else path.parts
            if not inside and not outside_ok:
                return False
            return any(regex.fullmatch(part) for part in parts)
        if not inside:
            return False
        rel = path.relative_to(root).as_posix()
        candidates = [rel]
        while "/" in candidates[-1]:
            candidates.append(candidates[-1].rsplit("/", 1)[0])
        return any(regex.fullmatch(c) for c in candidates)


def outside_workspace(tool: Tool, tool_input: dict[str, Any], ctx: ToolContext) -> list[str]:
    """Paths of this call that resolve (after `..` and symlinks) outside the workspace root."""
    root = ctx.workspace.resolve()
    return [raw for raw in tool.paths(tool_input) if not is_inside(resolve_path(raw, root), root)]


def git_internal(path: Path, workspace: Path) -> bool:
    """True when `path` (resolved or not) lies inside a `.git` directory (or is one)."""
    root = Path(workspace).resolve()
    candidates = [Path(os.path.normpath(root / path)), resolve_path(str(path), root)]
    for candidate in candidates:
        parts = candidate.relative_to(root).parts if is_inside(candidate, root) else candidate.parts
        if ".git" in parts:
            return True
    return False


def changes_files(tool: Tool, tool_input: dict[str, Any]) -> bool:
    """A tool that is not read-only and names paths (Write, Edit): it changes those files."""
    return not tool.is_read_only(tool_input) and bool(tool.paths(tool_input))


READ_RULE_TOOLS = ("Read", "Grep")  # deny rules on these hide file contents from content searches too
CONTENT_SEARCH_TOOLS = ("Grep",)


@dataclass
class PermissionPolicy:
    """`interactive` asks through the face; `headless` never asks (denies unless `allow_write`)."""

    mode: Literal["interactive", "headless", "allow_all"] = "interactive"
    allow_write: bool = False
    allow_rules: list[Rule] = field(default_factory=list)
    deny_rules: list[Rule] = field(default_factory=list)
    # The workspace of the last `decide`, so `remember` (called by the loop without a context right
    # after the question) can turn a relative path into a workspace-relative rule.
    _workspace: Path | None = field(default=None, repr=False, compare=False)

    @classmethod
    def headless(cls, allow_write: bool | None = None) -> "PermissionPolicy":
        if allow_write is None:
            allow_write = os.environ.get("ALLOW_WRITE") == "1"
        return cls(mode="headless", allow_write=allow_write)

    def decide(self, tool: Tool, tool_input: dict[str, Any], ctx: ToolContext) -> Decision:
        self._workspace = ctx.workspace
        root = ctx.workspace.resolve()
        for rule in self.deny_rules:
            if rule.matches(tool, tool_input, root):
                return Decision("deny", f"Permission denied by rule {rule}.", reason="rule")
        if tool.name in CONTENT_SEARCH_TOOLS:
            for raw in tool.paths(tool_input):
                rule = self.read_denied(raw, root)
                if rule is not None:
                    return Decision("deny", f"Permission denied by rule {rule}: searching it would read it.",
                                    reason="rule")
        writes = changes_files(tool, tool_input)
        if writes:
            for raw in tool.paths(tool_input):
                if git_internal(Path(raw).expanduser(), root):
                    return Decision("deny", GIT_DENY_MESSAGE.format(path=raw), reason="protected")
        outside = outside_workspace(tool, tool_input, ctx)
        if not outside and tool.is_read_only(tool_input):
            return Decision("allow")
        if any(rule.allows(tool, tool_input, root) for rule in self.allow_rules):
            return Decision("allow", reason="rule")
        if writes and outside and self.mode != "interactive":
            example = resolve_path(outside[0], root).as_posix()
            return Decision(
                "deny",
                OUTSIDE_WRITE_MESSAGE.format(paths=", ".join(outside), workspace=root, tool=tool.name,
                                             example=escape_glob(example)),
                reason="outside",
            )
        if self.mode == "allow_all":
            return Decision("allow")
        if self.mode == "headless":
            if outside:
                return Decision(
                    "deny",
                    f"Permission denied: {', '.join(outside)} is outside the workspace {root}, "
                    "and headless mode does not ask.",
                    reason="outside",
                )
            if self.allow_write:
                return Decision("allow")
            return Decision("deny", HEADLESS_DENY_MESSAGE.format(tool=tool.name), reason="headless")
        return Decision("ask", reason="outside" if outside else "write")

    # -- reads hidden from searches ------------------------------------------------------------
    def read_denied(self, raw_path: str, workspace: Path) -> Rule | None:
        """The deny rule that forbids reading `raw_path` (e.g. `Read(.env)`), if any."""
        root = Path(workspace).resolve()
        for rule in self.deny_rules:
            if rule.tool in READ_RULE_TOOLS and rule.pattern:
                path = resolve_path(raw_path, root)
                if rule._path_matches(path, root, outside_ok=True):
                    return rule
        return None

    def read_deny_globs(self) -> list[str]:
        """Workspace-relative ripgrep exclusions (`!pattern`) for the read-deny rules, so a content search
        never shows what `Read(.env)` forbids. Both use gitignore-style patterns relative to the root."""
        globs = []
        for rule in self.deny_rules:
            if rule.tool in READ_RULE_TOOLS and rule.pattern and not rule.pattern.startswith(("/", "~")):
                pattern = rule.pattern[2:] if rule.pattern.startswith("./") else rule.pattern
                globs.append("!" + pattern.rstrip("/"))
        return globs

    def remember(self, tool: Tool, tool_input: dict[str, Any], ctx: ToolContext | None = None) -> Rule:
        """"Allow for this session": the exact path (or command prefix) for this tool, tool-wide otherwise.

        Paths are stored resolved (workspace-relative inside, absolute outside) and glob-escaped, so the
        rule allows exactly the file the user saw in the question.
        """
        workspace = ctx.workspace if ctx is not None else self._workspace
        paths = tool.paths(tool_input)
        command = tool_input.get("command")
        if isinstance(command, str) and command.strip():
            rule = Rule(tool.name, command_rule_pattern(command))
        elif paths and workspace is not None:
            root = Path(workspace).resolve()
            path = resolve_path(paths[0], root)
            shown = path.relative_to(root).as_posix() if is_inside(path, root) and path != root else path.as_posix()
            rule = Rule(tool.name, escape_glob(shown))
        elif paths:
            rule = Rule(tool.name, escape_glob(paths[0]))
        else:
            rule = Rule(tool.name)
        if rule not in self.allow_rules:
            self.allow_rules.append(rule)
        return rule

    # -- rule management (for /permissions and settings) ---------------------------------------
    def add_rule(self, rule: Rule, kind: Literal["allow", "deny"]) -> bool:
        """Add a rule unless an equal one is there; True when added."""
        rules = self.allow_rules if kind == "allow" else self.deny_rules
        if rule in rules:
            return False
        rules.append(rule)
        return True

    def remove_rule(self, rule: Rule) -> bool:
        """Remove an equal rule from both lists; True when one was removed."""
        removed = False
        for rules in (self.allow_rules, self.deny_rules):
            while rule in rules:
                rules.remove(rule)
                removed = True
        return removed


def command_rule_pattern(command: str) -> str:
    """The pattern "allow for this session" records for a Bash command.

    A simple command gives a prefix rule (`pytest:*`, `git status:*`, `python -m pytest:*`); a compound
    one (pipes, `&&`, substitutions) is remembered exactly, since a prefix would allow more than asked.
    """
    command = command.strip()
    if len(split_commands(command)) != 1 or any(m in command for m in ("$(", "`", ">", "<")):
        return command
    words = command.split()
    take = 1
    if words[0] in _MULTIPLEXERS and len(words) > 1:
        if words[1] == "-m" and len(words) > 2:
            take = 3
        elif not words[1].startswith("-"):
            take = 2
    return " ".join(words[:take]) + ":*"
