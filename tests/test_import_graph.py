"""No import circle anywhere in `tui_agent/`, and few imports back up a floor (issue 42): the core's own test
(`tests/core/test_import_cycles.py`) read only `core/`, and two circles outside it were real at run time
through lazy imports (the watch screens importing the watch face that opens them; the subcommand table and
the ACP agent importing each other). Here every import counts: at the top, inside functions, under
`if TYPE_CHECKING:` (counted apart, like the core's test does), and a module named in a string that is
imported (`importlib.import_module("…")`, a `module:function` entry of the faces table). A module only looked
up in `sys.modules` is not imported (the crash report reads the open sessions that way). Read with `ast`, so
nothing is imported."""

from __future__ import annotations

from pathlib import Path

from tests.core.test_import_cycles import FLOORS as CORE_FLOORS
from tests.core.test_import_cycles import circles, imported

PACKAGE = Path(__file__).resolve().parents[1] / "tui_agent"

# The package's floors, lowest first: the package itself (its version), the core's floors, the public
# compaction contract, the wings the faces open (report, proxy, web), the Textual app, the faces, `-m`.
FLOORS = ["root", *CORE_FLOORS, "compact", "report", "proxy", "web", "ui", "faces", "__main__"]
# Issue 42 found 2 circles and 2 arrows back up at run time (3 with type-only imports): the circles ended when
# LogSource and behind_text moved down to core/recordings/log_source.py, the subcommands to faces/table.py
# and the ACP session's state to faces/acp/acp_session.py; the TUI's app importing the crash report from the
# faces ended when faces/crash*.py moved to the core, and events.py's import of CompactPlan (only its
# annotations named it) went under TYPE_CHECKING, and the next call's plan an event carries became a Protocol
# on the ground floor (events.RequestPlan, which agent/call.CallPlan satisfies). Left, type-only: core/events/__init__.py
# naming the compaction plan its events carry (the core's own test counts it too). They may only shrink.
BACK_UP_AT_RUN_TIME = 0
BACK_UP_WITH_TYPE_ONLY = 1


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def package_graph(typing_too: bool = True) -> dict[str, set[str]]:
    known = modules()
    graph = {name: imported(name, path, known, typing_too) - {name} for name, path in known.items()}
    # a package's own __init__ re-exporting its submodules is not a circle with them
    return {name: {other for other in targets if not other.startswith(name + ".")} for name, targets in graph.items()}


def floor(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "root"
    if parts[1] == "core":
        return parts[2] if len(parts) > 2 and parts[2] in CORE_FLOORS else "ground"
    return parts[1]


def back_up(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((a, b) for a, targets in graph.items() for b in targets
                  if FLOORS.index(floor(a)) < FLOORS.index(floor(b)))


def test_the_reader_sees_every_kind_of_import(tmp_path: Path) -> None:
    package = tmp_path / "tui_agent"
    (package / "faces").mkdir(parents=True)
    for module in ("__init__", "faces/__init__", "faces/b", "faces/c", "faces/d", "faces/e"):
        (package / f"{module}.py").write_text("")
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tui_agent.faces.b import B\n"
              "def f():\n    from . import c\n    return 'tui_agent.faces.d:run'\nimport tui_agent.faces.e\n"
              "sys.modules.get('tui_agent.faces.f')\n")
    (package / "faces" / "a.py").write_text(source)
    known = {name: Path() for name in ("tui_agent.faces.b", "tui_agent.faces.c", "tui_agent.faces.d",
                                       "tui_agent.faces.e", "tui_agent.faces")}
    known["tui_agent.faces.f"] = Path()
    assert imported("tui_agent.faces.a", package / "faces" / "a.py", known) == set(known) - {"tui_agent.faces.f"}
    assert "tui_agent.faces.b" not in imported("tui_agent.faces.a", package / "faces" / "a.py", known, typing_too=False)


def test_every_module_is_on_a_floor() -> None:
    assert {floor(name) for name in modules()} <= set(FLOORS)
    assert floor("tui_agent.core.compaction.plan") == "compaction" and floor("tui_agent.core.formats") == "ground"
    assert floor("tui_agent.ui.app") == "ui" and floor("tui_agent") == "root"


def test_no_import_circle_in_the_package() -> None:
    assert circles(package_graph()) == []  # type-only imports counted too


def test_few_imports_run_back_up_a_floor_in_the_package() -> None:
    at_run_time, with_types = back_up(package_graph(typing_too=False)), back_up(package_graph())
    assert len(at_run_time) <= BACK_UP_AT_RUN_TIME, at_run_time
    assert len(with_types) <= BACK_UP_WITH_TYPE_ONLY, with_types
