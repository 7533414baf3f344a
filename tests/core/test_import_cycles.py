"""No import circle inside `tui_agent/core` (issue 16): every import counts, lazy ones inside functions too
(a lazy import that closes a circle only hides it until someone moves it to the top); imports that only
run for type checking (`if TYPE_CHECKING:`) are excepted. Read with `ast`, so nothing is imported."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ENTRY = re.compile(r"tui_agent(\.\w+)+:\w+")

PACKAGE = Path(__file__).resolve().parents[2] / "tui_agent"


def core_modules() -> dict[str, Path]:
    out = {}
    for path in sorted((PACKAGE / "core").rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def imported(name: str, path: Path, known: dict[str, Path], typing_too: bool = True) -> set[str]:
    """The modules of the package that `name` imports, at the top or lazily: `from a.b import c` names `a.b`,
    or `a.b.c` when that is a module; a relative import is made absolute; `import_module("a.b")` and an entry
    string "a.b:function" name `a.b`. `typing_too`: also what is imported only for type checking."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    typing_only = set()
    for node in ast.walk(tree):
        if not typing_too and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only.update(id(inner) for inner in ast.walk(node))
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([module] if module else []))
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and ENTRY.fullmatch(node.value):
            names.add(node.value.partition(":")[0])
        elif (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("import_module") and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            names.add(node.args[0].value)
    return {other for other in names if other in known}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), or a module importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_checker_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def core_graph(typing_too: bool = False) -> dict[str, set[str]]:
    known = core_modules()
    graph = {name: imported(name, path, known, typing_too) - {name} for name, path in known.items()}
    # a package's own __init__ re-exporting its submodules is not a circle with them
    for name in graph:
        graph[name] = {other for other in graph[name] if not other.startswith(name + ".")}
    return graph


def test_no_import_circle_inside_core() -> None:
    assert circles(core_graph()) == []


# Issue 29 took the type-only circles from 3 (5, 12 and 5 modules) to 0: the last one (a Session's commands,
# prompt builder and MCP installer naming the Session they act on) ended when they took the small
# Protocols of core/agent/commands.py (CommandHost, PromptHost, McpHost) instead.
def test_type_only_imports_close_no_circle_inside_core() -> None:
    assert circles(core_graph(typing_too=True)) == []


# The core's floors, lowest first: the flat ground floor, then the wings in the order their imports mostly
# run (the order with the fewest imports against it). An import from a lower floor to a higher one runs
# back up; each is a type or a helper living a floor too high. Issue 29's step 3 found 15 at run time (20
# with type-only imports); what a message names moving from recordings/coverage.py to compaction/entities.py,
# the commands' protocols and git_internal moving beside the path helpers (tools/paths.py) took them to
# 10 (14); the model table and cache prices as one ground module (core/models.py, with the usage counts in
# messages.py), the replay's spans in recordings/spans.py and the summary call in agent/summary_draft.py
# took them to 5 (9); the /mcp wiring moving to agent/mcp_install.py, the BudgetLedger to agent/budget.py
# (the Session owns it) and request_diff to compaction/ (pure functions of two plans) to 2 (6). Then the
# counter learnt that a wing's package is on its wing's floor (`from tui_agent.core.compaction import X`
# had hidden two: events and telemetry naming CompactPlan), and the Context tool took a `ContextLens`
# (tools/base.py) that the agent's ContextView satisfies, the skill catalog and project context moved to
# the tools floor that keeps them (tools/skill_catalog.py, tools/project_context.py), and telemetry to the
# agent's wing whose events it listens to: 1 (2), both events.py naming the plans its events carry. They
# may only shrink.
FLOORS = ["ground", "shell", "tools", "access", "compaction", "providers", "mcp", "agent", "journal", "recordings"]
# Issue 42: events.py names CompactPlan under TYPE_CHECKING too (only its annotations named it): 0 (2); the next
# call's plan became a Protocol on the ground floor (events.RequestPlan) that CallPlan satisfies: 0 (1).
BACK_UP_AT_RUN_TIME = 0
BACK_UP_WITH_TYPE_ONLY = 1


def floor(module: str) -> str:
    """tui_agent.core.<wing>.<module> and the wing's package itself (`from tui_agent.core.compaction import
    CompactPlan` reaches the compaction floor through its __init__), else tui_agent.core.<module>: ground."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[2] in FLOORS else "ground"


def back_up(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((a, b) for a, targets in graph.items() for b in targets
                  if FLOORS.index(floor(a)) < FLOORS.index(floor(b)))


def test_the_floors_name_every_wing_and_the_counter_counts() -> None:
    assert {floor(name) for name in core_modules()} == set(FLOORS)
    assert back_up({"tui_agent.core.formats": {"tui_agent.core.agent.session"},
                    "tui_agent.core.agent.session": {"tui_agent.core.formats"}}) == [
        ("tui_agent.core.formats", "tui_agent.core.agent.session")]
    assert back_up({"tui_agent.core.events": {"tui_agent.core.compaction"}}) == [
        ("tui_agent.core.events", "tui_agent.core.compaction")]  # a wing's package is on the wing's floor


def test_few_imports_run_back_up_a_floor() -> None:
    at_run_time, with_types = back_up(core_graph()), back_up(core_graph(typing_too=True))
    assert len(at_run_time) <= BACK_UP_AT_RUN_TIME, at_run_time
    assert len(with_types) <= BACK_UP_WITH_TYPE_ONLY, with_types
