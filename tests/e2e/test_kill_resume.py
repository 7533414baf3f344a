"""`kill -9` a real `tui-agent -p` process in the middle of a tool and in the middle of a streamed reply,
then resume it: the history is valid and at most the message in flight is missing.

Real parts throughout: the CLI in a subprocess, the real anthropic SDK against the fake Claude on
127.0.0.1 (which stalls mid-SSE on request), a real Bash `sleep`, the journal on disk.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable


from tests.e2e.conftest import cli_env
from tests.e2e.test_headless_real_stack import run_cli
from tests.waiting import wait_until_sync
from tests.fakes.fake_anthropic import FakeAnthropic, message_events, text, tool_use
from tests.fakes.http import Reply
from tui_agent.core.paths import sessions_dir
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.messages import protocol_errors, text_of, tool_results


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    wait_until_sync(condition, what=what, timeout=timeout, interval=0.05)


def spawn(args: list[str], cwd: Path, fake: FakeAnthropic, tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    """`tui-agent ARGS` in its own process group (so SIGKILL also takes its `sleep`); stderr to a file."""
    env = cli_env(tmp_path, fake)
    err = tmp_path / f"stderr-{time.monotonic_ns()}.txt"
    proc = subprocess.Popen([sys.executable, "-m", "tui_agent", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=open(err, "w"), start_new_session=True)
    return proc, err


def kill(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def only_journal() -> Path:
    files = list(sessions_dir().glob("*.jsonl"))
    assert len(files) == 1, files
    return files[0]


def journaled_messages() -> int:
    files = list(sessions_dir().glob("*.jsonl")) if sessions_dir().is_dir() else []
    return len(read_journal(files[0]).history) if len(files) == 1 else 0


def workspace_in(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "notes.txt").write_text("the answer is 42\n")
    return root


def test_kill_during_a_tool_then_continue(tmp_path, fake) -> None:
    workspace = workspace_in(tmp_path)
    fake.replies += [
        tool_use("Bash", {"command": "sleep 120", "description": "wait a long time"}, "toolu_slow", say="Waiting."),
        text("Back again, and the history is fine."),
    ]
    proc, err = spawn(["-p", "wait for the build", "--allow-write"], workspace, fake, tmp_path)
    try:
        wait_for(lambda: "[tool] Bash" in err.read_text(), "the Bash tool to start")
        wait_for(lambda: journaled_messages() == 2, "the tool_use to be journaled")
    finally:
        kill(proc)
    before = read_journal(only_journal()).history

    out = run_cli(["--continue", "-p", "did it finish?"], workspace, fake, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.rstrip().endswith("Back again, and the history is fine.")
    assert "Resumed session" in out.stderr and "cut off" in out.stderr
    history = read_journal(only_journal()).history
    assert protocol_errors(history) == []
    assert history[:2] == before  # nothing said before the kill is lost
    cut = tool_results(history[2])[0]  # the in-flight tool result is the one thing missing
    assert cut["tool_use_id"] == "toolu_slow" and cut["is_error"] is True
    assert [text_of(m) for m in history[3:]] == ["did it finish?", "Back again, and the history is fine."]
    resumed_request = fake.message_requests[-1]["body"]["messages"]
    assert [m["role"] for m in resumed_request] == ["user", "assistant", "user", "user"]


def test_kill_during_a_streamed_reply_then_resume_by_id(tmp_path, fake) -> None:
    workspace = workspace_in(tmp_path)
    fake.replies.append(text("First answer."))
    first = run_cli(["-p", "first question"], workspace, fake, tmp_path)
    assert first.returncode == 0, first.stderr
    session_id = read_journal(only_journal()).session_id

    chunks = message_events(text("This reply will never be finished, because the process is killed."))
    fake.replies.append(Reply(chunks=chunks, stall_after=len(chunks) // 2))
    proc, _ = spawn(["--resume", session_id[:15], "-p", "second question"], workspace, fake, tmp_path)
    try:
        wait_for(fake.stalled.is_set, "the reply to stall mid-stream")
        wait_for(lambda: journaled_messages() == 3, "the second prompt to be journaled")
    finally:
        kill(proc)

    fake.replies.append(text("Third answer."))
    out = run_cli(["--resume", session_id, "-p", "third question"], workspace, fake, tmp_path)
    assert out.returncode == 0, out.stderr
    history = read_journal(only_journal()).history
    assert protocol_errors(history) == []
    # the half-streamed reply was in flight: it is the only thing missing
    assert [text_of(m) for m in history] == ["first question", "First answer.", "second question",
                                             "third question", "Third answer."]
