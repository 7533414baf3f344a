"""The proxy's bounds, side by side in one run: this tree's `tui-agent proxy` beside a base commit's.

Each case starts a fresh proxy (`python -m tui_agent proxy --json`, a subprocess as a user runs it; the base
commit's code `git archive`d into a temporary folder) in front of a loopback upstream, and reads the proxy's
own figures from /proc: its resident memory at rest, its peak (VmHWM) during the case.

- memory: a 100 MB streamed answer read by the client; 8 concurrent 20 MB requests (answered small), until
  all 8 are recorded;
- connections: 500 clients connecting and asking at once; the resets, refusals and errors they met;
- cancels: 30 clients that leave while the upstream is still thinking (no answer head yet): how many
  upstream requests are closed within 1 s of their client leaving, and after 6 s;
- slow heads: 50 connections that send half a request head: how many are still open after the idle
  timeout plus 2 s (this tree runs with `--idle-timeout 2`; the base has no such bound);
- recording: a 200-call session's recording beside its last request and its answers.

    .venv/bin/python bench/bench_proxy_bounds.py [--base REV]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.fake_anthropic import message_events, sse, text, tool_use  # noqa: E402
from tests.fakes.http import FakeServer, Reply  # noqa: E402

MB = 1024 * 1024
SMALL = message_events(text("ok"))


class Proxy:
    """`tui-agent proxy --json` from `tree` (None: this one) in front of `upstream`."""

    def __init__(self, tree: Path | None, upstream: str, scratch: Path, *extra: str, open_files: int = 0) -> None:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        if tree is not None:
            env["PYTHONPATH"] = str(tree)
        self.record_dir = scratch / f"rec-{time.monotonic_ns()}"
        self.process = subprocess.Popen([sys.executable, "-m", "tui_agent", "proxy", "--port", "0", "--json",
                                         "--upstream", upstream, "--record-dir", str(self.record_dir), *extra],
                                        cwd=tree or ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True, preexec_fn=(lambda: _limit_files(open_files)) if open_files else None)
        self.port = 0
        while not self.port:
            line = self.process.stderr.readline()
            if not line:
                raise SystemExit("the proxy did not start")
            if line.startswith("export ANTHROPIC_BASE_URL="):
                self.port = int(line.strip().rsplit(":", 1)[1])
        threading.Thread(target=self.process.stderr.read, daemon=True).start()

    def status(self, key: str) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
        return 0

    def recorded(self) -> int:
        return sum(path.read_bytes().count(b'"type": "exchange"') for path in self.record_dir.glob("*.jsonl"))

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


class Answers(FakeServer):
    """Answers `chunks` (a warm-up request, its body saying "warm", a small answer), `delay` between chunks."""

    def __init__(self, chunks: list[bytes], delay: float = 0.0) -> None:
        super().__init__()
        self.chunks, self.delay = chunks, delay
        self.server.RequestHandlerClass.disable_nagle_algorithm = True
        self.server.socket.listen(2048)  # (the stdlib server's backlog of 5 would be the bottleneck measured)

    def handle(self, path, headers, body, raw):  # noqa: ANN001, ANN201
        if b'"warm"' in raw:
            return Reply(chunks=SMALL)
        return Reply(chunks=self.chunks, delay=self.delay)


def _limit_files(soft: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


WARM = json.dumps({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "warm"}]}).encode()


def _post(port: int, body: bytes, read: bool = True) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    connection.request("POST", "/v1/messages", body=body, headers={"content-type": "application/json"})
    answer = connection.getresponse()
    got = 0
    while read and (data := answer.read(MB)):
        got += len(data)
    return got


def _body(size: int) -> bytes:
    return json.dumps({"model": "m", "max_tokens": 5, "stream": True,
                       "messages": [{"role": "user", "content": "x" * size}]}).encode()


def memory_answer(tree: Path | None, scratch: Path) -> str:
    piece = sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": "z" * 65_000}})
    upstream = Answers(SMALL[:2] + [piece] * (100 * MB // len(piece)) + SMALL[-3:]).start()
    proxy = Proxy(tree, upstream.origin, scratch)
    try:
        _post(proxy.port, WARM)
        rest = proxy.status("VmRSS")
        got = _post(proxy.port, _body(10))
        _wait(lambda: proxy.recorded() >= 2)
        return f"{got / MB:.0f} MB answer: +{(proxy.status('VmHWM') - rest) / MB:.0f} MB (at rest {rest / MB:.0f} MB)"
    finally:
        proxy.stop()
        upstream.stop()


def memory_requests(tree: Path | None, scratch: Path) -> str:
    upstream = Answers(SMALL).start()
    proxy = Proxy(tree, upstream.origin, scratch)
    try:
        _post(proxy.port, WARM)
        rest = proxy.status("VmRSS")
        body = _body(20 * MB)
        threads = [threading.Thread(target=_post, args=(proxy.port, body)) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        _wait(lambda: proxy.recorded() >= 9)
        return f"8 x 20 MB requests: +{(proxy.status('VmHWM') - rest) / MB:.0f} MB"
    finally:
        proxy.stop()
        upstream.stop()


def _wait(condition, limit: float = 300) -> None:  # noqa: ANN001
    deadline = time.monotonic() + limit
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


async def _many(port: int, n: int) -> dict[str, int]:
    request = (b"POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
               b"connection: close\r\n\r\n%s")
    body = _body(10)
    outcome: dict[str, int] = {}

    async def one() -> None:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request % (len(body), body))
            answer = await reader.read()
            writer.close()
            kind = "ok" if answer.startswith(b"HTTP/1.1 200") else f"answered {answer[9:12].decode() or 'nothing'}"
        except ConnectionResetError:
            kind = "reset"
        except ConnectionRefusedError:
            kind = "refused"
        except OSError as error:
            kind = type(error).__name__
        outcome[kind] = outcome.get(kind, 0) + 1

    await asyncio.gather(*(one() for _ in range(n)))
    return outcome


def connections(tree: Path | None, scratch: Path) -> str:
    """500 at once, each answered over 0.3 s (all open together), the proxy started with the common soft limit
    of 1,024 open files: each connection holds two."""
    upstream = Answers(SMALL, delay=0.05).start()
    proxy = Proxy(tree, upstream.origin, scratch, open_files=1024)
    try:
        outcome = asyncio.run(_many(proxy.port, 500))
        return "500 concurrent connections (ulimit -n 1024): " + ", ".join(f"{v} {k}" for k, v in sorted(outcome.items()))
    finally:
        proxy.stop()
        upstream.stop()


class Thinking:
    """An upstream that reads each request and answers nothing; notes when each connection is closed."""

    def __init__(self) -> None:
        import socket

        self.listener = socket.create_server(("127.0.0.1", 0), backlog=256)
        self.origin = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.closed: list[float] = []
        self.asked = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection) -> None:  # noqa: ANN001
        data = b""
        while b"\r\n\r\n" not in data:
            data += connection.recv(65536)
        self.asked += 1
        try:
            while connection.recv(65536):
                pass
        except OSError:
            pass
        self.closed.append(time.monotonic())


def cancels(tree: Path | None, scratch: Path) -> str:
    import socket

    upstream = Thinking()
    proxy = Proxy(tree, upstream.origin, scratch)
    body = _body(10)
    try:
        clients = []
        for _ in range(30):
            client = socket.create_connection(("127.0.0.1", proxy.port))
            client.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
            clients.append(client)
        _wait(lambda: upstream.asked >= 30, 30)
        left = time.monotonic()
        for client in clients:
            client.close()
        time.sleep(6)
        within = sum(1 for t in upstream.closed if t - left <= 1.0)
        return f"30 clients leaving: {within} upstream requests closed within 1 s, {len(upstream.closed)} after 6 s"
    finally:
        proxy.stop()
        upstream.listener.close()


def slow_heads(tree: Path | None, scratch: Path) -> str:
    import socket

    extra = ("--idle-timeout", "2") if tree is None else ()
    proxy = Proxy(tree, "http://127.0.0.1:9", scratch, *extra)
    try:
        socks = []
        for _ in range(50):
            sock = socket.create_connection(("127.0.0.1", proxy.port))
            sock.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n")
            socks.append(sock)
        time.sleep(4)
        still = 0
        for sock in socks:
            sock.setblocking(False)
            try:
                still += sock.recv(1) != b""
            except BlockingIOError:
                still += 1
            except OSError:
                pass
            sock.close()
        return f"50 half request heads: {still} still open after 4 s"
    finally:
        proxy.stop()


def recording(tree: Path | None, scratch: Path) -> str:
    class Agentlike(Answers):
        def handle(self, path, headers, body, raw):  # noqa: ANN001, ANN201
            n = len(self.requests)
            return Reply(chunks=[b"".join(message_events(tool_use("Read", {"file_path": f"f{n}.py"}, f"t{n}",
                                                                  say="x" * 300)))])

    upstream = Agentlike([]).start()
    proxy = Proxy(tree, upstream.origin, scratch)
    messages: list[dict] = [{"role": "user", "content": "read the files"}]
    answers = 0
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=60)
    try:
        for n in range(200):
            body = json.dumps({"model": "m", "max_tokens": 100, "stream": True, "system": "s" * 2000,
                               "messages": messages}).encode()
            connection.request("POST", "/v1/messages", body=body, headers={"content-type": "application/json"})
            answers += len(connection.getresponse().read())
            messages = messages + [
                {"role": "assistant", "content": [{"type": "text", "text": "x" * 300},
                                                  {"type": "tool_use", "id": f"t{n}", "name": "Read",
                                                   "input": {"file_path": f"f{n}.py"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}",
                                              "content": f"line {n}\n" * 60}]}]
        _wait(lambda: proxy.recorded() >= 200)
        size = sum(p.stat().st_size for p in proxy.record_dir.glob("*.jsonl"))
        return (f"200-call session: recording {size / MB:.2f} MB; last request {len(body) / MB:.2f} MB + answers "
                f"{answers / MB:.2f} MB ({size / (len(body) + answers):.2f}x)")
    finally:
        proxy.stop()
        upstream.stop()


CASES = (memory_answer, memory_requests, connections, cancels, slow_heads, recording)


def chosen(names: list[str]) -> tuple:
    return tuple(case for case in CASES if not names or case.__name__ in names)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="9552fb5", help="the commit to compare with (default: before the bounds)")
    parser.add_argument("cases", nargs="*", help="the cases to run (default: all)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} at start; base {args.base}")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        base = scratch / "base"
        base.mkdir()
        archive = subprocess.run(["git", "archive", args.base, "tui_agent"], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
        for case in chosen(args.cases):
            print(f"{case.__name__}:")
            print(f"  base  {case(base, scratch)}", flush=True)
            print(f"  now   {case(None, scratch)}", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} at end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
