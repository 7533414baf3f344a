"""The flat `tui_agent/core/` is the ground floor every wing uses, and stays small: ≤ 15 modules (AGENTS.md).

Step 3 of the house took it from 55 modules to 13; with nothing to hold the bound it stood at 15 when step 4 began
and at 18 within it (the crash report and its text came down from the faces, the server's events took a module of
their own). A module that joins the ground floor is no reason to fail; a ground floor that is one long list again
is: past the bound, related modules take a wing (`core/events/`: the engine events and their two groups), or the
bound is argued anew here and in AGENTS.md, which states the same number (checked below: the two cannot drift).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "tui_agent" / "core"
FLAT_CORE_MAX = 15


def flat_modules(core: Path = CORE) -> list[str]:
    """The modules that sit directly in `core/` (its `__init__.py` is the package, not a module of the floor)."""
    return sorted(path.stem for path in core.glob("*.py") if path.name != "__init__.py")


def over_bound(names: Iterable[str], bound: int = FLAT_CORE_MAX) -> str:
    """"" within the bound, else one sentence naming every flat module and what to do."""
    names = sorted(names)
    if len(names) <= bound:
        return ""
    return (f"tui_agent/core/ holds {len(names)} flat modules, more than its {bound}: {', '.join(names)}. "
            "Give related ones a wing (a folder of their concept, as core/events/), or argue a new bound in "
            "tests/test_flat_core.py and AGENTS.md.")


def test_the_flat_core_holds_at_most_its_bound() -> None:
    assert over_bound(flat_modules()) == ""


def test_the_bound_names_every_module_when_it_is_passed() -> None:
    """The rule has teeth: one module past the bound fails with the whole list, so the choice of a wing is made
    looking at all of them."""
    names = [f"m{i:02}" for i in range(FLAT_CORE_MAX + 1)]
    assert over_bound(names[:-1]) == ""
    line = over_bound(names)
    assert line.startswith(f"tui_agent/core/ holds {FLAT_CORE_MAX + 1} flat modules, more than its {FLAT_CORE_MAX}: ")
    assert all(name in line for name in names)


def test_agents_md_states_the_same_bound() -> None:
    text = (ROOT / "AGENTS.md").read_text(encoding="utf-8")
    stated = re.findall(r"Flat \(≤ (\d+) modules", text)
    assert stated == [str(FLAT_CORE_MAX)], f"AGENTS.md's layout table states the flat core's bound as {stated}"
