"""Headless with nobody to ask (issue 9, item 13): a denied tool's denial goes back to the model as its
result, the model's answer is printed, and the exit code (4, `exit_codes.DENIED`) still says a tool was denied. Before, the
turn ended at the denial and the model never heard of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui_agent.faces import exit_codes

from tests.fakes.fake_anthropic import FakeAnthropic, text, tool_use

CLI = Path(sys.executable).with_name("tui-agent")

@pytest.mark.skipif(not CLI.exists(), reason="the tui-agent console script is not installed in this venv")
def test_headless_tells_the_model_about_a_denial_and_prints_its_answer(tmp_path: Path) -> None:
    """Issue 9 item 13: the denial is the tool's result, the model answers, the exit code says denied."""
    replies = [tool_use("Write", {"file_path": "a.txt", "content": "x"}, "toolu_w"),
               text("I was not allowed to write a.txt; run me with --allow-write.")]
    with FakeAnthropic(replies=replies) as fake:
        env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url,
               "ANTHROPIC_MODEL": "claude-fake-1", "TUI_AGENT_CONFIG_DIR": str(tmp_path / ".config")}
        out = subprocess.run([str(CLI), "-p", "write a.txt"], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=60)
        sent = fake.message_requests
    assert out.returncode == exit_codes.DENIED, out.stderr  # 4: its own code, not a usage error
    assert "I was not allowed to write a.txt" in out.stdout
    assert "denied" in out.stderr
    assert not (tmp_path / "a.txt").exists()
    assert len(sent) == 2
    result = sent[1]["body"]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] and "ALLOW_WRITE" in json.dumps(result)
