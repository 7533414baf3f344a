"""`tests/` mirrors the source (issue 42): the test of a core module sits in the test folder of that module's wing.

`tests/core/` held 76 flat files while the engine lives in wings (`core/agent/`, `core/tools/`, …), so the tests
of a module were found by grep, not by where the module is. The rule kept here is the clear case only: a flat
`tests/core/test_N.py` is *named for* the core module `N.py` (and `test_tool_N.py` for the tool `tools/N.py`).
While a flat `core/N.py` exists the test sits flat beside the other ground-floor tests (`test_messages.py`); when
the only modules of that name are in wings, the test belongs in a wing's folder: `tests/core/<wing>/`, or the
top-level `tests/journal/`, `tests/providers/` and `tests/mcp/`, which held those wings' tests before (one place
per source folder). A test named for no module (a behaviour across several, `test_files_that_stop_the_agent.py`)
is left where it is: its name says nothing this rule could check.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "tui_agent" / "core"
FLAT_TESTS = ROOT / "tests" / "core"
HOMES = {"journal": "tests/journal", "providers": "tests/providers", "mcp": "tests/mcp"}  # else tests/core/<wing>
TOOL = "tool_"  # test_tool_read.py is named for tools/read.py: one file per tool, named as the model calls it


def wing_modules() -> dict[str, list[str]]:
    """Each module name found in a wing (sub-wings too: `compaction/names/found_in.py`), with the paths of the
    modules of that name under `tui_agent/core/` (`settings` is both `access/settings.py` and
    `compaction/settings.py`)."""
    named: dict[str, list[str]] = {}
    for path in sorted(CORE.glob("*/**/*.py")):
        if path.name == "__init__.py" or "__pycache__" in path.parts:
            continue
        relative = path.relative_to(CORE).as_posix()
        named.setdefault(path.stem, []).append(relative)
        if relative.startswith("tools/") and path.parent.name == "tools":
            named.setdefault(TOOL + path.stem, []).append(relative)
    return named


def misplaced(flat_names: Iterable[str]) -> list[str]:
    """One line per flat test file named for a module that lives only in a wing, saying where it belongs."""
    modules = wing_modules()
    lines = []
    for name in flat_names:
        stem = name.removeprefix("test_").removesuffix(".py")
        if (CORE / f"{stem}.py").exists() or stem not in modules:
            continue
        homes = sorted({HOMES.get(wing, f"tests/core/{wing}") for wing in (p.split("/")[0] for p in modules[stem])})
        lines.append(f"tests/core/{name} is named for tui_agent/core/{' or '.join(modules[stem])}: "
                     f"`git mv` it to {' or '.join(h + '/' for h in homes)}")
    return lines


def test_no_test_file_sits_flat_in_tests_core_while_its_module_is_in_a_wing() -> None:
    assert misplaced(sorted(path.name for path in FLAT_TESTS.glob("test_*.py"))) == []


def test_the_rule_names_each_misplaced_file_and_where_it_belongs() -> None:
    """The rule has teeth: made-up flat names of the files this round moved are each caught, with their folder."""
    lines = misplaced(["test_loop.py", "test_tool_read.py", "test_journal_file.py", "test_messages.py",
                       "test_found_in.py", "test_files_that_stop_the_agent.py"])
    assert lines == [
        "tests/core/test_loop.py is named for tui_agent/core/agent/loop.py: `git mv` it to tests/core/agent/",
        "tests/core/test_tool_read.py is named for tui_agent/core/tools/read.py: `git mv` it to tests/core/tools/",
        "tests/core/test_journal_file.py is named for tui_agent/core/journal/journal_file.py: "
        "`git mv` it to tests/journal/",
        "tests/core/test_found_in.py is named for tui_agent/core/compaction/names/found_in.py: "
        "`git mv` it to tests/core/compaction/",
    ]
