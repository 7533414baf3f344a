"""A reader that stops reading is no crash (issue 40): `tui-agent -p … | head` printed "tui-agent crashed:
BrokenPipeError" and exited 1; `replay --report | head` said "cannot read FILE: Broken pipe", exit 2; with
Python's buffered standard output (any pipe) the faces that print at once ended with "Exception ignored …
BrokenPipeError", exit 120. Every face that writes to standard output now ends quietly with its own code.

Real processes and real pipes: standard output is a pipe whose reading end is closed before the face
writes (what `| head` leaves once `head` has exited), or a real `head -2`."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import cli_env
from tests.shared import SMALL_LOG
from tests.fakes.fake_anthropic import FakeAnthropic, message_events, sse, text
from tests.fakes.http import Reply
from tui_agent.core.journal.records import FORMAT_VERSION, new_session_id
from tui_agent.core.paths import sessions_dir

ROOT = Path(__file__).resolve().parents[1]


def journal_in(workspace: Path) -> str:
    """A saved session of `workspace`, long enough that its export and listing are real output."""
    sid = new_session_id()
    words = "the answer is forty-two " * 2_000
    lines = [{"type": "header", "format": FORMAT_VERSION, "session_id": sid, "workspace": str(workspace),
              "model": "demo", "provider": "demo", "started": "2026-12-01T00:00:00.000Z"},
             {"type": "message", "at": "2026-12-01T00:00:01.000Z", "index": 0,
              "message": {"role": "user", "content": "what is the answer?"}},
             {"type": "message", "at": "2026-12-01T00:00:02.000Z", "index": 1,
              "message": {"role": "assistant", "content": [{"type": "text", "text": words}]}}]
    path = sessions_dir() / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    return sid


def into_closed_pipe(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run `tui-agent ARGS` with standard output a pipe nobody reads any more."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "tui_agent", *args], cwd=cwd, env=env, stdout=write_end,
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, timeout=120)
    finally:
        os.close(write_end)


FACES = {
    "print": ["-p", "hello", "--model", "demo"],
    "replay-report": ["replay", str(SMALL_LOG), "--report"],
    "replay-json": ["replay", str(SMALL_LOG), "--json"],
    "watch-json": ["watch", str(SMALL_LOG), "--json"],
    "export": ["export", "{sid}", "--format", "jsonl"],
    "sessions": ["sessions", "--json"],
    "print-outbound": ["--continue", "--print-outbound"],
    "help": ["--help"],
}


@pytest.mark.parametrize("face", sorted(FACES))
def test_a_face_whose_reader_is_gone_ends_quietly(face: str, tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    sid = journal_in(workspace)
    env = cli_env(tmp_path)
    env.pop("PYTHONUNBUFFERED", None)  # standard output block-buffered, as into any pipe
    done = into_closed_pipe([arg.format(sid=sid) for arg in FACES[face]], workspace, env)
    assert done.returncode == 0, done.stderr
    assert "crashed" not in done.stderr and "Broken pipe" not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert not (tmp_path / "config" / "logs").exists()  # no crash log either


def test_print_streaming_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """Unbuffered, -p's first streamed words meet the closed pipe inside the turn."""
    env = {**cli_env(tmp_path), "PYTHONUNBUFFERED": "1"}
    done = into_closed_pipe(["-p", "hello", "--model", "demo"], tmp_path, env)
    assert done.returncode == 0 and "crashed" not in done.stderr and "Exception" not in done.stderr, done.stderr


def in_pieces_of_4k(reply: str) -> list[bytes]:
    """The real SSE of a text reply, its text in 4 kB deltas (the fake's own 6-character ones would make
    this test's 200 kB 33,000 events)."""
    events = message_events(text("x"))
    at = next(n for n, event in enumerate(events) if b"text_delta" in event)
    pieces = [sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                          "delta": {"type": "text_delta", "text": reply[n:n + 4096]}})
              for n in range(0, len(reply), 4096)]
    return events[:at] + pieces + events[at + 1:]


def test_print_piped_into_head_ends_quietly_with_the_session_kept(tmp_path: Path) -> None:
    """The real `tui-agent -p … | head -2` against the fake Claude, with a reply far longer than a pipe holds."""
    workspace = tmp_path / "repo"
    workspace.mkdir()
    reply = "".join(f"line {n} of a long answer\n" for n in range(8_000))  # 200 kB: three pipes full
    with FakeAnthropic() as fake:
        fake.replies.append(Reply(chunks=in_pieces_of_4k(reply)))
        head = subprocess.Popen(["head", "-2"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        agent = subprocess.run([sys.executable, "-m", "tui_agent", "-p", "tell me everything"], cwd=workspace,
                               env=cli_env(tmp_path, fake), stdout=head.stdin, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, text=True, timeout=120)
        head.stdin.close()
        shown = head.stdout.read().decode()
        head.wait(timeout=30)
    assert shown.splitlines() == ["line 0 of a long answer", "line 1 of a long answer"]
    assert agent.returncode == 0 and "crashed" not in agent.stderr, agent.stderr
    assert "Exception" not in agent.stderr and "Traceback" not in agent.stderr, agent.stderr
    assert len(list(sessions_dir().glob("*.jsonl"))) == 1  # the session was journaled as usual


def test_a_broken_pipe_elsewhere_is_still_a_crash(monkeypatch, capsys) -> None:
    """Standard output still has its reader: the EPIPE came from another pipe (an MCP server's stdin)."""
    from tui_agent.faces import cli

    def broken(argv: list[str]) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli, "_main", broken)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert cli.main(["-p", "x"]) == 1
    assert "tui-agent crashed: BrokenPipeError" in sys.stderr.getvalue()
