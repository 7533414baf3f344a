"""Read: numbered lines, paging, caps, clear errors, images, and the mtime record Edit relies on."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from tui_agent.core.tools import builtin_tools
from tui_agent.core.tools.base import ToolContext, ToolError, validate_input
from tui_agent.core.tools.read import MAX_OUTPUT_CHARS, ReadTool

PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


async def read(tmp_path: Path, **tool_input) -> str:
    output = await ReadTool().call(tool_input, ToolContext(workspace=tmp_path))
    assert not output.is_error
    return output.content  # type: ignore[return-value]


async def read_error(tmp_path: Path, **tool_input) -> str:
    with pytest.raises(ToolError) as caught:
        await ReadTool().call(tool_input, ToolContext(workspace=tmp_path))
    return str(caught.value)


# -- AC-TL2, adapted to Claude Code's numbered output -------------------------------------------------
async def test_ac_tl2_whole_file_is_numbered_like_cat_n(tmp_path):
    (tmp_path / "notes.txt").write_text("hello read")
    assert await read(tmp_path, file_path="notes.txt") == "     1\thello read"


async def test_ac_tl2_offset_and_limit_select_lines(tmp_path):
    (tmp_path / "f.txt").write_text("one\ntwo\nthree\nfour\n")
    text = await read(tmp_path, file_path="f.txt", offset=2, limit=2)
    assert text.startswith("     2\ttwo\n     3\tthree\n\n")
    assert "offset=4" in text  # the note says how to read on


async def test_offset_zero_means_the_first_line_and_the_last_page_has_no_note(tmp_path):
    (tmp_path / "f.txt").write_text("one\ntwo\n")
    assert await read(tmp_path, file_path="f.txt", offset=0) == "     1\tone\n     2\ttwo"
    assert await read(tmp_path, file_path="f.txt", offset=2, limit=5) == "     2\ttwo"


async def test_ac_tl2_missing_file_is_a_clear_error_with_suggestions(tmp_path):
    (tmp_path / "config.yaml").write_text("x")
    message = await read_error(tmp_path, file_path="config.yml")
    assert message.startswith("File does not exist: config.yml.")
    assert "Did you mean config.yaml?" in message
    assert str(tmp_path.resolve()) in message  # says what relative paths resolve against


async def test_missing_file_in_missing_directory(tmp_path):
    message = await read_error(tmp_path, file_path=str(tmp_path / "nope" / "x.py"))
    assert message.startswith("File does not exist: nope/x.py.")
    assert "Did you mean" not in message and "Relative paths" not in message


def test_ac_tl2_read_is_read_only_and_concurrency_safe():
    tool = ReadTool()
    assert tool.is_read_only({"file_path": "x"}) and tool.is_concurrency_safe({"file_path": "x"})
    assert [t.name for t in builtin_tools()][:1] == ["Read"]


# -- errors ---------------------------------------------------------------------------------------------
async def test_a_directory_says_use_glob(tmp_path):
    (tmp_path / "src").mkdir()
    message = await read_error(tmp_path, file_path="src")
    assert "src is a directory" in message and "Glob" in message


async def test_binary_file_is_refused(tmp_path):
    (tmp_path / "blob.bin").write_bytes(b"abc\x00def" + b"x" * 100)
    assert "binary" in await read_error(tmp_path, file_path="blob.bin")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
async def test_a_named_pipe_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    assert "not a regular file" in await read_error(tmp_path, file_path="pipe")


async def test_empty_file_is_a_note_not_an_error(tmp_path):
    (tmp_path / "empty.txt").write_text("")
    assert await read(tmp_path, file_path="empty.txt") == "(The file empty.txt exists but is empty.)"


async def test_offset_past_the_end_is_a_note(tmp_path):
    (tmp_path / "f.txt").write_text("a\nb\nc\n")
    text = await read(tmp_path, file_path="f.txt", offset=10)
    assert text == "(The file f.txt has only 3 lines, fewer than offset 10. Use a smaller offset.)"


# -- limits ---------------------------------------------------------------------------------------------
async def test_default_limit_is_2000_lines(tmp_path):
    (tmp_path / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 2501)))
    text = await read(tmp_path, file_path="long.txt")
    body, note = text.split("\n\n")
    lines = body.split("\n")
    assert len(lines) == 2000 and lines[0] == "     1\tline 1" and lines[-1] == "  2000\tline 2000"
    assert "offset=2001" in note


async def test_long_lines_are_cut_with_a_marker(tmp_path):
    (tmp_path / "wide.txt").write_text("x" * 5000 + "\nshort\n")
    first, second = (await read(tmp_path, file_path="wide.txt")).split("\n")
    assert first == "     1\t" + "x" * 2000 + "… [line truncated: 3000 more characters]"
    assert second == "     2\tshort"


async def test_a_huge_single_line_is_not_loaded_whole(tmp_path):
    (tmp_path / "min.js").write_text("y" * 3_000_000 + "\nend")
    text = await read(tmp_path, file_path="min.js")
    assert len(text) < 3000 and "2998000 more characters" in text and text.endswith("     2\tend")


async def test_output_stops_at_the_character_cap_with_a_note(tmp_path):
    (tmp_path / "big.txt").write_text(("z" * 999 + "\n") * 1500)
    text = await read(tmp_path, file_path="big.txt")
    body, note = text.split("\n\n")
    shown = len(body.split("\n"))
    assert len(body) <= MAX_OUTPUT_CHARS and shown < 1500
    assert f"offset={shown + 1}" in note


async def test_paging_deep_into_a_large_file(tmp_path):
    (tmp_path / "many.txt").write_text("".join(f"{i}\n" for i in range(1, 50_001)))
    text = await read(tmp_path, file_path="many.txt", offset=49_999, limit=5)
    assert text == " 49999\t49999\n 50000\t50000"


async def test_crlf_and_bom_do_not_leak_into_lines(tmp_path):
    (tmp_path / "win.txt").write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")
    assert await read(tmp_path, file_path="win.txt") == "     1\ta\n     2\tb"


async def test_invalid_utf8_is_replaced_not_fatal(tmp_path):
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\n")
    assert await read(tmp_path, file_path="latin.txt") == "     1\tcaf\ufffd"


# -- paths and state ------------------------------------------------------------------------------------
async def test_relative_paths_resolve_against_the_workspace_not_cwd(tmp_path, monkeypatch):
    (tmp_path / "ws" / "src").mkdir(parents=True)
    (tmp_path / "ws" / "src" / "m.py").write_text("inside\n")
    monkeypatch.chdir(tmp_path)
    assert await read(tmp_path / "ws", file_path="src/m.py") == "     1\tinside"


async def test_absolute_paths_outside_the_workspace_are_read(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "outside.txt").write_text("out\n")
    assert await read(tmp_path / "ws", file_path=str(tmp_path / "outside.txt")) == "     1\tout"


async def test_a_successful_read_records_the_mtime(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("x\n")
    os.utime(target, (1_700_000_000, 1_700_000_000))
    ctx = ToolContext(workspace=tmp_path)
    await ReadTool().call({"file_path": "f.txt", "limit": 1}, ctx)
    assert ctx.read_files == {str(target.resolve()): 1_700_000_000.0}
    with pytest.raises(ToolError):
        await ReadTool().call({"file_path": "missing.txt"}, ctx)
    assert len(ctx.read_files) == 1


# -- images ---------------------------------------------------------------------------------------------
async def test_an_image_comes_back_as_an_image_block(tmp_path):
    (tmp_path / "dot.png").write_bytes(PNG_1PX)
    content = await read(tmp_path, file_path="dot.png")
    assert content == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG_1PX).decode()}}
    ]


async def test_the_media_type_comes_from_the_bytes_not_the_extension(tmp_path):
    (tmp_path / "photo.png").write_bytes(b"\xff\xd8\xff\xe0" + b"\x00" * 20)
    content = await read(tmp_path, file_path="photo.png")
    assert content[0]["source"]["media_type"] == "image/jpeg"


async def test_a_fake_or_huge_image_is_refused(tmp_path):
    (tmp_path / "fake.gif").write_text("not an image")
    assert "not a PNG, JPEG, GIF or WebP" in await read_error(tmp_path, file_path="fake.gif")
    with open(tmp_path / "huge.webp", "wb") as handle:
        handle.truncate(4 * 1024 * 1024)  # sparse: costs no disk
    assert "too large" in await read_error(tmp_path, file_path="huge.webp")


# -- schema ---------------------------------------------------------------------------------------------
def test_schema_is_claude_codes_and_enforced():
    tool = ReadTool()
    schema = tool.schema()
    assert schema["name"] == "Read"
    assert set(schema["input_schema"]["properties"]) == {"file_path", "offset", "limit"}
    assert schema["input_schema"]["required"] == ["file_path"]
    assert schema["input_schema"]["additionalProperties"] is False
    assert validate_input(tool, {"file_path": "a"}) is None
    assert validate_input(tool, {"path": "a"}) is not None
    assert validate_input(tool, {"file_path": "a", "limit": 0}) is not None
    assert validate_input(tool, {"file_path": "a", "offset": "2"}) is not None
    assert tool.summary({"file_path": "src/a.py", "offset": 3}) == "src/a.py"
    assert tool.paths({"file_path": "../x"}) == ["../x"]
