"""A real browser: Chromium (Debian's package, driven by Playwright with `executable_path`) opens
`tui-agent serve`, a prompt is typed for the demo model, and the page shows the reply in the chat and
history rows in the panel. Every request the browser makes is recorded: none may leave loopback.

The screen is read from xterm.js's own buffer (what it draws); the page keeps its Terminal private, so
an init script notes it when textual.js assigns it. A screenshot is kept as a test artefact in
`test-artifacts/serve-browser.png` (gitignored) and the test's tmp dir.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.ui.support import make_repo
from tests.web.support import Served

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM = next((path for name in ("chromium", "chromium-browser")
                 if (path := shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None))),
                None)
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]

NOTE_TERMINAL = """
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  set(value) {
    Object.defineProperty(this, "terminal", {value, writable: true, configurable: true, enumerable: true});
    if (this.websocket_url !== undefined) window.__tuiAgentTerminal = value;
  },
});
"""
SCREEN_TEXT = """() => {
  const terminal = window.__tuiAgentTerminal;
  if (!terminal) return "";
  const buffer = terminal.buffer.active, rows = [];
  for (let i = 0; i < terminal.rows; i++) {
    const line = buffer.getLine(buffer.viewportY + i);
    rows.push(line ? line.translateToString(true) : "");
  }
  return rows.join("\\n");
}"""

FONT_LOADED = """() => [...document.fonts].some(
  face => face.family.replace(/["']/g, "") === "Roboto Mono" && face.status === "loaded")"""


KEYS_FOCUSED = """() => document.activeElement !== null
  && document.activeElement.classList.contains("xterm-helper-textarea")"""


def on_loopback(url: str) -> bool:
    if url.startswith(("data:", "about:", "blob:")):
        return True
    return urlsplit(url).hostname in {"127.0.0.1", "localhost", "::1"}


def launch(playwright, tmp_path: Path):
    """Debian's Chromium, headless, offline flags, a fresh profile; the page notes its terminal."""
    context = playwright.chromium.launch_persistent_context(
        str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=FLAGS,
        viewport={"width": 1500, "height": 900})
    context.add_init_script(NOTE_TERMINAL)
    return context


def wait_for_screen(page, needle: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = page.evaluate(SCREEN_TEXT)
        if needle in screen:
            return screen
        page.wait_for_timeout(100)
    raise AssertionError(f"{needle!r} did not appear in the browser within {timeout}s; screen was:\n{screen}")


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (Debian: apt-get install chromium; "
                    ".ci/run installs it where apt-get works)")
def test_serve_in_a_real_browser(tmp_path):
    from playwright.sync_api import (
        sync_playwright,  # the test extra; no browser download, the system one
    )

    repo = make_repo(tmp_path)
    served = Served(repo, tmp_path / "config", "--model", "demo")
    requests: list[str] = []
    off_loopback: list[str] = []
    sockets: list[str] = []

    def route(request_route):
        url = request_route.request.url
        if on_loopback(url):
            request_route.continue_()
        else:  # offline means offline: record it and make sure it cannot succeed
            off_loopback.append(url)
            request_route.abort()

    try:
        served.wait_until_serving()
        with sync_playwright() as playwright:
            context = launch(playwright, tmp_path)
            try:
                context.route("**/*", route)
                context.on("request", lambda request: requests.append(request.url))
                page = context.pages[0] if context.pages else context.new_page()
                page.on("websocket", lambda socket: sockets.append(socket.url))
                page.goto(served.url, timeout=30_000)

                first = wait_for_screen(page, "Context budget", 30)
                assert "No model call yet" in first and "tool_use" not in first
                assert not off_loopback, f"the page fetched from off loopback: {off_loopback}"
                assert page.evaluate(FONT_LOADED), "the shipped Roboto Mono did not load"
                # no click and no page.focus(): the page gives the terminal the keyboard on load
                page.wait_for_function(KEYS_FOCUSED, timeout=10_000)
                page.keyboard.type("what does the handler do?")
                page.keyboard.press("Enter")
                screen = wait_for_screen(page, "Here is what I found", 60)
                assert "what does the handler do?" in screen
                assert "tool_use Read(" in screen and "tool_result Read" in screen  # the panel's rows
                assert "Next call" in wait_for_screen(page, "Next call", 10)

                ARTIFACTS.mkdir(exist_ok=True)
                shot = tmp_path / "serve-browser.png"
                page.screenshot(path=str(shot))
                shutil.copy(shot, ARTIFACTS / shot.name)

                # A second tab is a session of its own: a fresh history and its own session id.
                other = context.new_page()
                other.goto(served.url, timeout=30_000)
                second = wait_for_screen(other, "Context budget", 30)
                assert "No model call yet" in second
                session_id = lambda text: text.splitlines()[0].rsplit("session ", 1)[-1].strip()  # noqa: E731
                assert session_id(second) != session_id(screen)

                # Ctrl+C with tabs still open: the server ends and takes every tab's app process with it.
                assert served.stop() == 0
            finally:
                context.close()
        assert sockets and all(on_loopback(url) for url in sockets), sockets
        assert requests and not off_loopback, f"the page fetched from off loopback: {off_loopback}"
        assert "Traceback" not in "".join(served.stdout + served.stderr)  # the tabs' apps quit cleanly
        # A session started in the browser is journaled like any other and resumes from the terminal.
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "TEXTUAL_DRIVER"}
        listed = subprocess.run([sys.executable, "-m", "tui_agent", "sessions", "--json", "-C", str(repo)],
                                capture_output=True, text=True, env=env, timeout=60)
        rows = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
        web = [row for row in rows if "what does the handler do?" in json.dumps(row)]
        assert web, f"the browser's session is not in `tui-agent sessions`: {listed.stdout} {listed.stderr}"
        resumed = subprocess.run([sys.executable, "-m", "tui_agent", "--continue", "-C", str(repo), "--model", "demo",
                                  "-p", "what did we do so far?"], capture_output=True, text=True, env=env,
                                 timeout=60, stdin=subprocess.DEVNULL)
        assert resumed.returncode == 0, resumed.stderr
        assert "handler" in resumed.stdout  # the demo answers from the resumed conversation
    finally:
        assert served.stop() == 0


CELL = """() => {
  const terminal = window.__tuiAgentTerminal, box = terminal.element.getBoundingClientRect();
  return {x: box.left, y: box.top, width: box.width / terminal.cols, height: box.height / terminal.rows};
}"""


def _click_text(page, screen: str, text: str) -> None:
    """A real mouse click on the cell where `text` is drawn (xterm.js's grid: the element over cols × rows)."""
    row = next(i for i, line in enumerate(screen.splitlines()) if text in line)
    col = screen.splitlines()[row].index(text)
    cell = page.evaluate(CELL)
    page.mouse.click(cell["x"] + (col + 2) * cell["width"], cell["y"] + (row + 0.5) * cell["height"])


def _wait_gone(page, needle: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while needle in page.evaluate(SCREEN_TEXT):
        assert time.monotonic() < deadline, f"{needle!r} still on the screen after {timeout}s"
        page.wait_for_timeout(100)


def _type_whole(page, text: str) -> None:
    """Type `text`: it must show whole in the prompt, and no letter of it may steer a row (a pin, an
    exclude or an expand is announced in the chat with the way back: "… undoes it")."""
    page.keyboard.type(text)
    screen = wait_for_screen(page, text, 15)
    prompt = next(line for line in screen.splitlines() if text in line)
    assert f"▊ {text}" in prompt, f"the text did not reach the prompt whole:\n{screen}"
    assert "undoes it" not in screen, f"a typed letter steered a row:\n{screen}"


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (Debian: apt-get install chromium; "
                    ".ci/run installs it where apt-get works)")
def test_typing_after_context_a_click_and_a_closed_view_reaches_the_prompt(tmp_path):
    """Issue 28 §2 in the browser: after `/context` (which focuses the panel), after a click on a panel row
    and after closing the view it opened, the next question reaches the prompt whole; no letter of it pins,
    excludes or expands a row (each of those is announced in the chat with the way back)."""
    from playwright.sync_api import sync_playwright

    served = Served(make_repo(tmp_path), tmp_path / "config", "--model", "demo")
    try:
        served.wait_until_serving()
        with sync_playwright() as playwright:
            context = launch(playwright, tmp_path)
            try:
                page = context.pages[0] if context.pages else context.new_page()
                page.goto(served.url, timeout=30_000)
                wait_for_screen(page, "Context budget", 30)
                page.wait_for_function(KEYS_FOCUSED, timeout=10_000)
                page.keyboard.type("what does the handler do?")
                page.keyboard.press("Enter")
                wait_for_screen(page, "Here is what I found", 60)
                wait_for_screen(page, "Next call", 10)

                page.keyboard.type("/context")
                page.keyboard.press("Enter")
                _type_whole(page, "explain the pin rule")  # the panel has the focus now
                page.keyboard.press("Enter")
                wait_for_screen(page, "Ask about this repository", 60)  # answered: the prompt is empty again

                screen = wait_for_screen(page, "tool_result Read", 10)
                _click_text(page, screen, "tool_result Read")  # opens the row's message
                wait_for_screen(page, "Esc closes", 15)  # the view is up, as a reader sees it
                page.keyboard.press("Escape")
                _wait_gone(page, "Esc closes", 15)
                _type_whole(page, "expand on the pin rule")
            finally:
                context.close()
    finally:
        assert served.stop() == 0
    assert "Traceback" not in "".join(served.stdout + served.stderr)
