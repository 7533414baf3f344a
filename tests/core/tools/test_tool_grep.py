"""Grep: ripgrep behind Claude Code's schema: modes, flags, order, paging, caps, errors, cancellation.

The last test is the seed's AC-TL8 smoke: Grep then Read through the real loop and Session.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

from tui_agent.core import events as ev
from tui_agent.core.messages import tool_results
from tui_agent.core.access.gate import PermissionPolicy
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply
from tui_agent.core.agent.session import Session
from tui_agent.core.tools import ToolRegistry, builtin_tools
from tui_agent.core.tools import grep as grep_module
from tui_agent.core.tools.base import ToolContext, ToolError, validate_input
from tui_agent.core.tools.grep import MAX_OUTPUT_CHARS, NO_MATCHES, GrepTool
from tui_agent.core.tools.ripgrep import split_globs
from tui_agent.core.tools.paths import find_rg


def write(root: Path, name: str, text: str, mtime: float | None = None) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


async def grep(root: Path, **tool_input) -> str:
    output = await GrepTool().call(tool_input, ToolContext(workspace=root))
    assert not output.is_error
    return output.content  # type: ignore[return-value]


async def grep_error(root: Path, **tool_input) -> str:
    with pytest.raises(ToolError) as caught:
        await GrepTool().call(tool_input, ToolContext(workspace=root))
    return str(caught.value)


# -- AC-TL4, adapted to Claude Code's output modes ------------------------------------------------------
async def test_ac_tl4_content_lines_are_path_line_text(tmp_path):
    write(tmp_path, "a.txt", "zero\nsome foo here\n")
    assert re.search(r"a\.txt:2:.*foo", await grep(tmp_path, pattern="foo", output_mode="content"))


async def test_ac_tl4_path_limits_the_search(tmp_path):
    write(tmp_path, "src/in.ts", "needle\n")
    write(tmp_path, "out.ts", "needle\n")
    text = await grep(tmp_path, pattern="needle", path="src", output_mode="content")
    assert text == "src/in.ts:1:needle"


def test_ac_tl4_a_path_outside_the_workspace_is_refused_by_the_gate(tmp_path):
    (tmp_path / "ws").mkdir()
    decision = PermissionPolicy.headless().decide(
        GrepTool(), {"pattern": "x", "path": "../outside"}, ToolContext(workspace=tmp_path / "ws")
    )
    assert decision.behavior == "deny" and "outside the workspace" in decision.message


async def test_ac_tl4_head_limit_cuts_with_a_note(tmp_path):
    write(tmp_path, "ten.txt", "".join(f"match {i}\n" for i in range(10)))
    text = await grep(tmp_path, pattern="match", output_mode="content", head_limit=3)
    body, note = text.split("\n\n")
    assert body.split("\n") == ["ten.txt:1:match 0", "ten.txt:2:match 1", "ten.txt:3:match 2"]
    assert "truncated" in note and "offset=3" in note


# -- modes ----------------------------------------------------------------------------------------------
async def test_files_with_matches_is_the_default_newest_first(tmp_path):
    write(tmp_path, "old.py", "target\n", mtime=1_000_000)
    write(tmp_path, "new.py", "target\n", mtime=3_000_000)
    write(tmp_path, "b.py", "target\n", mtime=2_000_000)
    write(tmp_path, "a.py", "target\n", mtime=2_000_000)
    write(tmp_path, "none.py", "other\n")
    assert await grep(tmp_path, pattern="target") == "Found 4 files\nnew.py\na.py\nb.py\nold.py"


async def test_count_mode_is_sorted_with_a_total(tmp_path):
    write(tmp_path, "b.txt", "x\nx\nx\n")
    write(tmp_path, "a.txt", "x\n")
    assert await grep(tmp_path, pattern="x", output_mode="count") == (
        "a.txt:1\nb.txt:3\n\nFound 4 matching lines across 2 files."
    )


async def test_content_is_sorted_by_path(tmp_path):
    for name in ("c.txt", "a.txt", "b/z.txt", "b/a.txt"):
        write(tmp_path, name, "hit\n")
    text = await grep(tmp_path, pattern="hit", output_mode="content")
    assert [line.split(":")[0] for line in text.split("\n")] == ["a.txt", "b/a.txt", "b/z.txt", "c.txt"]


# -- flags ----------------------------------------------------------------------------------------------
async def test_case_insensitive_and_line_numbers_off(tmp_path):
    write(tmp_path, "a.txt", "Hello\nhello\nother\n")
    assert await grep(tmp_path, pattern="HELLO", output_mode="content") == NO_MATCHES
    assert await grep(tmp_path, pattern="HELLO", output_mode="content", **{"-i": True}) == "a.txt:1:Hello\na.txt:2:hello"
    assert await grep(tmp_path, pattern="other", output_mode="content", **{"-n": False}) == "a.txt:other"


async def test_context_lines(tmp_path):
    write(tmp_path, "a.txt", "1\n2\nMID\n4\n5\n")
    assert await grep(tmp_path, pattern="MID", output_mode="content", **{"-C": 1}) == "a.txt-2-2\na.txt:3:MID\na.txt-4-4"
    assert await grep(tmp_path, pattern="MID", output_mode="content", **{"-B": 2}) == "a.txt-1-1\na.txt-2-2\na.txt:3:MID"
    assert await grep(tmp_path, pattern="MID", output_mode="content", **{"-A": 1}) == "a.txt:3:MID\na.txt-4-4"
    # Context flags are ignored outside content mode, as documented.
    assert await grep(tmp_path, pattern="MID", **{"-C": 3}) == "Found 1 file\na.txt"


async def test_glob_and_type_filters(tmp_path):
    for name in ("a.py", "b.ts", "c.tsx", "d.js"):
        write(tmp_path, name, "token\n")
    assert await grep(tmp_path, pattern="token", glob="*.py") == "Found 1 file\na.py"
    assert sorted((await grep(tmp_path, pattern="token", glob="*.{ts,tsx}")).split("\n")[1:]) == ["b.ts", "c.tsx"]
    assert sorted((await grep(tmp_path, pattern="token", glob="*.py,*.js")).split("\n")[1:]) == ["a.py", "d.js"]
    assert await grep(tmp_path, pattern="token", type="py") == "Found 1 file\na.py"


def test_split_globs():
    assert split_globs("*.ts *.tsx") == ["*.ts", "*.tsx"]
    assert split_globs("*.py,*.js") == ["*.py", "*.js"]
    assert split_globs("*.{ts,tsx}") == ["*.{ts,tsx}"]
    assert split_globs("") == []


async def test_multiline(tmp_path):
    write(tmp_path, "a.txt", "start\nmiddle\nend\n")
    assert await grep(tmp_path, pattern="start.*end", output_mode="count") == NO_MATCHES
    assert "a.txt:1:start" in await grep(tmp_path, pattern="start.*end", output_mode="content", multiline=True)


async def test_a_pattern_that_looks_like_a_flag(tmp_path):
    write(tmp_path, "a.txt", "x --force y\n")
    assert await grep(tmp_path, pattern="--force", output_mode="content") == "a.txt:1:x --force y"


async def test_a_single_file_path_still_shows_the_path(tmp_path):
    write(tmp_path, "src/one.py", "def f():\n    pass\n")
    assert await grep(tmp_path, pattern="def", path="src/one.py", output_mode="content") == "src/one.py:1:def f():"


# -- ignore rules, hidden files, binaries ------------------------------------------------------------------
async def test_gitignore_and_git_dir_are_skipped_hidden_files_are_not(tmp_path):
    write(tmp_path, ".gitignore", "build/\n")
    write(tmp_path, "build/out.js", "needle\n")
    write(tmp_path, ".git/config", "needle\n")
    write(tmp_path, ".github/ci.yml", "needle\n")
    write(tmp_path, "src/main.js", "needle\n")
    assert sorted((await grep(tmp_path, pattern="needle")).split("\n")[1:]) == [".github/ci.yml", "src/main.js"]


async def test_binary_files_are_not_listed_as_text(tmp_path):
    (tmp_path / "blob.bin").write_bytes(b"needle\x00\x01\x02")
    write(tmp_path, "a.txt", "needle\n")
    assert await grep(tmp_path, pattern="needle") == "Found 1 file\na.txt"


# -- limits ----------------------------------------------------------------------------------------------
async def test_default_head_limit_is_250_and_zero_is_unlimited(tmp_path):
    write(tmp_path, "many.txt", "hit\n" * 300)
    text = await grep(tmp_path, pattern="hit", output_mode="content")
    body, note = text.split("\n\n")
    assert len(body.split("\n")) == 250 and "offset=250" in note
    assert len((await grep(tmp_path, pattern="hit", output_mode="content", head_limit=0)).split("\n")) == 300


async def test_head_limit_in_files_mode_says_how_many(tmp_path):
    for i in range(12):
        write(tmp_path, f"f{i:02}.txt", "hit\n", mtime=1_000_000 + i)
    text = await grep(tmp_path, pattern="hit", head_limit=5)
    lines = text.split("\n")
    assert lines[0] == "Found 12 files" and lines[1:6] == ["f11.txt", "f10.txt", "f09.txt", "f08.txt", "f07.txt"]
    assert "showing 5 of 12 files" in lines[-1]


async def test_offset_pages(tmp_path):
    write(tmp_path, "a.txt", "".join(f"hit {i}\n" for i in range(6)))
    text = await grep(tmp_path, pattern="hit", output_mode="content", offset=2, head_limit=2)
    assert text.split("\n\n")[0] == "a.txt:3:hit 2\na.txt:4:hit 3"
    assert "offset=4" in text
    assert "No results at offset 10" in await grep(tmp_path, pattern="hit", output_mode="count", offset=10)


async def test_total_output_is_capped(tmp_path):
    write(tmp_path, "wide.txt", ("w" * 400 + "\n") * 200)
    text = await grep(tmp_path, pattern="w", output_mode="content", head_limit=0)
    body, note = text.split("\n\n")
    assert len(body) <= MAX_OUTPUT_CHARS and f"{MAX_OUTPUT_CHARS} characters" in note


async def test_long_lines_are_cut_by_ripgrep(tmp_path):
    write(tmp_path, "min.js", "needle" + "q" * 5000 + "\n")
    text = await grep(tmp_path, pattern="needle", output_mode="content")
    assert text.startswith("min.js:1:needle") and len(text) < 700 and "omitted" in text


# -- errors ----------------------------------------------------------------------------------------------
async def test_no_matches(tmp_path):
    write(tmp_path, "a.txt", "abc\n")
    assert await grep(tmp_path, pattern="zzz") == NO_MATCHES
    assert await grep(tmp_path, pattern="zzz", output_mode="content") == NO_MATCHES


async def test_invalid_regex_is_a_clear_error(tmp_path):
    write(tmp_path, "a.txt", "abc\n")
    message = await grep_error(tmp_path, pattern="foo(")
    assert message.startswith("Invalid regular expression 'foo('") and "unclosed group" in message


async def test_unknown_type_and_missing_path(tmp_path):
    assert "unrecognized file type" in await grep_error(tmp_path, pattern="x", type="nosuchtype")
    assert await grep_error(tmp_path, pattern="x", path="nope") == "Path does not exist: nope"


async def test_relative_paths_use_the_workspace_not_cwd(tmp_path, monkeypatch):
    write(tmp_path, "ws/src/a.py", "here\n")
    write(tmp_path, "src/b.py", "here\n")
    monkeypatch.chdir(tmp_path)
    assert await grep(tmp_path / "ws", pattern="here", path="src") == "Found 1 file\nsrc/a.py"
    assert await grep(tmp_path / "ws", pattern="here") == "Found 1 file\nsrc/a.py"


async def test_paths_outside_the_workspace_are_absolute(tmp_path):
    write(tmp_path, "other/x.md", "hit\n")
    (tmp_path / "ws").mkdir()
    text = await grep(tmp_path / "ws", pattern="hit", path=str(tmp_path / "other"), output_mode="content")
    assert text == f"{(tmp_path / 'other' / 'x.md').resolve()}:1:hit"


async def test_missing_rg_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(grep_module, "find_rg", lambda: None)
    assert "ripgrep (rg) is not installed" in await grep_error(tmp_path, pattern="x")


def test_rg_next_to_the_interpreter_is_preferred():
    found = find_rg()
    assert found is not None
    local = Path(sys.executable).parent / "rg"
    if local.exists():
        assert found == str(local)


@pytest.mark.skipif(os.name == "nt", reason="uses a shell script as a fake rg")
async def test_cancelling_the_call_kills_rg(tmp_path, monkeypatch):
    pid_file = tmp_path / "pid"
    fake = tmp_path / "fake-rg"
    fake.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 30\n")
    fake.chmod(0o755)
    monkeypatch.setattr(grep_module, "find_rg", lambda: str(fake))
    task = asyncio.create_task(GrepTool().call({"pattern": "x"}, ToolContext(workspace=tmp_path)))
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.01)
    pid = int(pid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


# -- schema ----------------------------------------------------------------------------------------------
def test_schema_is_claude_codes_and_enforced():
    tool = GrepTool()
    schema = tool.schema()["input_schema"]
    props = schema["properties"]
    assert {"pattern", "path", "glob", "type", "output_mode", "-i", "-n", "-A", "-B", "-C", "head_limit"} <= set(props)
    assert props["output_mode"]["enum"] == ["content", "files_with_matches", "count"]
    assert props["-i"]["type"] == props["-n"]["type"] == "boolean"
    assert props["-A"]["type"] == props["head_limit"]["type"] == "integer"
    assert schema["additionalProperties"] is False and schema["required"] == ["pattern"]
    assert all(p.get("description") for p in props.values())
    assert validate_input(tool, {"pattern": "x", "output_mode": "lines"}) is not None
    assert validate_input(tool, {"pattern": "x", "-A": -1}) is not None
    assert validate_input(tool, {"pattern": "x", "include": "*.py"}) is not None
    assert validate_input(tool, {"pattern": "x", "-i": True, "-C": 2, "head_limit": 0}) is None
    assert tool.is_read_only({}) and tool.summary({"pattern": "TODO", "path": "src"}) == "TODO in src"


# -- AC-TL8: the real loop -----------------------------------------------------------------------------------
async def test_ac_tl8_grep_then_read_through_the_loop(tmp_path):
    write(tmp_path, "src/symbol.ts", "export const SMOKE_SYMBOL = 'find-me';\n")
    write(tmp_path, "src/other.ts", "nothing here\n")
    provider = ScriptedProvider(replies=[
        tool_reply("Grep", {"pattern": "SMOKE_SYMBOL"}, "g1"),
        tool_reply("Read", {"file_path": "src/symbol.ts"}, "r1"),
        text_reply("SMOKE_SYMBOL is defined in src/symbol.ts."),
    ])
    session = Session(provider, ToolRegistry(builtin_tools()), tmp_path, permissions=PermissionPolicy.headless())
    events = [event async for event in session.run_turn("where is SMOKE_SYMBOL?")]
    assert events[-1] == ev.TurnEnded("completed", 3)
    results = [block for message in session.history for block in tool_results(message)]
    assert [r.get("is_error", False) for r in results] == [False, False]
    assert results[0]["content"] == "Found 1 file\nsrc/symbol.ts"
    assert "find-me" in results[1]["content"] and results[1]["content"].startswith("     1\t")
    assert str((tmp_path / "src" / "symbol.ts").resolve()) in session.ctx.read_files


async def test_path_spelled_undefined_means_the_workspace(tmp_path):
    write(tmp_path, "a.txt", "hit\n")
    assert await grep(tmp_path, pattern="hit", path="undefined") == "Found 1 file\na.txt"
