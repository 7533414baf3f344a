"""Every face crashes politely (issue 28 §1): one line on stderr that names the exception's type and a log
file, the traceback in that file (mode 0600, in the log folder: files, lines, the exception's class and its
message cleaned; never locals, issue 40), and nothing of the conversation on the terminal or in the file. Each face runs in a real process with one of its parts made to raise
(`tests/crash_faces.py`); `serve`'s tabs run the TUI's own command, so the TUI's case is theirs too."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.crash_faces import SECRET
from tests.shared import SMALL_LOG

ROOT = Path(__file__).resolve().parents[1]
SMALL = SMALL_LOG  # the small real log, else the long synthetic one (tests/shared.py)
LINE = re.compile(r"tui-agent crashed: RuntimeError; details in (\S+)$")


@pytest.mark.parametrize("face", ["tui", "tui-thread", "replay", "watch-json", "print"])
def test_a_crash_is_one_line_and_a_private_log(face, tmp_path):
    log = tmp_path / "session.jsonl"
    log.write_bytes(SMALL.read_bytes())
    config = tmp_path / "config"
    env = {**os.environ, "TUI_AGENT_CONFIG_DIR": str(config), "TUI_AGENT_DATA_DIR": str(tmp_path / "data")}
    done = subprocess.run([sys.executable, "-m", "tests.crash_faces", face, str(log)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    crashed = [line for line in done.stderr.splitlines() if "crashed" in line]
    assert len(crashed) == 1, done.stderr[-3000:]
    assert done.returncode == 1, done.stderr[-3000:]
    others = [line for line in done.stderr.splitlines() if line not in crashed]
    assert all(line.startswith("watch: ") for line in others), done.stderr[-3000:]  # watch's own notes only
    assert SECRET not in done.stderr + done.stdout and "Traceback" not in done.stderr
    found = LINE.search(crashed[0])
    assert found, crashed[0]
    details = Path(found.group(1))
    assert details.parent == config / "logs"
    assert stat.S_IMODE(details.stat().st_mode) == 0o600
    text = details.read_text(encoding="utf-8")
    assert "Traceback" in text and "builtins.RuntimeError: broken while showing please read" in text
    assert 'crash_faces.py", line ' in text and ", in boom" in text  # where it happened
    assert SECRET not in text and "prompt =" not in text  # no locals, no conversation (issue 40)
