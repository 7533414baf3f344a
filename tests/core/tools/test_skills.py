"""Skills: discovery, YAML frontmatter, id = folder name, 32 KB cap, catalog, /skills and /<skill> (AC-S1..S8 adapted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.turns import scripted_session
from tui_agent.core.agent.builtin_commands import INIT_PROMPT, register_builtin_commands
from tui_agent.core.agent.session import Session
from tui_agent.core.tools.skill_catalog import SkillCatalog, catalog_text, discover_skills
from tui_agent.core.agent.system_prompt import build_system_prompt, context_notices


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config"
    monkeypatch.setenv("TUI_AGENT_CONFIG_DIR", str(path))
    return path


@pytest.fixture
def ws(tmp_path: Path, config_dir: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def add_skill(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


REVIEW = "---\nname: review\ndescription: Review a change\n---\n# Review workflow\n"


def test_parse_review_skill(ws: Path) -> None:
    path = add_skill(ws / ".agents" / "skills", "review", REVIEW)
    skills, warnings = discover_skills(ws)
    assert warnings == [] and len(skills) == 1
    skill = skills[0]
    assert (skill.id, skill.name, skill.description, skill.body) == ("review", "review", "Review a change",
                                                                     "# Review workflow")
    assert skill.path == path.resolve() and skill.base_dir == path.parent.resolve()


def test_claude_folder_user_folder_and_order(ws: Path, config_dir: Path) -> None:
    add_skill(ws / ".claude" / "skills", "teach", "Teach things.")
    add_skill(ws / ".agents" / "skills", "zeta", "---\ndescription: last\n---\nz")
    add_skill(config_dir / "skills", "mine", "---\ndescription: 'quoted: with colon' # comment\n---\nm")
    catalog = SkillCatalog(ws, config_dir / "skills")
    catalog.refresh()
    assert catalog.ids() == ["zeta", "teach", "mine"]
    assert catalog.get("mine").description == "quoted: with colon"
    assert catalog.get("teach").description is None and catalog.get("teach").body == "Teach things."


def test_id_is_the_folder_name_name_is_display_only(ws: Path) -> None:
    add_skill(ws / ".agents" / "skills", "fallback-name", "---\ndescription: d\n---\nbody")
    add_skill(ws / ".agents" / "skills", "folder-id", "---\nname: Pretty Name\n---\nbody")
    catalog = SkillCatalog(ws)
    catalog.refresh()
    assert catalog.get("fallback-name").name == "fallback-name"
    assert catalog.get("folder-id").name == "Pretty Name"
    assert catalog.get("Pretty Name").id == "folder-id"  # the display name is accepted too


def test_no_roots(ws: Path) -> None:
    assert discover_skills(ws) == ([], [])


def test_body_capped_at_32kb(ws: Path) -> None:
    add_skill(ws / ".agents" / "skills", "big", "---\nname: big\n---\n" + "ü" * 20_000)
    skill = discover_skills(ws)[0][0]
    assert skill.truncated and skill.body.endswith("[skill truncated at 32KB]")
    assert len(skill.body.encode("utf-8")) <= 32768


@pytest.mark.parametrize("text, reason", [
    ("---\nname: [unclosed\n---\nbody", "invalid YAML"),
    ("---\n- a list\n---\nbody", "not a mapping"),
    ("---\nname: x\nbody without a closing line", "no closing"),
    ("---\ndescription: [1, 2]\n---\nbody", "not text"),
])
def test_broken_files_are_skipped_with_a_warning(ws: Path, text: str, reason: str) -> None:
    add_skill(ws / ".agents" / "skills", "broken", text)
    add_skill(ws / ".agents" / "skills", "good", REVIEW)
    skills, warnings = discover_skills(ws)
    assert [s.id for s in skills] == ["good"]
    assert len(warnings) == 1 and reason in warnings[0] and "broken" in warnings[0]


def test_non_utf8_file_is_skipped(ws: Path) -> None:
    path = ws / ".agents" / "skills" / "latin" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"caf\xe9")
    assert "UTF-8" in discover_skills(ws)[1][0]


def test_duplicate_ids_first_wins_with_a_warning(ws: Path) -> None:
    add_skill(ws / ".agents" / "skills", "review", REVIEW)
    add_skill(ws / ".claude" / "skills", "review", "other")
    skills, warnings = discover_skills(ws)
    assert len(skills) == 1 and skills[0].body == "# Review workflow" and "shadowed" in warnings[0]


def test_symlinked_skills_folder_is_not_a_duplicate(ws: Path) -> None:
    add_skill(ws / ".agents" / "skills", "review", REVIEW)
    (ws / ".claude").mkdir()
    (ws / ".claude" / "skills").symlink_to(ws / ".agents" / "skills")
    assert discover_skills(ws)[1] == []


def test_catalog_text() -> None:
    assert catalog_text([]) == ""


def make_session(ws: Path) -> Session:
    session = scripted_session(ws, system_prompt_builder=build_system_prompt)
    register_builtin_commands(session)
    return session


def test_system_prompt_lists_skills_after_the_project_context(ws: Path) -> None:
    (ws / "AGENTS.md").write_text("Project rules")
    add_skill(ws / ".agents" / "skills", "review", REVIEW)
    add_skill(ws / ".claude" / "skills", "teach", "Teach.")
    prompt = make_session(ws).system_prompt()
    assert "Project rules" in prompt and "## Available Skills" in prompt
    assert "- review — Review a change" in prompt and "\n- teach" in prompt
    assert prompt.index("Project rules") < prompt.index("## Available Skills")


async def test_skills_and_skill_commands(ws: Path) -> None:
    add_skill(ws / ".agents" / "skills", "review", REVIEW)
    add_skill(ws / ".agents" / "skills", "init", "---\ndescription: clashes with /init\n---\nx")
    add_skill(ws / ".agents" / "skills", "bad", "---\nname: [\n---\n")
    session = make_session(ws)
    listing = await session.commands.run(session, "/skills")
    assert "/review — Review a change" in listing.text and "Warning: Skipped skill" in listing.text
    assert listing.level == "warning"
    result = await session.commands.run(session, "/review src/app.py")
    assert result.prompt == "/review src/app.py"
    assert (await session.commands.run(session, "/init")).prompt == INIT_PROMPT  # the built-in wins
    assert any("Skipped skill" in n.text for n in context_notices(session))


async def test_new_skill_appears_without_restart(ws: Path) -> None:
    session = make_session(ws)
    assert session.commands.get("teach") is None
    add_skill(ws / ".agents" / "skills", "teach", "---\ndescription: Teach\n---\nT")
    assert "- teach — Teach" in session.system_prompt()
    assert session.commands.get("teach") is not None
    (ws / ".agents" / "skills" / "teach" / "SKILL.md").unlink()
    session.system_prompt()
    assert session.commands.get("teach") is None


async def test_init_prompt(ws: Path) -> None:
    session = make_session(ws)
    result = await session.commands.run(session, "/init focus on tests")
    assert "AGENTS.md" in result.prompt and result.prompt.endswith("focus on tests")
    assert "# AGENTS.md" in INIT_PROMPT


def test_skill_symlinked_out_of_the_workspace_is_skipped(ws: Path, tmp_path: Path, config_dir: Path) -> None:
    """Issue 9, item 5: a repository's skill folder pointing elsewhere must not load that file."""
    outside = tmp_path / "elsewhere" / "steal"
    outside.mkdir(parents=True)
    (outside / "SKILL.md").write_text("---\nname: steal\n---\nPRIVATE NOTES\n")
    (ws / ".claude" / "skills").mkdir(parents=True)
    (ws / ".claude" / "skills" / "steal").symlink_to(outside)
    add_skill(config_dir / "skills", "mine", REVIEW)  # the user's own skills stay usable
    skills, warnings = discover_skills(ws, config_dir / "skills")
    assert [s.id for s in skills] == ["mine"]
    assert len(warnings) == 1 and "outside the workspace" in warnings[0]
