"""Project trust: what a repository may switch on by itself, and the user's remembered answers.

A cloned repository is untrusted input. Two things in it would otherwise act before anyone looked:
its MCP servers (`.mcp.json` runs commands at start-up) and the allow rules of its
`.tui-agent/settings.json` (they silence permission questions). Both need the user's approval, which
is remembered per project and per *definition*: the answer is stored with a hash of what was approved,
so a changed command, URL or rule list asks again. Deny rules need no approval (they only take away).

Answers live in `<config dir>/trust.json` (the user's config dir, never the project), written
atomically. A broken or odd file counts as "nothing approved yet": the worst outcome is a question.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping

TRUST_FILE = "trust.json"
MAX_BYTES = 4 * 1024 * 1024

Status = Literal["approved", "refused", "pending"]
Answer = Literal["approved", "refused", "later"]


def digest(value: Any) -> str:
    """A stable hash of a JSON-able definition (sorted keys), what an approval is bound to."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TrustItem:
    """One thing a project wants: an MCP server (`kind="mcp"`) or its settings' allow rules."""

    kind: Literal["mcp", "settings"]
    name: str
    digest: str
    summary: str  # what the user is shown: the command line, the URL, the rules
    source: Path

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}"


@dataclass
class TrustQuestion:
    """What a face asks the user (the TUI's modal); the answer applies to every item."""

    title: str
    explanation: str
    items: list[TrustItem] = field(default_factory=list)


def trust_path(environ: Mapping[str, str] | None = None) -> Path:
    from tui_agent.core.paths import config_dir

    return config_dir(environ) / TRUST_FILE


class TrustStore:
    """The remembered answers, keyed by project (its resolved path) and item."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.problem: str | None = None  # why the file was ignored, when it was

    def _load(self) -> dict[str, Any]:
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return {}
        except OSError as error:
            self.problem = f"cannot read {self.path}: {error.strerror or error}"
            return {}
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            self.problem = f"{self.path} is not a regular file under {MAX_BYTES // (1024 * 1024)} MB"
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
            self.problem = f"{self.path} is not readable JSON ({type(error).__name__})"
            return {}
        if not isinstance(data, dict) or not isinstance(data.get("projects"), dict):
            return {}
        return data

    def status(self, project: Path, item: TrustItem) -> Status:
        entry = self._load().get("projects", {}).get(str(Path(project).resolve()), {})
        answer = entry.get(item.key) if isinstance(entry, dict) else None
        if not isinstance(answer, dict) or answer.get("digest") != item.digest:
            return "pending"  # never asked, or the definition changed since
        decision = answer.get("decision")
        return decision if decision in ("approved", "refused") else "pending"

    def record(self, project: Path, items: list[TrustItem], decision: Literal["approved", "refused"]) -> str | None:
        """Remember `decision` for `items`; returns a warning when the file cannot be written."""
        data = self._load() or {"version": 1, "projects": {}}
        projects = data.setdefault("projects", {})
        entry = projects.setdefault(str(Path(project).resolve()), {})
        if not isinstance(entry, dict):
            entry = projects[str(Path(project).resolve())] = {}
        for item in items:
            entry[item.key] = {"digest": item.digest, "decision": decision, "summary": item.summary[:500]}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".trust-", suffix=".json", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(data, handle, indent=2, sort_keys=True)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as error:
            return f"Could not remember the answer in {self.path}: {error.strerror or error}"
        return None


def is_project_file(path: Path | None, workspace: Path, user_files: tuple[Path, ...] = ()) -> bool:
    """A config file the repository controls: *named* inside the workspace (or resolving into it), and
    not one of the user's own files.

    Decided by where the file is named, not only where it resolves: the repository owns its names, so
    `pkg/.mcp.json -> ../tools.json` (a monorepo package opened with `-C pkg`) is still the project's
    file, whatever it points at. A user file counts as the user's only under its own name (a project
    link to it is still the project's file)."""
    if path is None:
        return False
    named = _named(Path(path))
    if any(named == _named(Path(user)) for user in user_files):
        return False
    root = Path(workspace).resolve()
    places = {Path(os.path.abspath(path)), named}
    try:
        places.add(Path(path).resolve())
    except (OSError, RuntimeError):  # a symlink loop: it is named in the workspace or not, as above
        pass
    return any(place == root or root in place.parents for place in places)


def _named(path: Path) -> Path:
    """`path` with its folder resolved but not the file itself (a symlinked file keeps its own name)."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.parent.resolve() / absolute.name
    except (OSError, RuntimeError):
        return absolute
