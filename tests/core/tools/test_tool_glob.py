"""Glob: pattern semantics, .gitignore, newest-first order, the 100-result cap and clear errors."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tui_agent.core.access.gate import PermissionPolicy
from tui_agent.core.tools.base import ToolContext, ToolError, validate_input
from tui_agent.core.tools.glob import NO_FILES, GlobTool, glob_to_regex, split_pattern


def make(root: Path, *names: str, mtime: float | None = None) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)
        if mtime is not None:
            os.utime(path, (mtime, mtime))


async def glob(root: Path, **tool_input) -> list[str]:
    output = await GlobTool().call(tool_input, ToolContext(workspace=root))
    assert not output.is_error
    return output.content.split("\n")  # type: ignore[union-attr]


# -- AC-TL3, adapted --------------------------------------------------------------------------------------
async def test_ac_tl3_double_star_matches_at_the_root_too(tmp_path):
    make(tmp_path, "a.ts", "b.js", "src/c.ts")
    assert sorted(await glob(tmp_path, pattern="**/*.ts")) == ["a.ts", "src/c.ts"]


async def test_ac_tl3_path_limits_the_search_and_results_stay_workspace_relative(tmp_path):
    make(tmp_path, "src/in.ts", "out.ts")
    assert await glob(tmp_path, pattern="**/*.ts", path="src") == ["src/in.ts"]


def test_ac_tl3_a_path_outside_the_workspace_is_refused_by_the_gate(tmp_path):
    (tmp_path / "ws").mkdir()
    ctx = ToolContext(workspace=tmp_path / "ws")
    policy = PermissionPolicy.headless()
    assert policy.decide(GlobTool(), {"pattern": "*", "path": "../outside"}, ctx).behavior == "deny"
    # ... and a pattern that climbs out on its own is seen by the gate too.
    assert policy.decide(GlobTool(), {"pattern": "../outside/**/*.py"}, ctx).behavior == "deny"
    assert policy.decide(GlobTool(), {"pattern": "/etc/*.conf"}, ctx).behavior == "deny"
    assert policy.decide(GlobTool(), {"pattern": "src/**/*.py"}, ctx).behavior == "allow"


async def test_ac_tl3_more_than_100_files_are_capped_with_a_note(tmp_path):
    make(tmp_path, *(f"f{i:03}.txt" for i in range(110)))
    lines = await glob(tmp_path, pattern="*.txt")
    assert len(lines) == 101
    assert all(line.endswith(".txt") for line in lines[:100])
    assert "truncated" in lines[100] and "110 files" in lines[100] and "10 more" in lines[100]


# -- order ------------------------------------------------------------------------------------------------
async def test_newest_first_with_ties_by_path(tmp_path):
    make(tmp_path, "old.py", mtime=1_000_000)
    make(tmp_path, "new.py", mtime=3_000_000)
    make(tmp_path, "b_mid.py", "a_mid.py", mtime=2_000_000)
    assert await glob(tmp_path, pattern="*.py") == ["new.py", "a_mid.py", "b_mid.py", "old.py"]


async def test_the_cap_keeps_the_newest(tmp_path):
    for i in range(105):
        make(tmp_path, f"f{i:03}.txt", mtime=1_000_000 + i)
    lines = await glob(tmp_path, pattern="*.txt")
    assert lines[0] == "f104.txt" and lines[99] == "f005.txt"


# -- ignore rules -----------------------------------------------------------------------------------------
async def test_gitignore_root_and_nested_with_negation_and_git_dir(tmp_path):
    make(tmp_path, "keep.py", "build/gen.py", "x/debug.log", "x/keep.log", "pkg/tmp/t.py", "pkg/ok.py",
         ".git/hooks/h.py", ".github/ci.py")
    (tmp_path / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (tmp_path / "pkg" / ".gitignore").write_text("tmp/\n")
    found = sorted(await glob(tmp_path, pattern="**/*"))
    assert found == [".github/ci.py", ".gitignore", "keep.py", "pkg/.gitignore", "pkg/ok.py", "x/keep.log"]


async def test_ancestor_gitignore_applies_to_a_subdirectory_search(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated/\n")
    make(tmp_path, "src/a.py", "src/generated/b.py")
    assert await glob(tmp_path, pattern="**/*.py", path="src") == ["src/a.py"]


async def test_a_repository_gitignore_above_the_workspace_counts(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.tmp\n")
    make(tmp_path, "ws/a.py", "ws/b.tmp")
    assert await glob(tmp_path / "ws", pattern="*") == ["a.py"]


async def test_an_explicitly_named_ignored_directory_is_searched(tmp_path):
    (tmp_path / ".gitignore").write_text("node_modules/\n")
    make(tmp_path, "node_modules/lib/index.js", "app.js")
    assert await glob(tmp_path, pattern="**/*.js") == ["app.js"]
    assert await glob(tmp_path, pattern="node_modules/**/*.js") == ["node_modules/lib/index.js"]
    assert await glob(tmp_path, pattern="**/*.js", path="node_modules") == ["node_modules/lib/index.js"]


# -- pattern semantics --------------------------------------------------------------------------------------
async def test_single_star_stays_in_one_directory(tmp_path):
    make(tmp_path, "a.py", "src/b.py", "src/deep/c.py")
    assert await glob(tmp_path, pattern="*.py") == ["a.py"]
    assert await glob(tmp_path, pattern="src/*.py") == ["src/b.py"]
    assert await glob(tmp_path, pattern="*/*/*.py") == ["src/deep/c.py"]


async def test_braces_classes_and_question_marks(tmp_path):
    make(tmp_path, "a.ts", "b.tsx", "c.js", "d1.md", "d22.md", "src/e.ts", "tests/f.ts", "docs/g.ts")
    assert sorted(await glob(tmp_path, pattern="*.{ts,tsx}")) == ["a.ts", "b.tsx"]
    assert sorted(await glob(tmp_path, pattern="{src,tests}/**/*.ts")) == ["src/e.ts", "tests/f.ts"]
    assert await glob(tmp_path, pattern="d?.md") == ["d1.md"]
    assert sorted(await glob(tmp_path, pattern="[ab].*")) == ["a.ts", "b.tsx"]
    assert await glob(tmp_path, pattern="[!ab].js") == ["c.js"]


async def test_a_literal_pattern_and_an_absolute_pattern(tmp_path):
    make(tmp_path, "src/a.py")
    assert await glob(tmp_path, pattern="src/a.py") == ["src/a.py"]
    assert await glob(tmp_path, pattern="./src/*.py") == ["src/a.py"]
    assert await glob(tmp_path, pattern=f"{tmp_path}/src/*.py") == ["src/a.py"]


async def test_results_outside_the_workspace_are_absolute(tmp_path):
    make(tmp_path, "other/x.md")
    (tmp_path / "ws").mkdir()
    assert await glob(tmp_path / "ws", pattern="*.md", path=str(tmp_path / "other")) == [
        str((tmp_path / "other" / "x.md").resolve())
    ]


async def test_relative_paths_use_the_workspace_not_cwd(tmp_path, monkeypatch):
    make(tmp_path, "ws/src/a.py", "elsewhere/src/b.py")
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert await glob(tmp_path / "ws", pattern="*.py", path="src") == ["src/a.py"]


@pytest.mark.parametrize(
    ("pattern", "yes", "no"),
    [
        ("**/*.ts", ["a.ts", "x/y/a.ts"], ["a.tsx", "a.ts/b"]),
        ("src/**", ["src/a", "src/x/y"], ["srcx/a"]),
        ("a/**/b", ["a/b", "a/x/y/b"], ["a/xb"]),
        ("*.{js,jsx}", ["a.js", "a.jsx"], ["a.ts", "x/a.js"]),
        ("x[0-9].txt", ["x1.txt"], ["xa.txt"]),
        ("f**.py", ["foo.py"], ["d/foo.py"]),
    ],
)
def test_glob_to_regex(pattern, yes, no):
    regex = re.compile(glob_to_regex(pattern) + r"\Z")
    assert all(regex.match(p) for p in yes)
    assert not any(regex.match(p) for p in no)


def test_split_pattern():
    assert split_pattern("src/**/*.ts") == ("src", "**/*.ts")
    assert split_pattern("*.py") == ("", "*.py")
    assert split_pattern("/abs/dir/*.md") == ("/abs/dir", "*.md")
    assert split_pattern("./a/b.txt") == ("a/b.txt", "")


# -- errors and empties -------------------------------------------------------------------------------------
async def test_no_files_found(tmp_path):
    make(tmp_path, "a.py")
    assert await glob(tmp_path, pattern="**/*.rs") == [NO_FILES]
    assert await glob(tmp_path, pattern="nothere/**/*.py") == [NO_FILES]


async def test_bad_paths_are_clear_errors(tmp_path):
    make(tmp_path, "a.py")
    tool, ctx = GlobTool(), ToolContext(workspace=tmp_path)
    with pytest.raises(ToolError, match="Directory does not exist: nope"):
        await tool.call({"pattern": "*", "path": "nope"}, ctx)
    with pytest.raises(ToolError, match="a.py is not a directory"):
        await tool.call({"pattern": "*", "path": "a.py"}, ctx)
    with pytest.raises(ToolError, match="pattern is empty"):
        await tool.call({"pattern": "  "}, ctx)


def test_schema_is_claude_codes():
    tool = GlobTool()
    schema = tool.schema()["input_schema"]
    assert set(schema["properties"]) == {"pattern", "path"} and schema["required"] == ["pattern"]
    assert schema["additionalProperties"] is False
    assert validate_input(tool, {"pattern": "*", "glob": "x"}) is not None
    assert tool.is_read_only({}) and tool.is_concurrency_safe({})
    assert tool.summary({"pattern": "**/*.py"}) == "**/*.py"
    assert tool.summary({"pattern": "*.py", "path": "src"}) == "*.py in src"


async def test_path_spelled_null_means_the_workspace(tmp_path):
    make(tmp_path, "a.py")
    assert await glob(tmp_path, pattern="*.py", path="null") == ["a.py"]
