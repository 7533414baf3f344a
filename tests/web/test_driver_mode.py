"""Headless or app: decided by -p and TEXTUAL_DRIVER, not by pipes alone.

textual-serve starts the app with stdin and stdout both piped; before, that alone meant "headless, read
the prompt from stdin", so the web driver's packets would have been read as a prompt.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading

from tests.faces.test_demo_and_headless import cli
from tests.ui.support import make_repo
from tui_agent.faces.cli import headless_prompt

WEB_DRIVER = "textual.drivers.web_driver:WebDriver"


def packet(kind: bytes, payload: bytes) -> bytes:
    """textual-serve's stdin framing: type byte, 4-byte big-endian length, payload."""
    return kind + len(payload).to_bytes(4, "big") + payload


def read_app_output(stream, into: queue.Queue) -> None:
    """The web driver's output: its `__GANGLION__` line, then framed packets (type, length, payload)."""
    into.put(stream.readline())
    while (kind := stream.read(1)):
        size = int.from_bytes(stream.read(4), "big")
        into.put((kind, stream.read(size)))


def next_within(items: queue.Queue, timeout: float, what: str):
    """The next item, or an AssertionError after `timeout` seconds (never an unbounded wait)."""
    try:
        return items.get(timeout=timeout)
    except queue.Empty:
        raise AssertionError(f"no {what} on the app's stdout within {timeout}s") from None


def test_headless_prompt_rules(tmp_path):
    """-p always; no -p: headless when stdin is not a terminal, and never under a Textual driver."""
    master, slave = os.openpty()
    read_end, write_end = os.pipe()
    os.close(write_end)
    with open(slave, "w") as tty, open(read_end) as pipe_in:
        assert tty.isatty() and not pipe_in.isatty()
        assert headless_prompt("hi", tty, {}) == "hi"
        assert headless_prompt("-", pipe_in, {"TEXTUAL_DRIVER": WEB_DRIVER}) == "-"
        assert headless_prompt(None, pipe_in, {}) == "-"
        assert headless_prompt(None, None, {}) == "-"  # stdin closed: nothing to read keys from either
        assert headless_prompt(None, pipe_in, {"TEXTUAL_DRIVER": WEB_DRIVER}) is None
        assert headless_prompt(None, tty, {}) is None
        assert headless_prompt(None, tty, {"TEXTUAL_DRIVER": ""}) is None
    os.close(master)


def test_piped_stdin_and_stdout_under_the_web_driver_open_the_app(tmp_path):
    """The real command line with both pipes and TEXTUAL_DRIVER, exactly as textual-serve runs it."""
    repo = make_repo(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"TEXTUAL_DRIVER": WEB_DRIVER, "COLUMNS": "100", "ROWS": "30", "TUI_AGENT_CONFIG_DIR": str(tmp_path / "cfg")})
    app = subprocess.Popen([sys.executable, "-m", "tui_agent", "-C", str(repo), "--model", "demo"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    output: queue.Queue = queue.Queue()
    threading.Thread(target=read_app_output, args=(app.stdout, output), daemon=True).start()
    try:
        # The web driver announces itself first; headless mode would sit reading stdin for a prompt.
        assert next_within(output, 30, "first line") == b"__GANGLION__\n"
        drawn = b""
        while b"Context budget" not in drawn:  # the first frame, as data packets (bounded by next_within)
            kind, payload = next_within(output, 30, "first frame")
            drawn += payload if kind == b"D" else b""
        app.stdin.write(packet(b"M", json.dumps({"type": "quit"}).encode()))
        app.stdin.flush()
        assert app.wait(timeout=30) == 0, app.stderr.read().decode(errors="replace")
        assert b"Demo model" not in drawn  # nothing was read as a prompt
    finally:
        if app.poll() is None:
            app.kill()
            app.wait(timeout=10)


def test_piped_in_and_out_without_a_driver_is_still_headless(tmp_path):
    """`echo … | tui-agent > answer.md` (no -p, no terminal) keeps answering headless, as documented."""
    repo = make_repo(tmp_path)
    out = cli([], repo, env_extra={"TEXTUAL_DRIVER": ""}, stdin="what is in this repo?\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("*Demo model (offline)") and "Here is what I found." in out.stdout


def test_piped_stdin_with_a_terminal_for_output_answers_headless(tmp_path):
    """`echo … | tui-agent` in a terminal: the TUI could read no key (stdin is the pipe), so the piped
    text is the prompt and the answer is printed. (Before, a dead TUI was drawn and nothing answered.)"""
    repo = make_repo(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "TEXTUAL_DRIVER"}
    env["TUI_AGENT_CONFIG_DIR"] = str(tmp_path / "cfg")
    master, slave = os.openpty()
    screen = bytearray()

    def drain() -> None:  # keep the pty from filling up; EIO once the child closes its end
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                return
            if not chunk:
                return
            screen.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        done = subprocess.run([sys.executable, "-m", "tui_agent", "-C", str(repo), "--model", "demo"],
                              input=b"what is in this repo?\n", stdout=slave, stderr=subprocess.PIPE, env=env,
                              timeout=60)
        os.close(slave)
        reader.join(timeout=10)
    finally:
        os.close(master)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    text = screen.decode(errors="replace")
    assert "Demo model (offline)" in text and "Here is what I found." in text
    assert "[tool] Read: README.md" in done.stderr.decode()
