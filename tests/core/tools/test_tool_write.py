"""Write: created vs updated, parent folders, size cap, .git refusal, read-record update (AC-TL5 adapted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_agent.core.access.gate import PermissionPolicy
from tui_agent.core.tools.base import ToolContext, ToolError, validate_input
from tui_agent.core.tools.write import MAX_WRITE_BYTES, WriteTool


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path)


async def test_creates_then_updates(ctx: ToolContext, tmp_path: Path) -> None:
    tool = WriteTool()
    out = await tool.call({"file_path": "notes.txt", "content": "one"}, ctx)
    assert out.content == "File created successfully at: notes.txt" and not out.is_error
    out = await tool.call({"file_path": str(tmp_path / "notes.txt"), "content": "two"}, ctx)
    assert out.content == "File at notes.txt has been updated successfully."
    assert (tmp_path / "notes.txt").read_text() == "two"


async def test_creates_parent_folders_and_records_mtime(ctx: ToolContext, tmp_path: Path) -> None:
    await WriteTool().call({"file_path": "src/deep/new.py", "content": "x = 1\r\n"}, ctx)
    path = tmp_path / "src" / "deep" / "new.py"
    assert path.read_bytes() == b"x = 1\r\n"  # written byte for byte, no newline translation
    assert ctx.read_files[str(path.resolve())] == path.stat().st_mtime


async def test_content_too_large(ctx: ToolContext, tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="Content too large"):
        await WriteTool().call({"file_path": "big.txt", "content": "x" * (MAX_WRITE_BYTES + 1)}, ctx)
    assert not (tmp_path / "big.txt").exists()


async def test_refuses_git_internals(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    with pytest.raises(ToolError, match=r"\.git/"):
        await WriteTool().call({"file_path": ".git/config", "content": "x"}, ctx)
    with pytest.raises(ToolError, match=r"\.git/"):
        await WriteTool().call({"file_path": "sub/../.git/hooks/pre-commit", "content": "x"}, ctx)
    assert not (tmp_path / ".git" / "config").exists()


async def test_directory_and_file_in_the_way(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("")
    with pytest.raises(ToolError, match="is a directory"):
        await WriteTool().call({"file_path": "dir", "content": "x"}, ctx)
    with pytest.raises(ToolError, match="a file is in the way"):
        await WriteTool().call({"file_path": "file/child.txt", "content": "x"}, ctx)


def test_schema_names_the_field() -> None:
    tool = WriteTool()
    assert "content" in (validate_input(tool, {"file_path": "a"}) or "")
    assert "file_path" in (validate_input(tool, {"file_path": 3, "content": ""}) or "")
    assert "path" in (validate_input(tool, {"path": "a", "file_path": "a", "content": ""}) or "")
    assert not tool.is_read_only({}) and not tool.is_concurrency_safe({})


def test_preview_new_file_and_diff_for_existing(ctx: ToolContext, tmp_path: Path) -> None:
    tool = WriteTool()
    preview = tool.permission_preview({"file_path": "out.txt", "content": "hi"}, ctx)
    assert preview.startswith("Create out.txt (1 line, 2 bytes)") and preview.endswith("hi")
    (tmp_path / "out.txt").write_text("old\n")
    preview = tool.permission_preview({"file_path": "out.txt", "content": "new\n"}, ctx)
    assert preview.startswith("Overwrite out.txt") and "-old" in preview and "+new" in preview


def test_gate_refuses_paths_outside_the_workspace(tmp_path: Path) -> None:
    """`../`, absolute and symlinked paths out of the workspace never write without an explicit rule."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "link").symlink_to(tmp_path)
    ctx = ToolContext(workspace=workspace)
    tool = WriteTool()
    for raw in ("../escape.txt", str(tmp_path / "escape.txt"), "link/escape.txt"):
        tool_input = {"file_path": raw, "content": "x"}
        assert PermissionPolicy.headless(allow_write=True).decide(tool, tool_input, ctx).behavior == "deny"
        assert PermissionPolicy(mode="allow_all").decide(tool, tool_input, ctx).behavior == "deny"
        assert PermissionPolicy().decide(tool, tool_input, ctx).behavior == "ask"
        assert PermissionPolicy.headless(allow_write=False).decide(tool, tool_input, ctx).behavior == "deny"
    inside = {"file_path": "ok.txt", "content": "x"}
    assert PermissionPolicy.headless(allow_write=True).decide(tool, inside, ctx).behavior == "allow"
