"""The README's one-minute tour in a real terminal, in this repository (issue 28 §3): the five tour prompts
with the demo model, then `/clear` and the biggest files again. Each answer is read from the journal: the
layout with its folders, both searched terms, the biggest files ranked by real line counts (never "could
not measure", never a placeholder reported as a file), the named file, and every earlier prompt."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.tmux import capture, wait_for
from tests.waiting import wait_until_sync

from .test_terminal import CLI, TMUX
from .test_typing_tmux import journal_records

REPO = Path(__file__).resolve().parents[2]
TOUR = ("what is in this repo?", "grep for TODO and FIXME", "what are the biggest files?",
        "what does tui_agent/core/cache_clock.py do?", "what did we do so far?")
PLACEHOLDER = re.compile(r"cleared from context|\(\d+ chars\)|gave 0 matching lines|could not measure")


def answers(data: Path) -> list[str]:
    """The final replies in the journal (assistant messages without a tool call), oldest first."""
    return ["".join(b.get("text", "") for b in r["message"]["content"]) for r in journal_records(data)
            if r.get("type") == "message" and r["message"]["role"] == "assistant"
            and not any(b.get("type") == "tool_use" for b in r["message"]["content"])]


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed, so there is no real terminal to drive")
@pytest.mark.skipif(not CLI.exists(), reason="the tui-agent console script is not installed in this venv")
def test_the_tour_works_in_this_repository_and_after_clear(tmp_path) -> None:
    data = tmp_path / "data"
    socket = f"tui-agent-tour-{os.getpid()}"
    env = {"TUI_AGENT_CONFIG_DIR": str(tmp_path / "config"), "TUI_AGENT_DATA_DIR": str(data), "TERM": "xterm-256color"}
    command = "env -u COLUMNS -u LINES " + " ".join(f"{k}={v}" for k, v in env.items()) + f" {CLI} --model demo"
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "agent", "-x", "160", "-y", "45",
                    "-c", str(REPO), command], check=True)

    def ask(prompt: str, count: int) -> str:
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "agent", "-l", prompt], check=True)
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "agent", "Enter"], check=True)
        wait_until_sync(lambda: len(answers(data)) >= count, what=f"the answer to {prompt!r}", timeout=120,
                        shown=lambda: capture(socket))
        wait_until_sync(lambda: "Cancel turn" not in capture(socket), what="the turn to end", timeout=30,
                        shown=lambda: capture(socket))
        return answers(data)[count - 1]

    try:
        wait_for(socket, "Context budget", 20)
        replies = [ask(prompt, n) for n, prompt in enumerate(TOUR, start=1)]
        overview, grep, biggest, named, recap = replies
        folders = re.findall(r"^- `([\w.-]+)/`: [\d,]+ files?, [\d,]+ lines?$", overview, flags=re.MULTILINE)
        assert {"tui_agent", "tests", "bench", "docs", "themes"} <= set(folders), overview
        assert overview.index("`tui_agent/`") < overview.index("Loose files at the top level")
        assert "`TODO`:" in grep and "`FIXME`:" in grep
        ranked = re.findall(r"^- `([^`]+)`: ([\d,]+) lines$", biggest, flags=re.MULTILINE)
        assert len(ranked) >= 3, biggest
        counts = [int(lines.replace(",", "")) for _, lines in ranked]
        assert counts == sorted(counts, reverse=True), biggest
        for path, count in zip((path for path, _ in ranked), counts):  # real files, at their real line counts
            body = (REPO / path).read_bytes()
            assert count == body.count(b"\n") + (bool(body) and not body.endswith(b"\n")), (path, biggest)
        assert "cache_clock.py" in named
        for n, prompt in enumerate(TOUR[:-1], start=1):
            assert f"{n}. “{prompt}”" in recap, recap
        for reply in replies:
            assert not PLACEHOLDER.search(reply), reply
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "agent", "-l", "/clear"], check=True)
        wait_for(socket, "▸ /clear", 20)  # the hint is up: Enter runs the command, not a half-typed line
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "agent", "Enter"], check=True)
        wait_for(socket, "Cleared: a new conversation", 20)
        again = ask("what are the biggest files?", len(TOUR) + 1)
        assert re.findall(r"^- `([^`]+)`: ([\d,]+) lines$", again, flags=re.MULTILINE)[:3] == ranked[:3], again
        assert not PLACEHOLDER.search(again), again
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
