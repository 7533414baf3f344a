"""Start-up cost guards: the UI path never imports a model SDK or MCP (each costs seconds), and the
Markdown machinery waits until after the first frame."""

from __future__ import annotations

import subprocess
import sys


def test_app_module_imports_no_sdk() -> None:
    code = ("import sys, tui_agent.ui.app\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'anthropic', 'openai', 'mcp', 'markdown_it'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
