"""Project context: AGENTS.md / CLAUDE.md lookup, merge, cap, reload, and its place in the system prompt."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.turns import scripted_session
from tui_agent.core.tools.project_context import ProjectContext, load_project_context
from tui_agent.core.providers.scripted import text_reply
from tui_agent.core.agent.session import Session
from tui_agent.core.agent.system_prompt import build_system_prompt, context_notices


@pytest.fixture(autouse=True)
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TUI_AGENT_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "config"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.mark.parametrize("name", ["AGENTS.md", "CLAUDE.md"])
def test_single_file_verbatim(repo: Path, name: str) -> None:
    (repo / name).write_text("rules\n  indented\n")
    loaded = load_project_context(repo)
    assert loaded is not None and loaded.text == "rules\n  indented\n" and loaded.files == (repo / name,)


def test_both_files_agents_first(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("agents")
    (repo / "CLAUDE.md").write_text("claude")
    assert load_project_context(repo).text == "agents\n\n---\n\nclaude"


def test_nothing_found(repo: Path) -> None:
    assert load_project_context(repo) is None


def test_found_in_an_ancestor_first_directory_wins(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("from parent")
    child = repo / "pkg" / "src"
    child.mkdir(parents=True)
    assert load_project_context(child).text == "from parent"
    (repo / "pkg" / "CLAUDE.md").write_text("from pkg")
    assert load_project_context(child).text == "from pkg"


def test_stops_at_the_git_root(tmp_path: Path, repo: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("above the repository")
    assert load_project_context(repo) is None


def test_cap_at_64kb(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("é" * 40_000)  # 80,000 bytes, cut inside no character
    loaded = load_project_context(repo)
    assert loaded.truncated and loaded.text.endswith("[project context truncated at 64KB]")
    assert len(loaded.text.encode("utf-8")) <= 65536
    (repo / "AGENTS.md").write_text("x" * (64 * 1024 + 1))
    assert load_project_context(repo).text.endswith("[project context truncated at 64KB]")


def test_reload_when_the_file_changes(repo: Path) -> None:
    cache = ProjectContext(repo)
    assert cache.get() is None
    (repo / "AGENTS.md").write_text("v1")
    assert cache.get().text == "v1"
    (repo / "AGENTS.md").write_text("version 2")
    stamp = (repo / "AGENTS.md").stat().st_mtime + 2
    os.utime(repo / "AGENTS.md", (stamp, stamp))
    assert cache.get().text == "version 2"
    (repo / "AGENTS.md").unlink()
    assert cache.get() is None


def make_session(repo: Path) -> Session:
    return scripted_session(repo, [text_reply("ok")], system_prompt_builder=build_system_prompt)


async def test_in_the_system_prompt_and_kept_across_clear(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("Always run pytest.\n")
    session = make_session(repo)
    prompt = session.system_prompt()
    assert prompt.startswith("You are tui-agent") and "Always run pytest." in prompt and "AGENTS.md" in prompt
    async for _ in session.run_turn("hi"):
        pass
    assert "Always run pytest." in session.provider.requests[0].system
    assert all("Always run pytest." not in str(m) for m in session.history)  # never in the history
    session.clear()
    assert "Always run pytest." in session.system_prompt()


def test_system_prompt_without_context_or_skills(repo: Path) -> None:
    prompt = make_session(repo).system_prompt()
    assert "Project instructions" not in prompt and "Available Skills" not in prompt
    assert "Edit" in prompt and "Bash" in prompt


def test_truncation_notice(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("x" * 70_000)
    notices = context_notices(make_session(repo))
    assert any("64 KB" in n.text for n in notices)


# -- symlinks out of the workspace (issue 9, item 5) ---------------------------------------------------
def test_context_file_symlinked_out_of_the_workspace_is_not_loaded(tmp_path: Path) -> None:
    from tui_agent.core.tools.project_context import load_with_warnings

    secret = tmp_path / "home" / ".aws" / "credentials"
    secret.parent.mkdir(parents=True)
    secret.write_text("aws_secret_access_key = SECRET\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "CLAUDE.md").symlink_to(secret)
    (repo / "docs").mkdir()
    (repo / "docs" / "agents.md").write_text("inside\n")
    (repo / "AGENTS.md").symlink_to(repo / "docs" / "agents.md")  # a symlink inside the workspace is fine
    loaded, warnings = load_with_warnings(repo)
    assert loaded is not None and "SECRET" not in loaded.text and loaded.text.strip() == "inside"
    assert len(warnings) == 1 and "outside the workspace" in warnings[0] and "CLAUDE.md" in warnings[0]


async def test_symlinked_context_never_reaches_the_provider(tmp_path: Path, monkeypatch) -> None:
    from tui_agent.core.agent.factory import build_session
    from tui_agent.core.agent.system_prompt import context_notices

    monkeypatch.setenv("TUI_AGENT_CONFIG_DIR", str(tmp_path / "config"))
    secret = tmp_path / "credentials"
    secret.write_text("TOP-SECRET\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "CLAUDE.md").symlink_to(secret)
    session, _ = build_session(repo, model="demo", env={"TUI_AGENT_CONFIG_DIR": str(tmp_path / "config")})
    assert "TOP-SECRET" not in session.system_prompt()
    assert any("outside the workspace" in n.text for n in context_notices(session))


def test_fifo_as_agents_md_does_not_hang(tmp_path: Path) -> None:
    import os

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    os.mkfifo(repo / "AGENTS.md")
    (repo / "CLAUDE.md").write_text("claude\n")
    assert load_project_context(repo).text == "claude\n"


def test_a_symlink_loop_is_skipped_with_a_warning(tmp_path: Path) -> None:
    """Issue 19 item 9: `AGENTS.md -> AGENTS.md` used to raise "Symlink loop" on every turn."""
    from tui_agent.core.tools.project_context import load_with_warnings

    (tmp_path / ".git").mkdir()
    (tmp_path / "AGENTS.md").symlink_to("AGENTS.md")
    (tmp_path / "CLAUDE.md").write_text("the real instructions")
    loaded, warnings = load_with_warnings(tmp_path)
    assert loaded is not None and loaded.text == "the real instructions"
    assert len(warnings) == 1 and "symlink loop" in warnings[0]
    context = ProjectContext(tmp_path)
    assert context.get().text == "the real instructions" and context.warnings == warnings


def test_headless_runs_with_a_looping_agents_md(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "AGENTS.md").symlink_to("CLAUDE.md")
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[3])
    out = subprocess.run([sys.executable, "-m", "tui_agent", "-p", "hello"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    assert "symlink loop" in out.stderr
