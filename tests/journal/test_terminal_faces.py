"""No control sequence from a journal reaches the terminal (issue 19 item 5): `export` (file contents
holding OSC 2 / OSC 52), `--continue`'s stderr lines (a header's session id with ESC), `--print-outbound`
and the `--json` listings (the C1 CSI `\\x9b`). JSON output stays the same JSON (controls are escaped,
not dropped); `export -o FILE` keeps the text exactly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tui_agent.core.paths import sessions_dir
from tui_agent.core.journal.records import FORMAT_VERSION, new_session_id

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "title\x1b]2;pwned\x07 clip\x1b]52;c;cm0gLXJmIH4=\x07 csi\x9b31m red"
CONTROLS = ("\x1b", "\x07", "\x9b")


def write_journal(workspace: Path, session_id: str, name: str | None = None) -> Path:
    lines = [
        {"type": "header", "format": FORMAT_VERSION, "session_id": session_id, "workspace": str(workspace),
         "model": "demo", "provider": "demo", "started": "2026-12-01T00:00:00.000Z"},
        {"type": "message", "at": "2026-12-01T00:00:01.000Z", "index": 0,
         "message": {"role": "user", "content": f"read the README {HOSTILE}"}},
        {"type": "message", "at": "2026-12-01T00:00:02.000Z", "index": 1, "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "README"}}]}},
        {"type": "message", "at": "2026-12-01T00:00:03.000Z", "index": 2, "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": HOSTILE}]}},
        {"type": "message", "at": "2026-12-01T00:00:04.000Z", "index": 3,
         "message": {"role": "assistant", "content": [{"type": "text", "text": f"It says {HOSTILE}"}]}},
    ]
    path = sessions_dir() / f"{name or session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines))
    return path


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "tui_agent", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=90, stdin=subprocess.DEVNULL)


def clean(text: str) -> bool:
    return not any(c in text for c in CONTROLS)


def test_export_to_standard_output_carries_no_control_sequences(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    sid = new_session_id()
    path = write_journal(workspace, sid)
    md = cli("export", sid, cwd=workspace)
    assert md.returncode == 0 and clean(md.stdout) and "]2;pwned" in md.stdout, md.stderr
    jsonl = cli("export", sid, "--format", "jsonl", cwd=workspace)
    assert jsonl.returncode == 0 and clean(jsonl.stdout)
    assert [json.loads(x) for x in jsonl.stdout.splitlines()] == [json.loads(x) for x in path.read_text().splitlines()]
    target = tmp_path / "out.md"
    assert cli("export", sid, "-o", str(target), cwd=workspace).returncode == 0
    assert HOSTILE in target.read_text()  # a file keeps the session's text exactly (documented)


def test_continue_stderr_and_print_outbound_carry_no_control_sequences(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    write_journal(workspace, "evil\x1b]2;owned\x07\x9b1m", name=new_session_id())
    out = cli("--continue", "--print-outbound", cwd=workspace)
    assert out.returncode == 0, out.stderr
    assert "Resumed session evil" in out.stderr and clean(out.stderr)
    assert clean(out.stdout)
    body = json.loads(out.stdout)  # the same JSON: the C1 control is escaped, not lost
    assert HOSTILE in body["messages"][0]["content"]


def test_sessions_json_escapes_controls_and_keeps_the_text(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    write_journal(workspace, new_session_id())
    out = cli("sessions", "--json", cwd=workspace)
    assert out.returncode == 0 and clean(out.stdout), out.stderr
    assert json.loads(out.stdout)["first_prompt"] == " ".join(f"read the README {HOSTILE}".split())
