"""A real `tui-agent serve` process on a free loopback port, stopped (and checked stopped) afterwards."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Served:
    """`tui-agent serve … --port P -C WORKSPACE` in its own process group, so stopping it can check that
    no tab's app process outlives the server."""

    def __init__(self, workspace: Path, config_dir: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}/"
        self.url = self.base  # until serving: then the printed URL, token included
        self.token = ""
        given = env
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "TEXTUAL_DRIVER"}
        env["TUI_AGENT_CONFIG_DIR"] = str(config_dir)
        env.update(given or {})  # e.g. a fake API's URL and key
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tui_agent", "serve", "--port", str(self.port), "-C", str(workspace), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, args=(self.process.stdout, self.stdout, self._lines), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.process.stderr, self.stderr, None), daemon=True).start()

    @staticmethod
    def _pump(stream, into: list[str], lines: queue.Queue | None) -> None:
        for line in stream:
            into.append(line)
            if lines is not None:
                lines.put(line)

    def wait_until_serving(self, timeout: float = 30) -> str:
        """The 'tui-agent serving … at URL' line, or an AssertionError with what the server printed."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=min(left, 0.5))
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            if line.startswith("tui-agent serving"):
                self.url = line.split(" at ", 1)[1].split()[0]
                self.token = self.url.split("?token=", 1)[1] if "?token=" in self.url else ""
                return line
        raise AssertionError(f"tui-agent serve did not start within {timeout}s (exit {self.process.poll()}):\n"
                             + "".join(self.stdout + self.stderr))

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM (as Ctrl+C would), then wait for the server and every process it started to end."""
        pgid = self.process.pid
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=timeout)
            deadline = time.monotonic() + timeout
            while group_alive(pgid) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not group_alive(pgid), "an app process outlived tui-agent serve"
            return code
        finally:
            if group_alive(pgid):
                os.killpg(pgid, signal.SIGKILL)
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(timeout=10)
