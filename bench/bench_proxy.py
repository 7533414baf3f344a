"""What `tui-agent proxy` adds: time to first byte per call, and an agent's wall time, through it against direct.

Side by side in one run, alternated: the same streamed answer from a loopback fake, asked directly and through
`tui-agent proxy --json` (a subprocess, as a user runs it): the median time to the first byte of the answer
over many calls on kept-alive connections, and the median added per call (paired). Then real agents (npm,
cached), each the same multi-call turn: Claude Code `-p` (three Reads and an answer) and `codex exec` (three
commands, a compaction, an answer), through the proxy and direct.

    .venv/bin/python bench/bench_proxy.py [--calls 300] [--runs 5]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.agents.claude_run import ClaudeCodeFake, run_claude_turn, workspace  # noqa: E402
from tests.agents.codex_run import fake_for_codex, run_codex_turn  # noqa: E402
from tests.agents.proxy_run import ProxyProcess  # noqa: E402
from tests.fakes.fake_anthropic import FakeAnthropic, message_events, text  # noqa: E402
from tests.fakes.http import Reply  # noqa: E402
from tests.npm_agents import claude_env, npm_agent  # noqa: E402

BODY = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 200, "stream": True,
                   "messages": [{"role": "user", "content": "x " * 20000}]}).encode()  # a 40 KB request
EVENTS = message_events(text("an answer of a few words, streamed in pieces " * 4))


class Streamer(FakeAnthropic):
    def handle(self, path, headers, body, raw):  # noqa: ANN001, ANN201
        return Reply(chunks=list(EVENTS))


def first_byte_ms(connection: http.client.HTTPConnection) -> float:
    started = time.perf_counter()
    connection.request("POST", "/v1/messages", body=BODY, headers={
        "content-type": "application/json", "x-api-key": "test-key", "anthropic-version": "2023-06-01"})
    answer = connection.getresponse()
    answer.read1(1)
    first = time.perf_counter() - started
    answer.read()
    return first * 1000


def measure_ttfb(calls: int, scratch: Path) -> None:
    fake = Streamer()
    fake.server.RequestHandlerClass.disable_nagle_algorithm = True
    with fake:
        proxy = ProxyProcess(fake.origin, scratch / "ttfb")
        try:
            port = int(proxy.base.rsplit(":", 1)[1])
            direct = http.client.HTTPConnection("127.0.0.1", fake.port)
            through = http.client.HTTPConnection("127.0.0.1", port)
            for _ in range(20):  # warm both paths (connections, caches)
                first_byte_ms(direct), first_byte_ms(through)
            pairs = [(first_byte_ms(direct), first_byte_ms(through)) for _ in range(calls)]
        finally:
            proxy.stop()
    d, p = [a for a, _ in pairs], [b for _, b in pairs]
    added = sorted(b - a for a, b in pairs)
    print(f"time to first byte, {calls} alternated calls of a 40 KB request, streamed answer:")
    print(f"  direct       median {statistics.median(d):6.2f} ms   p90 {_p90(d):6.2f} ms")
    print(f"  via proxy    median {statistics.median(p):6.2f} ms   p90 {_p90(p):6.2f} ms")
    print(f"  added        median {statistics.median(added):6.2f} ms   p90 {_p90(added):6.2f} ms  (paired)")


def _p90(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.9)]


def measure_claude(runs: int, scratch: Path) -> None:
    exe = npm_agent("claude-code")
    direct, through = [], []
    for n in range(runs + 1):  # the first pair warms the caches and is not counted
        for via in (False, True):
            root = scratch / f"cc-{n}-{via}"
            files = workspace(root / "work")
            fake = ClaudeCodeFake(files)
            with fake:
                proxy = ProxyProcess(fake.origin, root / "rec") if via else None
                base = proxy.base if proxy else fake.origin
                started = time.perf_counter()
                done = run_claude_turn(exe, claude_env(root / "home", root / "work", base), root / "work")
                wall = time.perf_counter() - started
                if proxy:
                    proxy.stop()
            assert done.returncode == 0, done.stderr[-2000:]
            if n:
                (through if via else direct).append(wall)
    _walls("Claude Code -p (3 Reads + answer)", direct, through)


def measure_codex(runs: int, scratch: Path) -> None:
    direct, through = [], []
    for n in range(runs + 1):
        for via in (False, True):
            root = scratch / f"cx-{n}-{via}"
            fake, _ = fake_for_codex()
            with fake:
                proxy = ProxyProcess(fake.origin, root / "rec") if via else None
                base = (proxy.base if proxy else fake.origin) + "/v1"
                started = time.perf_counter()
                done = run_codex_turn(root / "home", root / "work", base)
                wall = time.perf_counter() - started
                if proxy:
                    proxy.stop()
            assert done.returncode == 0, done.stderr[-2000:]
            if n:
                (through if via else direct).append(wall)
    _walls("codex exec (3 commands, compaction, answer)", direct, through)


def _walls(name: str, direct: list[float], through: list[float]) -> None:
    d, p = statistics.median(direct), statistics.median(through)
    print(f"{name}, {len(direct)} alternated runs each: direct median {d:.2f} s, via proxy {p:.2f} s "
          f"({(p / d - 1) * 100:+.1f}%)")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} at start")
    with tempfile.TemporaryDirectory() as tmp:
        measure_ttfb(args.calls, Path(tmp))
        measure_claude(args.runs, Path(tmp))
        measure_codex(args.runs, Path(tmp))
    print(f"load average {os.getloadavg()[0]:.2f} at end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
