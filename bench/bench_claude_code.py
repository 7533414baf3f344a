"""Claude Code for the side-by-side benchmarks: installed from npm into a cache outside the repository, and run
with a throwaway HOME so it starts on its main screen without a login or a network.

`find_claude_code()` returns the `claude` executable (`$CLAUDE_CODE_BIN`, or `npm install
@anthropic-ai/claude-code` into `~/.cache/tui-agent-bench/claude-code` once), or None when npm cannot get it.
`claude_code_home(workspace, key)` writes the `.claude.json` that a user who has finished onboarding, trusted
the folder and approved the API key would have; without it Claude Code shows its onboarding screens.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

CACHE = Path.home() / ".cache" / "tui-agent-bench" / "claude-code"


def find_claude_code() -> Path | None:
    given = os.environ.get("CLAUDE_CODE_BIN")
    if given:
        return Path(given)
    exe = CACHE / "node_modules" / ".bin" / "claude"
    if not exe.exists() and shutil.which("npm"):
        CACHE.mkdir(parents=True, exist_ok=True)
        print(f"installing @anthropic-ai/claude-code into {CACHE} (once)")
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "@anthropic-ai/claude-code"], cwd=CACHE,
                       capture_output=True)
    if not exe.exists():
        return None
    check = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
    return exe if check.returncode == 0 else None


def claude_code_version(exe: Path) -> str:
    return subprocess.run([str(exe), "--version"], capture_output=True, text=True).stdout.strip()


def claude_code_home(workspace: Path, key: str) -> Path:
    home = Path(tempfile.mkdtemp(prefix="bench-cc-home-"))
    config = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [key[-20:]], "rejected": []},
        "projects": {str(workspace): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}},
    }
    (home / ".claude.json").write_text(json.dumps(config))
    return home
