"""User settings: permission rules from JSON files, read once at start-up.

Two files, both optional, in this order (later files add to earlier ones):
- the user's `<config dir>/settings.json` (`platformdirs.user_config_path("tui-agent")`, or
  `$TUI_AGENT_CONFIG_DIR` when set: tests and portable installs point it elsewhere);
- the project's `<workspace>/.tui-agent/settings.json`.

A repository is untrusted: its deny rules always apply (they only take away), but its allow rules are
kept apart (`project_allow`, marked `Rule.project`) and apply only once the user approved that exact
list for that project (core/access/trust.py), and never in headless mode.

The shape is Claude Code's: `{"permissions": {"allow": ["Bash(pytest:*)"], "deny": ["Read(.env)"]}}`.
A broken file must never stop the agent from starting: every problem becomes a warning string that the
face shows, and the valid rules are still applied.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_agent.core.config_files import parse_json, read_text_capped
from tui_agent.core.paths import config_dir
from tui_agent.core.access.rules import Rule
from tui_agent.core.access.gate import PermissionPolicy

if TYPE_CHECKING:
    from tui_agent.core.access.trust import TrustItem

SETTINGS_NAME = "settings.json"
PROJECT_DIR = ".tui-agent"


def settings_files(workspace: Path) -> list[Path]:
    """The settings files that apply to `workspace`, user first, project second."""
    return [config_dir() / SETTINGS_NAME, Path(workspace) / PROJECT_DIR / SETTINGS_NAME]


@dataclass
class PermissionSettings:
    allow: list[Rule] = field(default_factory=list)  # the user's own
    deny: list[Rule] = field(default_factory=list)  # the user's and the project's
    project_allow: list[Rule] = field(default_factory=list)  # need approval (see module docstring)
    warnings: list[str] = field(default_factory=list)
    project_file: Path | None = None


def load_permission_settings(workspace: Path) -> PermissionSettings:
    """Rules from every settings file that exists; problems become warnings, never exceptions."""
    result = PermissionSettings()
    user, project = settings_files(workspace)
    _load_file(user, result, project=False)
    if user.resolve() != project.resolve():  # a workspace that is the config dir's parent: still the user's
        _load_file(project, result, project=True)
        result.project_file = project
    return result


def _load_file(path: Path, result: PermissionSettings, project: bool = False) -> None:
    try:
        text = read_text_capped(path)
    except OSError as error:
        result.warnings.append(f"Settings file {path} could not be read ({error.strerror or error}); it was ignored.")
        return
    if text is None:
        return
    try:
        data: Any = parse_json(text) if text.strip() else {}
    except ValueError as error:
        result.warnings.append(f"Settings file {path} is not valid JSON ({error}); it was ignored.")
        return
    if not isinstance(data, dict):
        result.warnings.append(f"Settings file {path} must contain a JSON object; it was ignored.")
        return
    permissions = data.get("permissions", {})
    if not isinstance(permissions, dict):
        result.warnings.append(f"Settings file {path}: \"permissions\" must be an object; it was ignored.")
        return
    for kind in ("allow", "deny"):
        entries = permissions.get(kind, [])
        if not isinstance(entries, list):
            result.warnings.append(f"Settings file {path}: permissions.{kind} must be a list of rule strings.")
            continue
        for entry in entries:
            if not isinstance(entry, str):
                result.warnings.append(f"Settings file {path}: permissions.{kind} entry {entry!r} is not a string.")
                continue
            try:
                rule = Rule.parse(entry, source=str(path))
            except ValueError as error:
                result.warnings.append(f"Settings file {path}: {error}")
                continue
            if project:
                rule = replace(rule, project=True)
            target = result.deny if kind == "deny" else result.project_allow if project else result.allow
            if rule not in target:
                target.append(rule)


def apply_loaded(policy: PermissionPolicy, loaded: PermissionSettings) -> list[str]:
    """Add the user's rules and every deny rule to `policy`; returns the warnings to show. The project's
    allow rules are not applied here: see `project_rules_item` and the factory."""
    for rule in loaded.allow:
        policy.add_rule(rule, "allow")
    for rule in loaded.deny:
        policy.add_rule(rule, "deny")
    return loaded.warnings


def project_rules_item(loaded: PermissionSettings) -> "TrustItem | None":
    """The project's allow rules as one thing to approve (bound to the exact list), or None."""
    if not loaded.project_allow or loaded.project_file is None:
        return None
    from tui_agent.core.access.trust import TrustItem, digest

    texts = [str(rule) for rule in loaded.project_allow]
    return TrustItem("settings", "allow-rules", digest(sorted(texts)), ", ".join(texts), loaded.project_file)
