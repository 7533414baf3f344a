"""No test finds a process by its name or a pattern (issue 21): a pattern search (`pgrep`, with -f) also matches the
user's own session or an orphan from an earlier run, and the test then signals a process it did not
start. Tests use `tests/processes.py` (a Popen's pid, tmux's pane pid, its children) instead."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).parent
NAMES = "|".join(["pg" + "rep", "pk" + "ill", "kill" + "all"])  # spelled apart so this file does not match
BY_NAME = re.compile(rf"""["']\s*({NAMES})\b|\b({NAMES})\s+-""")


def test_no_test_signals_or_looks_up_processes_by_name() -> None:
    found = [f"{path.relative_to(TESTS)}:{number}: {line.strip()}"
             for path in sorted(TESTS.rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if BY_NAME.search(line)]
    assert found == []
