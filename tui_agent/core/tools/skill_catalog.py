"""Skills: `SKILL.md` instruction files the model loads on demand with the Skill tool.

Discovery (seed §10, extended by the issue with a user folder):
- `<workspace>/.agents/skills/*/SKILL.md`, then `<workspace>/.claude/skills/*/SKILL.md`, then
  `<config dir>/skills/*/SKILL.md`, each folder sorted by name so the catalog is stable;
- the skill's id is its directory name (Claude Code's rule: what `Skill` and `/<id>` take); the
  frontmatter `name` is only for display; the first skill with an id wins;
- the frontmatter is real YAML (`yaml.safe_load`), so quotes, comments and multi-line values work. A
  file whose frontmatter is broken is skipped with a warning instead of half-parsed;
- the body is capped at 32 KB (UTF-8) with `[skill truncated at 32KB]`;
- a SKILL.md is used only when it resolves inside its own root's boundary: the workspace for the
  project's skills, the user config dir for the user's (a symlinked skill folder pointing elsewhere
  would put any file into the system prompt and the Skill tool's result). Skipped with a warning.

Only the catalog (id and description) goes into the system prompt; a body costs tokens only when used.
The catalog re-scans when a skill folder or file changes, so a new skill works without a restart.
It lives on the tools floor beside the Skill tool (`tools/skill.py`) that reads it; the system prompt and
`/skills` above share the same catalog through `ToolContext.skills`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tui_agent.core.config_files import read_bytes_capped
from tui_agent.core.tools.project_context import truncate_utf8

SKILL_FILE = "SKILL.md"
MAX_BODY_BYTES = 32 * 1024
TRUNCATED_NOTE = "\n\n[skill truncated at 32KB]"
MAX_FILE_BYTES = 1024 * 1024  # read no more than this of a SKILL.md (the body is cut at 32 KB anyway)
CATALOG_HEADER = (
    "## Available Skills\nUse the Skill tool with a skill name to load its instructions. When the user's "
    "message starts with /<skill-name>, load that skill first (the rest of the message is its args)."
)


class SkillError(Exception):
    """Why a SKILL.md was skipped (shown as a warning)."""


@dataclass(frozen=True)
class Skill:
    id: str
    name: str
    description: str | None
    body: str
    path: Path
    source: str
    truncated: bool = False

    @property
    def base_dir(self) -> Path:
        return self.path.parent


def skill_roots(workspace: Path, user_dir: Path | None) -> list[tuple[Path, str]]:
    """Where skills live, in priority order, with a short label for `/skills`."""
    workspace = Path(workspace)
    roots = [(workspace / ".agents" / "skills", ".agents/skills"), (workspace / ".claude" / "skills", ".claude/skills")]
    if user_dir is not None:
        roots.append((Path(user_dir), "user"))
    return roots


def default_user_dir() -> Path:
    from tui_agent.core.paths import config_dir

    return config_dir() / "skills"


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(frontmatter, body): frontmatter only when the file starts with a `---` line and closes it."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        return None, text
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r") == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1:])
    raise SkillError("the frontmatter starts with --- but has no closing --- line")


def parse_skill(path: Path, skill_id: str, source: str = "") -> Skill:
    """Read one SKILL.md; SkillError says why it cannot be used."""
    import yaml  # lazy: only paid when a skill exists

    try:
        data = read_bytes_capped(path, MAX_FILE_BYTES, cut=True)  # a FIFO or /dev/zero must not hang the turn
    except OSError as error:
        raise SkillError(f"cannot be read (it {error.strerror or error})") from None
    if data is None:
        raise SkillError("cannot be read (it is gone)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        if len(data) <= MAX_FILE_BYTES:
            raise SkillError("is not valid UTF-8 text") from None
        text = data.decode("utf-8-sig", errors="ignore")  # cut inside a character at the read limit
    frontmatter, body = split_frontmatter(text)
    meta: Any = {}
    if frontmatter is not None:
        try:
            meta = yaml.safe_load(frontmatter)
        except yaml.YAMLError as error:
            where = getattr(error, "problem_mark", None)
            at = f" (line {where.line + 2})" if where is not None else ""
            raise SkillError(f"has invalid YAML frontmatter{at}: {getattr(error, 'problem', None) or error}") from None
        except RecursionError:
            raise SkillError("has YAML frontmatter nested too deeply to read") from None
        if meta is None:
            meta = {}
        if not isinstance(meta, dict):
            raise SkillError("has frontmatter that is not a mapping of keys (name:, description:)")
    name = _text_field(meta, "name") or skill_id
    description = _text_field(meta, "description")
    body, truncated = truncate_utf8(body.strip(), MAX_BODY_BYTES, TRUNCATED_NOTE)
    return Skill(skill_id, name, description, body, path.resolve(), source, truncated)


def _text_field(meta: dict[str, Any], key: str) -> str | None:
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        raise SkillError(f"has a {key!r} that is not text")
    text = str(value).strip()
    return text or None


def discover_skills(workspace: Path, user_dir: Path | None = None) -> tuple[list[Skill], list[str]]:
    """Every usable skill (first id wins) and a warning per skipped or shadowed file."""
    skills: list[Skill] = []
    warnings: list[str] = []
    seen: dict[str, Skill] = {}
    for root, label in skill_roots(workspace, user_dir):
        boundaries = _boundaries(root, label, workspace, user_dir)
        for directory, skill_file in _candidates(root):
            resolved = skill_file.resolve()
            if not any(resolved == b or b in resolved.parents for b in boundaries):
                where = "the user config dir" if label == "user" else "the workspace"
                warnings.append(f"Skipped skill {skill_file}: it resolves to {resolved}, outside {where}.")
                continue
            try:
                skill = parse_skill(skill_file, directory.name, label)
            except SkillError as error:
                warnings.append(f"Skipped skill {skill_file}: it {error}.")
                continue
            earlier = seen.get(skill.id)
            if earlier is not None:
                if earlier.path != skill.path:  # the same file reached twice (a symlinked folder) is fine
                    warnings.append(f"Skill {skill.id!r} in {skill_file} is shadowed by {earlier.path}.")
                continue
            seen[skill.id] = skill
            skills.append(skill)
    return skills, warnings


def _boundaries(root: Path, label: str, workspace: Path, user_dir: Path | None) -> list[Path]:
    """Where a root's SKILL.md files may live once symlinks are resolved."""
    if label == "user" and user_dir is not None:
        from tui_agent.core.paths import config_dir

        return [Path(user_dir).resolve(), config_dir().resolve()]
    return [Path(workspace).resolve()]


def _candidates(root: Path) -> list[tuple[Path, Path]]:
    try:
        entries = sorted(root.iterdir(), key=lambda p: p.name)
    except OSError:
        return []
    found = []
    for directory in entries:
        skill_file = directory / SKILL_FILE
        try:
            if directory.is_dir() and skill_file.is_file():
                found.append((directory, skill_file))
        except OSError:
            continue
    return found


def _signature(workspace: Path, user_dir: Path | None) -> tuple:
    """What changes when a skill is added, removed or edited: folder listings and SKILL.md stats."""
    parts: list[Any] = []
    for root, _ in skill_roots(workspace, user_dir):
        for directory, skill_file in _candidates(root):
            try:
                info = skill_file.stat()
                parts.append((str(skill_file), info.st_mtime_ns, info.st_size))
            except OSError:
                continue
    return tuple(parts)


@dataclass
class SkillCatalog:
    """The session's skills, re-scanned when the files change; `warnings` are for the face to show."""

    workspace: Path
    user_dir: Path | None = None
    skills: list[Skill] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    version: int = 0
    _signature: tuple | None = field(default=None, repr=False)

    def refresh(self) -> bool:
        """Re-scan when anything changed; True when the catalog was (re)loaded."""
        signature = _signature(self.workspace, self.user_dir)
        if signature == self._signature:
            return False
        self.skills, self.warnings = discover_skills(self.workspace, self.user_dir)
        self._signature = signature
        self.version += 1
        return True

    def get(self, name: str) -> Skill | None:
        """By id (the directory name); a leading `/` or the display name also works, since models guess."""
        name = name.strip().lstrip("/")
        for skill in self.skills:
            if skill.id == name:
                return skill
        for skill in self.skills:
            if skill.name == name:
                return skill
        return None

    def ids(self) -> list[str]:
        return [skill.id for skill in self.skills]


class SkillsHost(Protocol):
    """Where a session keeps its catalog (`ToolContext` is one): its workspace and the catalog, made once."""

    workspace: Path
    skills: SkillCatalog | None


def catalog_for(ctx: SkillsHost) -> SkillCatalog:
    """The session's catalog, kept in `ctx.skills` so the Skill tool, the system prompt and `/skills` share it."""
    catalog = ctx.skills
    if catalog is None:
        catalog = ctx.skills = SkillCatalog(Path(ctx.workspace), default_user_dir())
    catalog.refresh()
    return catalog


def catalog_text(skills: list[Skill]) -> str:
    """The system prompt's skill list (seed format), or "" when there are none."""
    if not skills:
        return ""
    lines = [CATALOG_HEADER]
    for skill in skills:
        lines.append(f"- {skill.id} — {skill.description}" if skill.description else f"- {skill.id}")
    return "\n".join(lines)


def launch_text(skill: Skill, args: str = "") -> str:
    """The Skill tool_result: Claude Code's `Launching skill: <id>`, then the base directory, the
    arguments and the body (in the result itself, since the loop adds no message after a tool_result)."""
    args = args.strip()
    body = skill.body.replace("$ARGUMENTS", args) if "$ARGUMENTS" in skill.body else skill.body
    parts = [f"Launching skill: {skill.id}", f"Base directory for this skill: {skill.base_dir}"]
    if args:
        parts.append(f"Arguments: {args}")
    parts.append(body)
    return "\n\n".join(parts)
