"""No module in tui_agent/ over 400 lines (issue 29's "Done when"): a longer one holds more than one concept,
and its reader must page through all of them to change one. Counted from the files, nothing is imported."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tui_agent"
LIMIT = 400


def long_modules() -> dict[str, int]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > LIMIT:
            out[str(path.relative_to(PACKAGE.parent))] = lines
    return out


def test_no_module_over_400_lines() -> None:
    assert long_modules() == {}
