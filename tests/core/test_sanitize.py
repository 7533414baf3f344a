"""Terminal escape injection (issue 9, item 4): untrusted text reaches the screen without control
characters, in headless output and in the TUI, while the history keeps it unchanged."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from tui_agent.core.sanitize import strip_controls
from tui_agent.faces.headless import run_headless

OSC52 = "\x1b]52;c;SGVsbG8=\x07"  # write "Hello" to the clipboard
TITLE = "\x1b]0;OWNED\x07"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.mark.parametrize("raw, shown", [
    ("plain\ttext\nnext", "plain\ttext\nnext"),
    (f"a{OSC52}b", "a]52;c;SGVsbG8=b"),
    ("\x1b[2J\x1b[31mred", "[2J[31mred"),
    ("line\r\nnext", "line\nnext"),
    ("rm -rf ~\rls -la  ", "rm -rf ~ls -la  "),  # a CR cannot hide the start of a line
    ("8-bit \x9b31m CSI and \x9d OSC", "8-bit 31m CSI and  OSC"),
    ("bell\x07 del\x7f nul\x00", "bell del nul"),
    ("unicode é ✓ 日本", "unicode é ✓ 日本"),
])
def test_strip_controls(raw: str, shown: str) -> None:
    assert strip_controls(raw) == shown


def test_headless_prints_no_escape_from_a_file_the_demo_model_reads(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TUI_AGENT_CONFIG_DIR", str(tmp_path / "config"))
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text(f"# Demo {OSC52} title{TITLE}\n\nSome text \x1b[2J here.\n")
    (repo / f"evil{TITLE}.md").write_text(f"more {OSC52}\n")
    out, err = io.StringIO(), io.StringIO()
    code = run_headless("how is the demo described?", workspace=repo, model="demo", out=out, err=err)
    assert code == 0, err.getvalue()
    assert "README.md" in out.getvalue() and "Demo ]52;c;SGVsbG8= title" in out.getvalue()
    assert "evil]0;OWNED.md" in err.getvalue()  # the tool line names the file, minus its escapes
    assert not CONTROL.search(out.getvalue().replace("\n", "").replace("\t", ""))
    assert not CONTROL.search(err.getvalue().replace("\n", "").replace("\t", ""))
