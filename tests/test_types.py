"""The engine's types are checked: mypy finds 0 errors in tui_agent/core (so `Compactor` and every strategy
satisfy `CompactorProtocol` by the checker's word, not by a comment), run in the suite beside ruff."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error_in_core():
    out = subprocess.run([sys.executable, "-m", "mypy", "tui_agent/core", "--no-error-summary",
                          "--cache-dir", str(ROOT / ".mypy_cache")],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
