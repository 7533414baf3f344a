"""A real terminal (tmux, the installed `tui-agent` console script, the demo model): a few prompts,
`/compact`, quit; then `tui-agent --continue --print-outbound` prints exactly the request the panel showed
as next (issue 16: `/compact` was not journaled, so the resumed request had every message and no recap).

What the panel showed is read off the screen: the meter's "Next call ≈N" (the estimate of that request:
chars/4 of system, tools and messages, uncalibrated since the demo model reports no usage), the recap row
"≡recap for #A–B" and the messages sent; the printed body must agree with all three."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from tests.processes import pane_pid
from tests.tmux import capture, wait_for
from tests.waiting import wait_until_sync
from tui_agent.core.tokens import message_tokens, text_tokens, tools_tokens

from .support import make_repo
from .test_terminal import CLI, TMUX
from .test_terminal_plan import keys

PROMPTS = ["what does the handler do?", "and the models?", "where are the helpers?"]


def answered(screen: str, prompt: str) -> bool:
    """The demo model's closing line came after the prompt, and the panel shows the next call again."""
    return (prompt in screen and screen.rfind("Ask me about any of these files") > screen.rfind(prompt)
            and "Next call ≈" in screen)


@pytest.mark.slow
@pytest.mark.skipif(TMUX is None, reason="tmux is not installed, so there is no real terminal to drive")
@pytest.mark.skipif(not CLI.exists(), reason="the tui-agent console script is not installed in this venv")
def test_compact_quit_continue_print_outbound_is_the_panels_next_call(tmp_path) -> None:
    repo = make_repo(tmp_path)
    env = {"TUI_AGENT_CONFIG_DIR": str(tmp_path / "config"), "TUI_AGENT_DATA_DIR": str(tmp_path / "data"),
           "TERM": "xterm-256color"}
    socket = f"tui-agent-compact-{os.getpid()}"
    command = "env -u COLUMNS -u LINES " + " ".join(f"{k}={v}" for k, v in env.items()) + f" {CLI} --model demo"
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "agent", "-x", "170", "-y", "60",
                    "-c", str(repo), command], check=True)
    try:
        wait_for(socket, "Context budget", 20)
        pid = pane_pid(socket)
        for prompt in PROMPTS:
            keys(socket, prompt, "Enter")
            wait_until_sync(lambda: answered(capture(socket), prompt), what=f"the answer to {prompt!r}",
                            timeout=90, shown=lambda: capture(socket))
        keys(socket, "/compact", "Enter")
        screen = wait_for(socket, "Compacted now", 60)
        def recap_shown() -> str | None:
            shown = capture(socket)
            return shown if "≡summary for #" in shown and "Next call ≈" in shown else None

        screen = wait_until_sync(recap_shown, what="the recap row and the next call", timeout=20,
                                 shown=lambda: capture(socket))
        shown_total = int(re.search(r"Next call ≈([\d,]+)", screen).group(1).replace(",", ""))
        first, last = (int(x) for x in re.search(r"≡(?:recap|summary) for #(\d+)–#(\d+)", screen).groups())
        sent = int(re.search(r"→ sent ≈[\d.,k]+ · (\d+) msgs", screen).group(1))
        keys(socket, "C-c")
        wait_for(socket, "again to quit", 10)  # the first Ctrl+C was heard (no fixed sleep)
        keys(socket, "C-c")
        wait_until_sync(lambda: subprocess.run(["tmux", "-L", socket, "has-session", "-t", "agent"],
                                               capture_output=True).returncode != 0,
                        what=f"tui-agent (pid {pid}) to quit on Ctrl+C twice", timeout=15)
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)

    out = subprocess.run([str(CLI), "--model", "demo", "--continue", "--print-outbound"], cwd=repo,
                         env={**os.environ, **env}, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    messages = body["messages"]
    recap = [m for m in messages if "[Context recap:" in json.dumps(m)]
    assert len(recap) == 1, "the resumed request carries the recap /compact made"  # was: every message, no recap
    assert f"{last - first + 1} messages after the first {first} " in json.dumps(recap[0])
    assert "Summary of that part" in json.dumps(recap[0])  # with the demo model's summary
    assert len(messages) == sent  # the panel's "sent" counts the request's messages, the recap among them (#28)
    estimate = (text_tokens(body.get("system", "")) + tools_tokens(body.get("tools", []))
                + sum(message_tokens(m) for m in messages))
    assert estimate == shown_total  # the very request the meter measured as next
