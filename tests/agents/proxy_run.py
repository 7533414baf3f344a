"""Run `tui-agent proxy --json` as the user would (a subprocess), in front of a fake upstream, and read what it
prints: the base URL from its export line on stderr, one JSON line per call on stdout."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from tests.npm_agents import clean_env

ROOT = Path(__file__).resolve().parents[2]


class ProxyProcess:
    def __init__(self, upstream: str, record_dir: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tui_agent", "proxy", "--port", "0", "--json", "--upstream", upstream,
             "--record-dir", str(record_dir)], cwd=ROOT, env=clean_env(), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        self.record_dir = record_dir
        self.said: list[str] = []
        self.base = ""
        while not self.base:  # the export lines come before anything is served (or the process ended)
            line = self.process.stderr.readline()
            if not line:
                raise AssertionError(f"the proxy ended before listening: {''.join(self.said)}")
            self.said.append(line)
            if line.startswith("export ANTHROPIC_BASE_URL="):
                self.base = line.split("=", 1)[1].strip()

    def stop(self) -> list[dict]:
        """SIGTERM; the JSON lines it printed (it must exit 0)."""
        self.process.send_signal(signal.SIGTERM)
        out, err = self.process.communicate(timeout=30)
        assert self.process.returncode == 0, err
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    def recording(self) -> Path:
        [path] = list(self.record_dir.glob("proxy-*.jsonl"))
        return path

    def exchanges(self) -> list[dict]:
        return exchanges_of(self.recording())


def exchanges_of(path: Path) -> list[dict]:
    """A recording's exchange records, each with its request whole (a delta made whole by its bases)."""
    from tui_agent.core.recordings.proxy_delta import RequestChain

    chain = RequestChain()
    out = []
    for record in map(json.loads, path.read_text().splitlines()):
        if record.get("type") == "exchange":
            record["request"] = chain.request(record)
            out.append(record)
    return out
