"""End to end through the command line: `tui-agent -p` talking to a fake Claude over real HTTP (the real
anthropic SDK), calling tools of a real MCP server process, with real tools on a real workspace."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


from tests.e2e.conftest import cli_env
from tests.fakes.fake_anthropic import FakeAnthropic, text, tool_use
from tests.mcp.helpers import demo_entry, write_config


def run_cli(args: list[str], cwd: Path, fake: FakeAnthropic, tmp_path: Path, **env_extra: str):
    env = cli_env(tmp_path, fake, **env_extra)
    return subprocess.run([sys.executable, "-m", "tui_agent", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=90, stdin=subprocess.DEVNULL)


def results_in(request: dict) -> list[dict]:
    return [b for m in request["body"]["messages"] if m["role"] == "user" for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"]


def test_claude_reads_a_file_and_calls_an_mcp_tool(tmp_path, fake):
    workspace = tmp_path / "repo"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the answer is 42\n")
    write_config(workspace / ".mcp.json", {"demo": demo_entry()})
    fake.replies += [
        tool_use("Read", {"file_path": "notes.txt"}, "toolu_1", say="Reading the notes."),
        tool_use("mcp__demo__echo", {"message": "42"}, "toolu_2"),
        text("The notes say 42, and the demo server agrees."),
    ]
    out = run_cli(["-p", "what do the notes say?", "--trust-project-mcp"], workspace, fake, tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Reading the notes." in out.stdout
    assert out.stdout.rstrip().endswith("The notes say 42, and the demo server agrees.")
    assert "[tool] Read: notes.txt" in out.stderr and "[tool] mcp__demo__echo" in out.stderr
    requests = fake.message_requests
    assert len(requests) == 3
    tools = {t["name"] for t in requests[0]["body"]["tools"]}
    assert {"Read", "Glob", "Grep", "mcp__demo__echo", "mcp__demo__write_note"} <= tools
    assert "the answer is 42" in results_in(requests[1])[0]["content"]
    assert results_in(requests[2])[-1]["content"] == "got:42"
    assert requests[0]["headers"]["authorization"] == "Bearer test-key"


def test_non_read_only_mcp_tool_is_denied_headless_then_allowed(tmp_path, fake):
    workspace = tmp_path / "repo"
    workspace.mkdir()
    write_config(workspace / ".mcp.json", {"demo": demo_entry()})
    target = workspace / "note.md"
    call = tool_use("mcp__demo__write_note", {"path": str(target), "text": "hello"}, "toolu_w")
    fake.replies += [call, text("I was not allowed to write the note.")]
    out = run_cli(["-p", "write a note", "--trust-project-mcp"], workspace, fake, tmp_path)
    assert out.returncode == 4 and "denied" in out.stderr  # its own code: not a usage error (2)
    assert not target.exists()
    # Headless has nobody to ask: the model is told about the denial and answers (issue 9, item 13).
    assert len(fake.message_requests) == 2
    assert "I was not allowed to write the note." in out.stdout
    denial = fake.message_requests[1]["body"]["messages"][-1]["content"][0]
    assert denial["tool_use_id"] == "toolu_w" and denial["is_error"]

    fake.replies += [call, text("Written.")]
    out = run_cli(["-p", "write a note", "--allow-write", "--trust-project-mcp"], workspace, fake, tmp_path)
    assert out.returncode == 0, out.stderr
    assert target.read_text() == "hello"


def test_a_broken_mcp_config_warns_and_the_agent_still_answers(tmp_path, fake):
    workspace = tmp_path / "repo"
    workspace.mkdir()
    (workspace / ".mcp.json").write_text("{not json")
    fake.replies += [text("Still here.")]
    out = run_cli(["-p", "hello"], workspace, fake, tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Still here." in out.stdout
    assert ".mcp.json" in out.stderr and "warning" in out.stderr


def test_bad_key_is_one_clear_line(tmp_path, fake):
    fake.api_key = "another-key"
    out = run_cli(["-p", "hello"], tmp_path, fake, tmp_path)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines()[-1].startswith("error:") and "ANTHROPIC_API_KEY" in out.stderr


def test_trace_never_leaks_the_key_or_contents(tmp_path, fake):
    (tmp_path / "secret.txt").write_text("TOP-SECRET-CONTENT\n")
    fake.replies += [tool_use("Read", {"file_path": "secret.txt"}, "toolu_s"), text("done")]
    out = run_cli(["-p", "read it"], tmp_path, fake, tmp_path, TRACE="1")
    assert out.returncode == 0, out.stderr
    trace_lines = [l for l in out.stderr.splitlines() if l.startswith("[trace]")]
    assert any("api.request" in l for l in trace_lines)
    assert not any("test-key" in l or "TOP-SECRET" in l for l in trace_lines)
