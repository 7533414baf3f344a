"""The session command line against the fake Claude: `--continue`, `--print-outbound` (compared with
what the next call really POSTs), `tui-agent sessions`, `tui-agent export`, and a Claude Code
transcript that is journaled from the moment it is loaded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import cli_env
from tests.shared import SYNTHETIC_LONG, TRANSCRIPTS
from tests.e2e.test_headless_real_stack import run_cli
from tests.fakes.fake_anthropic import text, tool_use
from tui_agent.core.paths import sessions_dir
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.messages import protocol_errors

REAL_TRANSCRIPT = TRANSCRIPTS / "DRMacIver__claude-reliability__python-to-rust-port-transcript.jsonl"
TRANSCRIPT = REAL_TRANSCRIPT if REAL_TRANSCRIPT.is_file() else SYNTHETIC_LONG  # never skipped


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "notes.txt").write_text("the answer is 42\n" * 50)
    return root


def journals() -> list[Path]:
    return sorted(sessions_dir().glob("*.jsonl")) if sessions_dir().is_dir() else []


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The CLI with no model configured (the offline demo model): for the commands that call none."""
    return subprocess.run([sys.executable, "-m", "tui_agent", *args], cwd=cwd, env=cli_env(), capture_output=True,
                          text=True, timeout=90, stdin=subprocess.DEVNULL)


def test_print_outbound_is_exactly_the_next_request_of_a_resumed_session(tmp_path, workspace, fake) -> None:
    fake.replies += [tool_use("Read", {"file_path": "notes.txt"}, "toolu_1", say="Reading."), text("It says 42.")]
    assert run_cli(["-p", "what do the notes say?"], workspace, fake, tmp_path).returncode == 0
    size = journals()[0].stat().st_size

    printed = run_cli(["--continue", "--print-outbound", "-p", "and twice?"], workspace, fake, tmp_path)
    assert printed.returncode == 0, printed.stderr
    body = json.loads(printed.stdout)
    assert len(fake.message_requests) == 2  # nothing was sent
    assert journals()[0].stat().st_size == size  # nothing was saved

    fake.replies.append(text("84."))
    sent = run_cli(["--continue", "-p", "and twice?"], workspace, fake, tmp_path)
    assert sent.returncode == 0, sent.stderr
    assert fake.message_requests[-1]["body"] == body  # byte for byte what went out, breakpoints included
    assert body["messages"][-1]["content"][-1] == {"type": "text", "text": "and twice?",
                                                   "cache_control": {"type": "ephemeral"}}
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"} and body["stream"] is True


def test_continue_needs_a_session_and_resume_names_unknown_ids(workspace) -> None:
    out = cli("--continue", "-p", "hello", cwd=workspace)
    assert out.returncode == 2 and "no saved session" in out.stderr and "tui-agent sessions" in out.stderr
    out = cli("--resume", "nope", "-p", "hello", cwd=workspace)
    assert out.returncode == 2 and "no session 'nope'" in out.stderr
    out = cli("--resume", "-p", "hello", cwd=workspace)
    assert out.returncode == 2 and "needs a session ID" in out.stderr
    out = cli("--continue", "--resume", "x", "-p", "hello", cwd=workspace)
    assert out.returncode == 2 and "either --continue or --resume" in out.stderr


def test_sessions_lists_this_workspace_and_continue_takes_the_latest(tmp_path, workspace) -> None:
    other = tmp_path / "other"
    other.mkdir()
    assert cli("-p", "first in repo", "--model", "demo", cwd=workspace).returncode == 0
    assert cli("-p", "only in other", "--model", "demo", cwd=other).returncode == 0
    assert cli("-p", "second in repo", "--model", "demo", cwd=workspace).returncode == 0
    listed = cli("sessions", cwd=workspace)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.strip().splitlines()
    assert len(lines) == 2 and "second in repo" in lines[0] and "first in repo" in lines[1]
    rows = [json.loads(line) for line in cli("sessions", "--all", "--json", cwd=workspace).stdout.splitlines()]
    assert {r["first_prompt"] for r in rows} == {"first in repo", "only in other", "second in repo"}
    assert all(r["model"] == "demo" and r["messages"] > 2 for r in rows)

    out = cli("--continue", "-p", "and one more", cwd=workspace)
    assert out.returncode == 0, out.stderr
    latest = next(r for r in rows if r["first_prompt"] == "second in repo")
    history = read_journal(Path(latest["path"])).history
    assert history[0]["content"][0]["text"] == "second in repo" and protocol_errors(history) == []
    assert any(m["content"][0].get("text") == "and one more" for m in history if m["role"] == "user")
    empty = cli("sessions", cwd=tmp_path)
    assert empty.returncode == 0 and "no saved sessions" in empty.stderr and str(sessions_dir()) in empty.stderr


def test_export_markdown_and_jsonl(tmp_path, workspace, fake) -> None:
    fake.replies += [tool_use("Read", {"file_path": "notes.txt"}, "toolu_1", say="Reading."), text("It says 42.")]
    assert run_cli(["-p", "what do the notes say?"], workspace, fake, tmp_path).returncode == 0
    journal = journals()[0]
    session_id = journal.stem
    md = cli("export", session_id[:17], cwd=workspace)
    assert md.returncode == 0, md.stderr
    text_md = md.stdout
    assert text_md.startswith(f"# tui-agent session {session_id}")
    assert "## 1. user\n\nwhat do the notes say?" in text_md
    assert "<summary>tool call: Read (toolu_1)</summary>" in text_md
    assert "<summary>tool result for toolu_1</summary>" in text_md and "the answer is 42" in text_md
    assert text_md.count("> ▶ **call ") == 2 and "real " in text_md  # what each call sent, with its usage
    assert text_md.index("> ▶ **call 1**") < text_md.index("## 2. assistant")

    jsonl = cli("export", session_id, "--format", "jsonl", cwd=workspace)
    assert jsonl.returncode == 0 and jsonl.stdout == journal.read_text()
    target = tmp_path / "out.md"
    assert cli("export", session_id, "-o", str(target), cwd=workspace).returncode == 0
    assert target.read_text() == text_md
    missing = cli("export", "zzz", cwd=workspace)
    assert missing.returncode == 2 and "no session 'zzz'" in missing.stderr


def test_a_loaded_transcript_is_journaled_and_can_be_printed(tmp_path, workspace, fake) -> None:
    printed = run_cli(["--transcript", str(TRANSCRIPT), "--print-outbound"], workspace, fake, tmp_path)
    assert printed.returncode == 0, printed.stderr
    body = json.loads(printed.stdout)
    assert body["messages"] and protocol_errors(body["messages"]) == [] and journals() == []

    fake.replies.append(text("Continuing the port."))
    out = run_cli(["--transcript", str(TRANSCRIPT), "-p", "where were we?"], workspace, fake, tmp_path)
    assert out.returncode == 0, out.stderr
    load = read_journal(journals()[0])
    assert load.header.source == f"transcript {TRANSCRIPT}"
    assert load.history[-2]["content"][0]["text"] == "where were we?"
    fake.replies.append(text("Still here."))
    again = run_cli(["--continue", "-p", "and now?"], workspace, fake, tmp_path)
    assert again.returncode == 0, again.stderr
    assert len(read_journal(journals()[0]).history) == len(load.history) + 2
