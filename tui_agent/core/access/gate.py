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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tui_agent.core.access.rules import MAX_PATH_PARTS, Rule, bash_allowed, command_rule_pattern, escape_glob
from tui_agent.core.tools.base import Tool, ToolContext
from tui_agent.core.tools.paths import git_internal, is_inside, resolve_path

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
OPAQUE_DENY_MESSAGE = (
    "Permission denied: the command cannot be checked against the deny rule {rule} ({why}). "
    "Spell the command out without variables or substitutions in the command name."
)
DEEP_PATH_MESSAGE = "Refused: {path} has more than {limit} path components."


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


def outside_workspace(tool: Tool, tool_input: dict[str, Any], ctx: ToolContext) -> list[str]:
    """Paths of this call that resolve (after `..` and symlinks) outside the workspace root."""
    root = ctx.workspace.resolve()
    return [raw for raw in tool.paths(tool_input) if not is_inside(resolve_path(raw, root), root)]


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
    # Where relative paths in remembered rules are rooted when `remember` gets no context (the loop
    # calls it right after the question). Set once by the Session; never changed by `decide`.
    workspace: Path | None = None

    @classmethod
    def headless(cls, allow_write: bool | None = None) -> "PermissionPolicy":
        if allow_write is None:
            allow_write = os.environ.get("ALLOW_WRITE") == "1"
        return cls(mode="headless", allow_write=allow_write)

    def decide(self, tool: Tool, tool_input: dict[str, Any], ctx: ToolContext) -> Decision:
        root = ctx.workspace.resolve()
        deep = [raw for raw in tool.paths(tool_input) if len(resolve_path(raw, root).parts) > MAX_PATH_PARTS]
        if deep:
            return Decision("deny", DEEP_PATH_MESSAGE.format(path=deep[0][:200] + "…", limit=MAX_PATH_PARTS),
                            reason="protected")
        unknown: tuple[Rule, str] | None = None
        for rule in self.deny_rules:
            verdict, why = rule.deny_verdict(tool, tool_input, root)
            if verdict == "match":
                return Decision("deny", f"Permission denied by rule {rule}.", reason="rule")
            if verdict == "unknown" and unknown is None:
                unknown = (rule, why)
        if unknown is not None:
            # A deny rule may or may not cover this command: ask, or refuse where nobody can be asked.
            if self.mode == "interactive":
                return Decision("ask", reason="unchecked")
            rule, why = unknown
            return Decision("deny", OPAQUE_DENY_MESSAGE.format(rule=rule, why=why), reason="rule")
        if tool.name in CONTENT_SEARCH_TOOLS:
            for raw in tool.paths(tool_input):
                denied = self.read_denied(raw, root)
                if denied is not None:
                    return Decision("deny", f"Permission denied by rule {denied}: searching it would read it.",
                                    reason="rule")
        writes = changes_files(tool, tool_input)
        if writes:
            for raw in tool.paths(tool_input):
                if git_internal(Path(raw).expanduser(), root):
                    return Decision("deny", GIT_DENY_MESSAGE.format(path=raw), reason="protected")
        outside = outside_workspace(tool, tool_input, ctx)
        if not outside and tool.is_read_only(tool_input):
            return Decision("allow")
        if self._allowed_by_rules(tool, tool_input, root):
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

    def _allowed_by_rules(self, tool: Tool, tool_input: dict[str, Any], root: Path) -> bool:
        rules = self.allow_rules
        if self.mode == "headless":
            rules = [rule for rule in rules if not rule.project]  # a repository never lifts the gate
        command = tool_input.get("command")
        if isinstance(command, str):
            # Each simple command may be covered by a different rule (`git status && pytest`).
            return bash_allowed([rule for rule in rules if rule._tool_matches(tool)], command)
        return any(rule.allows(tool, tool_input, root) for rule in rules)

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
        workspace = ctx.workspace if ctx is not None else self.workspace
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
