"""Edit: literal unique replacement, replace_all, CRLF/BOM kept, read-first rule (AC-TL6 adapted)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tui_agent.core.access.gate import PermissionPolicy
from tui_agent.core.tools.base import ToolContext, ToolError, validate_input
from tui_agent.core.tools import edit as edit_module
from tui_agent.core.tools.edit import EditTool
from tui_agent.core.tools.read import ReadTool


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path)


async def prepared(ctx: ToolContext, name: str, data: bytes) -> Path:
    """Create a file and Read it, as the model must before editing."""
    path = ctx.workspace / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    await ReadTool().call({"file_path": name}, ctx)
    return path


async def edit(ctx: ToolContext, **tool_input):
    return await EditTool().call({"file_path": "a.txt", **tool_input}, ctx)


async def test_unique_replace(ctx: ToolContext) -> None:
    path = await prepared(ctx, "a.txt", b"hello world\n")
    out = await edit(ctx, old_string="world", new_string="bun")
    assert path.read_text() == "hello bun\n"
    assert out.content.startswith("The file a.txt has been updated successfully.")
    assert "     1\thello bun" in out.content


async def test_literal_replacement_no_dollar_or_backslash_expansion(ctx: ToolContext) -> None:
    path = await prepared(ctx, "a.txt", b"price = X\n")
    await edit(ctx, old_string="X", new_string=r"$& $$ $1 \1 \n")
    assert path.read_text() == "price = $& $$ $1 \\1 \\n\n"


async def test_missing_and_not_unique_leave_the_file_unchanged(ctx: ToolContext) -> None:
    path = await prepared(ctx, "a.txt", b"aa aa aa\n")
    with pytest.raises(ToolError, match="String to replace not found"):
        await edit(ctx, old_string="zz", new_string="y")
    with pytest.raises(ToolError, match="Found 3 matches.*replace_all"):
        await edit(ctx, old_string="aa", new_string="bb")
    assert path.read_text() == "aa aa aa\n"


async def test_replace_all(ctx: ToolContext) -> None:
    path = await prepared(ctx, "a.txt", b"aa aa aa\n")
    out = await edit(ctx, old_string="aa", new_string="bb", replace_all=True)
    assert path.read_text() == "bb bb bb\n" and "All 3 occurrences" in out.content


async def test_same_strings_and_missing_file(ctx: ToolContext) -> None:
    path = await prepared(ctx, "a.txt", b"same\n")
    with pytest.raises(ToolError, match="exactly the same"):
        await edit(ctx, old_string="same", new_string="same")
    assert path.read_text() == "same\n"
    with pytest.raises(ToolError, match="File does not exist"):
        await EditTool().call({"file_path": "nope.txt", "old_string": "a", "new_string": "b"}, ctx)


async def test_empty_old_string_creates_a_new_file_only(ctx: ToolContext) -> None:
    out = await EditTool().call({"file_path": "new/file.txt", "old_string": "", "new_string": "hi\n"}, ctx)
    assert out.content == "File created successfully at: new/file.txt"
    assert (ctx.workspace / "new" / "file.txt").read_text() == "hi\n"
    with pytest.raises(ToolError, match="old_string is empty"):
        await EditTool().call({"file_path": "new/file.txt", "old_string": "", "new_string": "x"}, ctx)


async def test_crlf_file_matched_on_lf_view_and_kept_crlf(ctx: ToolContext) -> None:
    path = await prepared(ctx, "a.txt", b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    await edit(ctx, old_string="one\ntwo\n", new_string="uno\ndos\nextra\n")
    assert path.read_bytes() == b"\xef\xbb\xbfuno\r\ndos\r\nextra\r\nthree\r\n"


async def test_mixed_line_endings_try_the_crlf_form(ctx: ToolContext) -> None:
    path = await prepared(ctx, "a.txt", b"a\r\nb\r\nc\nd\n")
    await edit(ctx, old_string="a\nb", new_string="x\ny")
    assert path.read_bytes() == b"x\r\ny\r\nc\nd\n"


async def test_refuses_a_file_not_read(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    with pytest.raises(ToolError, match="read it first with the Read tool"):
        await edit(ctx, old_string="hello", new_string="bye")
    assert (tmp_path / "a.txt").read_text() == "hello\n"


async def test_refuses_a_file_changed_since_read(ctx: ToolContext) -> None:
    path = await prepared(ctx, "a.txt", b"hello\n")
    path.write_text("hello changed\n")
    stamp = path.stat().st_mtime + 5
    os.utime(path, (stamp, stamp))
    with pytest.raises(ToolError, match="modified since it was read.*Read tool"):
        await edit(ctx, old_string="hello", new_string="bye")
    assert path.read_text() == "hello changed\n"


async def test_two_edits_in_a_row_need_no_reread(ctx: ToolContext) -> None:
    path = await prepared(ctx, "a.txt", b"a b\n")
    await edit(ctx, old_string="a", new_string="x")
    await edit(ctx, old_string="b", new_string="y")
    assert path.read_text() == "x y\n"


async def test_binary_non_utf8_and_too_large(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    path = ctx.workspace / "a.txt"
    path.write_bytes(b"\x00\x01binary")
    ctx.read_files[str(path.resolve())] = path.stat().st_mtime
    with pytest.raises(ToolError, match="binary"):
        await edit(ctx, old_string="binary", new_string="x")
    path.write_bytes(b"caf\xe9 latin-1")
    ctx.read_files[str(path.resolve())] = path.stat().st_mtime
    with pytest.raises(ToolError, match="not valid UTF-8"):
        await edit(ctx, old_string="latin", new_string="x")
    monkeypatch.setattr(edit_module, "MAX_EDIT_BYTES", 10)
    path.write_text("UNIQUE_MARKER and more")
    ctx.read_files[str(path.resolve())] = path.stat().st_mtime
    with pytest.raises(ToolError, match="too large"):
        await edit(ctx, old_string="UNIQUE_MARKER", new_string="x")


async def test_refuses_git_internals(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    with pytest.raises(ToolError, match=r"\.git/"):
        await EditTool().call({"file_path": ".git/config", "old_string": "core", "new_string": "x"}, ctx)


def test_preview_is_a_unified_diff(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.ts").write_text("const foo = 1;\nconst bar = 2;\n")
    preview = EditTool().permission_preview(
        {"file_path": "src/a.ts", "old_string": "foo", "new_string": "baz"}, ctx)
    assert preview.splitlines()[0] == "Edit src/a.ts"
    assert "--- a/src/a.ts" in preview and "-const foo = 1;" in preview and "+const baz = 1;" in preview
    failing = EditTool().permission_preview({"file_path": "src/a.ts", "old_string": "zzz", "new_string": "y"}, ctx)
    assert "the edit will fail" in failing and "-zzz" in failing


def test_schema_and_flags() -> None:
    tool = EditTool()
    assert "old_string" in (validate_input(tool, {"file_path": "a", "new_string": "b"}) or "")
    assert "replace_all" in (validate_input(tool, {"file_path": "a", "old_string": "a", "new_string": "b",
                                                    "replace_all": "yes"}) or "")
    assert not tool.is_read_only({})


def test_gate_on_escapes(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "out").symlink_to(tmp_path)
    ctx = ToolContext(workspace=workspace)
    for raw in ("../x.txt", str(tmp_path / "x.txt"), "out/x.txt", "~/x.txt"):
        tool_input = {"file_path": raw, "old_string": "a", "new_string": "b"}
        decision = PermissionPolicy.headless(allow_write=True).decide(EditTool(), tool_input, ctx)
        assert decision.behavior == "deny" and "outside the workspace" in decision.message


async def test_preview_warns_outside_and_unread(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "x.txt").write_text("abc\n")
    ctx = ToolContext(workspace=workspace)
    preview = EditTool().permission_preview({"file_path": "../x.txt", "old_string": "b", "new_string": "B"}, ctx)
    assert preview.startswith("Warning:") and "OUTSIDE the workspace" in preview
    assert "has not been read" in preview and "+aBc" in preview
