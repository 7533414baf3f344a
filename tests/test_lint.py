"""Pyflakes-class errors fail the suite: an undefined name (a lost import after a merge) is a crash
waiting for the one path that reaches it; unused imports and dead locals hide such mistakes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_no_undefined_names_unused_imports_or_dead_locals():
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "F821,F811,F401,F841",
                          "--output-format", "concise", "tui_agent", "tests", "bench"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
