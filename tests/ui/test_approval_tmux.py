"""Issue 40 in a real terminal: a new user's walk (no key, the demo, this repository) with `/approve` on, at
80, 120 and 160 columns. When a compaction waits, the chat says so, and the panel's bar (or, under 100
columns, the folded meter) shows it; "explain the pin rule" typed while it waits arrives whole in the
prompt (its e, x, p and a were the bar's keys, and the bar took the focus); Alt+Y answers without typing;
the question, sent afterwards, is journaled as typed."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.tmux import capture, wait_for, wait_for_all
from tests.waiting import wait_until_sync

from .test_terminal import CLI, TMUX
from .test_tour_tmux import answers
from .test_typing_tmux import prompts_sent

REPO = Path(__file__).resolve().parents[2]
WAITS = re.compile(r"‖ (?:waiting: compaction due at call #|compaction waits \(call #)(\d+)")
QUESTION = "explain the pin rule"


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed, so there is no real terminal to drive")
@pytest.mark.skipif(not CLI.exists(), reason="the tui-agent console script is not installed in this venv")
@pytest.mark.parametrize("width", [80, 120, 160])
def test_a_waiting_compaction_is_shown_and_no_key_typed_meanwhile_is_lost(tmp_path, width: int) -> None:
    data = tmp_path / "data"
    socket = f"tui-agent-approve-{width}-{os.getpid()}"
    env = {"TUI_AGENT_CONFIG_DIR": str(tmp_path / "config"), "TUI_AGENT_DATA_DIR": str(data), "TERM": "xterm-256color"}
    command = ("env -u COLUMNS -u LINES -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u COMPACT_APPROVE "
               + " ".join(f"{k}={v}" for k, v in env.items()) + f" {CLI}")

    def keys(*args: str) -> None:
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "agent", *args], check=True)

    def waiting() -> str | None:
        found = WAITS.search(capture(socket))
        return found.group(1) if found else None

    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "agent", "-x", str(width), "-y", "40",
                    "-c", str(REPO), command], check=True)
    try:
        wait_for(socket, "Ask about this repository", 20)
        keys("-l", "/approve")
        wait_for(socket, "▸ /approve", 20)
        keys("Enter")
        wait_for(socket, "Approve before compacting: on", 20)
        keys("-l", "what is in this repo?")
        keys("Enter")
        first = wait_until_sync(waiting, what="a compaction waiting for approval", timeout=90,
                               shown=lambda: capture(socket))
        wait_for_all(socket, ["Waiting for your answer", "/approve yes"], 10)  # the chat's line
        wait_until_sync(lambda: "alt+y Approve" in capture(socket).splitlines()[-1], what="the footer's Alt+Y",
                        timeout=10, shown=lambda: capture(socket))
        keys("-l", QUESTION)  # e, x, p, a: the bar's old keys
        wait_until_sync(lambda: f"▊ {QUESTION}" in capture(socket), what="the question in the prompt", timeout=30,
                        shown=lambda: capture(socket))
        assert waiting() == first, "no letter answered the wait"
        while not answers(data):  # approve this wait and any later one of the turn, by Alt+Y
            current = waiting()
            if current is not None:
                keys("M-y")
            wait_until_sync(lambda: answers(data) or waiting() not in (current, None), what="the next wait or the "
                            "answer", timeout=90, shown=lambda: capture(socket))
        wait_until_sync(lambda: "Cancel turn" not in capture(socket), what="the turn to end", timeout=30,
                        shown=lambda: capture(socket))
        assert f"▊ {QUESTION}" in capture(socket), "Alt+Y typed nothing into the question"
        keys("Enter")
        wait_until_sync(lambda: len(prompts_sent(data)) >= 2, what="the question sent", timeout=60,
                        shown=lambda: capture(socket))
        assert prompts_sent(data) == ["what is in this repo?", QUESTION]
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
