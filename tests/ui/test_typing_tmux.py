"""Issue 18 in a real terminal: text typed one Tab (the chat) and two Tabs (the budget rows) away from
the prompt, spaces and Enter included, is sent as typed, and the next request is otherwise unchanged
(no pin, exclude or expand was recorded: the journal would have a `compaction_change` for each)."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Callable

import pytest

from tests.tmux import capture, wait_for
from tests.waiting import wait_until_sync

from .support import make_repo
from .test_terminal import CLI, TMUX


def journal_records(data: "os.PathLike[str]") -> list[dict]:
    """The records of the journals a live TUI is writing: only lines that end with their newline. A record
    in flight can be seen half-written (a large write reaches the file page by page; a reader in between
    saw 'Unterminated string' and the tour failed under load): like every reader of a growing file
    (`core/recordings/follow.py`), the unterminated tail is left for the next read."""
    records: list[dict] = []
    for path in sorted((data / "sessions").glob("*.jsonl")) if (data / "sessions").is_dir() else []:
        complete, _, _in_flight = path.read_bytes().rpartition(b"\n")
        for line in complete.decode("utf-8").split("\n"):
            if line.strip():
                records.append(json.loads(line))
    return records


def test_a_record_still_being_written_is_read_once_it_is_whole(tmp_path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    whole = json.dumps({"type": "message", "index": 0, "message": {"role": "user", "content": "hi"}}) + "\n"
    second = json.dumps({"type": "message", "index": 1, "message": {"role": "assistant", "content": "x" * 9000}}) + "\n"
    (sessions / "s.jsonl").write_text(whole + second[:4096])  # what a reader can see mid-write
    assert [r["index"] for r in journal_records(tmp_path)] == [0]
    (sessions / "s.jsonl").write_text(whole + second)
    assert [r["index"] for r in journal_records(tmp_path)] == [0, 1]


def prompts_sent(data) -> list[str]:
    """The user prompts the journal recorded (tool results left out)."""
    sent = []
    for record in journal_records(data):
        message = record.get("message") if record.get("type") == "message" else None
        if message and message["role"] == "user" and all(b.get("type") == "text" for b in message["content"]):
            sent.append("".join(b["text"] for b in message["content"]))
    return sent


def turns_answered(data) -> int:
    """Final answers in the journal: assistant messages without a tool call (one per finished turn)."""
    return sum(1 for r in journal_records(data) if r.get("type") == "message" and r["message"]["role"] == "assistant"
               and not any(b.get("type") == "tool_use" for b in r["message"]["content"]))


def start_demo(tmp_path, name: str) -> tuple[str, "os.PathLike[str]", Callable[..., None]]:
    """`tui-agent --model demo` in a repo under tmux (140×40, its own config and data dirs): the socket,
    the data dir whose journal the test reads, and a function that sends keys."""
    repo = make_repo(tmp_path)
    data = tmp_path / "data"
    socket = f"tui-agent-{name}-{os.getpid()}"
    env = {"TUI_AGENT_CONFIG_DIR": str(tmp_path / "config"), "TUI_AGENT_DATA_DIR": str(data),
           "TERM": "xterm-256color"}
    command = "env -u COLUMNS -u LINES " + " ".join(f"{k}={v}" for k, v in env.items()) + f" {CLI} --model demo"
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "agent", "-x", "140", "-y", "40",
                    "-c", str(repo), command], check=True)

    def keys(*args: str) -> None:
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "agent", *args], check=True)

    return socket, data, keys


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed, so there is no real terminal to drive")
@pytest.mark.skipif(not CLI.exists(), reason="the tui-agent console script is not installed in this venv")
def test_text_typed_after_one_and_two_tabs_is_sent_as_typed(tmp_path) -> None:
    socket, data, keys = start_demo(tmp_path, "typing")

    def sent(count: int) -> list[str]:
        """Wait for the `count`th turn to be answered; the prompts sent so far."""
        wait_until_sync(lambda: turns_answered(data) >= count, what=f"{count} answered turns in the journal",
                        timeout=90, shown=lambda: capture(socket))
        return prompts_sent(data)

    def idle() -> None:
        """The answer is journaled just before the turn worker ends: wait until the footer no longer
        offers "Cancel turn" (a prompt sent while a turn runs would be queued, not typed on the idle screen)."""
        wait_until_sync(lambda: "Cancel turn" not in capture(socket), what="the turn to end", timeout=30,
                        shown=lambda: capture(socket))

    try:
        wait_for(socket, "Context budget", 20)
        keys("-l", "what does the handler do?")
        keys("Enter")
        sent(1)
        idle()
        keys("Tab")  # the chat
        keys("-l", "explain the models please")
        keys("Enter")
        assert sent(2)[1] == "explain the models please"
        idle()
        keys("Tab", "Tab")  # the budget rows: e x p would have expanded, excluded, pinned
        keys("-l", "explain this expression")
        keys("Enter")
        prompts = sent(3)
        assert prompts == ["what does the handler do?", "explain the models please", "explain this expression"]
        changes = [r for r in journal_records(data) if r.get("type") == "compaction_change"]
        assert changes == [], f"typing on the panel changed the request: {changes}"
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)


def journal_order(data) -> list[str]:
    """The journal's messages as "user: <prompt>", "tool", "answer" (a final reply without a tool call)."""
    order = []
    for record in journal_records(data):
        message = record.get("message") if record.get("type") == "message" else None
        if message is None:
            continue
        blocks = message["content"]
        if message["role"] == "user":
            texts = [b["text"] for b in blocks if b.get("type") == "text"]
            order.append(f"user: {''.join(texts)}" if len(texts) == len(blocks) else "tool")
        elif not any(b.get("type") == "tool_use" for b in blocks):
            order.append("answer")
    return order


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed, so there is no real terminal to drive")
@pytest.mark.skipif(not CLI.exists(), reason="the tui-agent console script is not installed in this venv")
def test_a_prompt_typed_during_a_running_demo_turn_is_queued_and_sent_after_it(tmp_path) -> None:
    """Enter while the demo's turn runs used to clear the text and refuse it; now it waits and is sent as
    the next prompt once the running turn has answered (the journal keeps the order)."""
    socket, data, keys = start_demo(tmp_path, "queue")

    try:
        wait_for(socket, "Context budget", 20)
        keys("-l", "what is in this repo?")
        keys("Enter")
        wait_for(socket, "Cancel turn", 20)  # the demo's turn is running (it streams word by word)
        keys("-l", "and what do the models hold?")
        keys("Enter")
        wait_until_sync(lambda: turns_answered(data) >= 2, what="both turns answered", timeout=90,
                        shown=lambda: capture(socket))
        order = journal_order(data)
        first, second = order.index("user: what is in this repo?"), order.index("user: and what do the models hold?")
        assert "answer" in order[first:second], f"the queued prompt was sent before the turn ended: {order}"
        assert prompts_sent(data) == ["what is in this repo?", "and what do the models hold?"]
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
