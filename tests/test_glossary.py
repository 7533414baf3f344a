"""The glossary in AGENTS.md stays true where a test can tell (issue 42: "budget" named five things, cut and
truncated, mask and masked named one thing twice): every name it gives exists, the session's ledger is never
reached as a `budget`, and the v2 engine says "cut", never "truncated", in its own names."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tui_agent"
# The v2 engine's modules: the wing less its other strategies (`strategies/`: v1's report says "truncated").
STRATEGIES = PACKAGE / "core" / "compaction" / "strategies"


def glossary_rows() -> list[tuple[str, list[str]]]:
    text = (ROOT / "AGENTS.md").read_text(encoding="utf-8")
    section = text.split("## Glossary", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("word", "---"):
            rows.append((cells[0], re.findall(r"`([\w.]+)`", cells[2])))
    return rows


def resolves(dotted: str) -> bool:
    """`core.agent.budget.BudgetLedger` or `core.agent.session.Session.ledger` (a dataclass field counts)."""
    parts = ("tui_agent." + dotted).split(".")
    for cut in range(len(parts), 1, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            fields = {f.name for f in dataclasses.fields(target)} if dataclasses.is_dataclass(target) else set()
            if hasattr(target, name):
                target = getattr(target, name)
            elif name in fields:
                return name == parts[-1]
            else:
                return False
        return True
    return False


def test_the_glossary_has_its_words_and_every_name_it_gives_exists() -> None:
    rows = dict(glossary_rows())
    for word in ("budget (working budget)", "ledger", "cut (✂)", 'mask (▒, "masked")'):
        assert word in rows, word
    missing = [f"{word}: {name}" for word, names in rows.items() for name in names if not resolves(name)]
    assert missing == [] and all(rows.values())


def test_the_resolver_says_no_to_a_name_that_is_not_there() -> None:
    assert resolves("core.agent.session.Session.ledger") and not resolves("core.agent.session.Session.budget")
    assert not resolves("core.compaction.decisions.Truncation")


def test_the_ledger_is_never_called_the_budget() -> None:
    """No name `budget` holds the ledger: a field or parameter annotated `BudgetLedger`, or `.budget` read
    off a session (`session.budget`, `state.session.budget`)."""
    found = []
    for path in sorted([*PACKAGE.rglob("*.py"), *(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, (ast.AnnAssign, ast.arg)):
                name = node.target if isinstance(node, ast.AnnAssign) else node
                annotation = ast.unparse(node.annotation) if node.annotation is not None else ""
                named = name.id if isinstance(name, ast.Name) else name.attr if isinstance(name, ast.Attribute) else \
                    name.arg if isinstance(name, ast.arg) else ""
                if "BudgetLedger" in annotation and "budget" in named.lower():
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {named}: {annotation}")
            if isinstance(node, ast.Attribute) and node.attr == "budget" and ast.unparse(node.value).endswith("session"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert found == []


def test_the_engine_says_cut_not_truncated() -> None:
    """In the v2 engine's own names (functions, classes, variables, attributes, parameters; an import of v1's
    names, as the package re-exports them, is not one): the trace line's `truncatedBlocks` is a string of the
    journal's bytes, not a name."""
    found = []
    for path in sorted((PACKAGE / "core" / "compaction").rglob("*.py")):
        if STRATEGIES in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = getattr(node, "name", None) or getattr(node, "id", None) or getattr(node, "arg", None) or \
                (node.attr if isinstance(node, ast.Attribute) else None)
            if isinstance(name, str) and "truncat" in name.lower() and not isinstance(node, ast.alias):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {name}")
    assert found == []
