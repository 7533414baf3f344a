"""The proxy bounded: a client that leaves closes its upstream request (before the answer's head too); a slow
request head, an idle connection and a stalled body are closed; large bodies pass byte for byte without being
held (a 30 MB answer through the proxy allocates a few MB); bad upstream URLs are refused in one line. The
times (a cancel within 1 s, memory over a 100 MB answer, 500 connections) are measured by bench/bench_proxy.py."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import threading
import tracemalloc

import pytest

from tests.fakes.fake_anthropic import message_events, text
from tests.fakes.http import FakeServer, Reply
from tests.waiting import wait_until_sync
from tui_agent.faces.proxy import ProxyThread
from tui_agent.proxy.recorder import Recorder, new_recording
from tui_agent.proxy.server import Limits

BODY = b'{"model": "claude-x", "max_tokens": 64, "stream": true, "messages": [{"role": "user", "content": "hi"}]}'


class Hanging:
    """An upstream on a raw socket: reads one request, answers its head (or nothing), then waits; it notes
    when the proxy closes the connection."""

    def __init__(self, send_head: bool) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.origin = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.send_head = send_head
        self.asked = threading.Event()
        self.closed = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        connection, _ = self.listener.accept()
        connection.settimeout(60)
        data = b""
        while b"\r\n\r\n" not in data:
            data += connection.recv(65536)
        self.asked.set()
        if self.send_head:
            connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
                               b"\r\n5\r\nevent\r\n")
        try:
            while connection.recv(65536):
                pass
        except OSError:
            pass
        self.closed.set()
        connection.close()


def _proxy(tmp_path, upstream: str, limits: Limits | None = None) -> tuple[ProxyThread, Recorder, int]:
    recorder = Recorder(new_recording(tmp_path / "rec"))
    runner = ProxyThread(recorder, "127.0.0.1", 0, upstream, limits)
    return runner, recorder, runner.start()


def _request(port: int, body: bytes = BODY) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=20)
    client.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
                   b"content-length: %d\r\n\r\n%s" % (len(body), body))
    return client


@pytest.mark.parametrize("send_head", [False, True], ids=["before-the-answer", "mid-answer"])
def test_a_client_that_leaves_closes_its_upstream_request(tmp_path, send_head):
    """Before, an upstream still thinking (no head yet) kept its request open until it answered."""
    upstream = Hanging(send_head)
    runner, recorder, port = _proxy(tmp_path, upstream.origin)
    try:
        client = _request(port)
        wait_until_sync(upstream.asked.is_set, what="the request upstream")
        if send_head:
            assert client.recv(65536).startswith(b"HTTP/1.1 200")
        client.close()
        wait_until_sync(upstream.closed.is_set, what="the upstream request closed")
    finally:
        runner.stop()
        recorder.close()


def _closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(65536) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


@pytest.mark.parametrize("sent", [b"", b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n"], ids=["nothing", "half-a-head"])
def test_a_connection_without_a_whole_request_head_is_closed(tmp_path, sent):
    runner, recorder, port = _proxy(tmp_path, "http://127.0.0.1:9", Limits(idle_timeout=0.3))
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=0.2)
        sock.sendall(sent)
        wait_until_sync(lambda: _closed(sock), what="the slow connection closed")
    finally:
        runner.stop()
        recorder.close()


def test_a_stalled_request_body_is_a_408_and_the_connection_closes(tmp_path):
    runner, recorder, port = _proxy(tmp_path, "http://127.0.0.1:9", Limits(idle_timeout=0.3))
    try:
        client = socket.create_connection(("127.0.0.1", port), timeout=20)
        client.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-length: 1000\r\n\r\n{\"model\"")
        answer = b""
        while chunk := client.recv(65536):
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 408") and b"stalled" in answer
    finally:
        runner.stop()
        recorder.close()


class Echo(FakeServer):
    """Keeps the raw request; answers with `answer` (a list of chunks)."""

    def __init__(self, answer: list[bytes]) -> None:
        super().__init__()
        self.answer = answer
        self.raw: list[bytes] = []

    def handle(self, path, headers, body, raw):  # noqa: ANN001, ANN201
        self.raw.append(raw)
        return Reply(chunks=list(self.answer))


def test_a_large_request_reaches_the_upstream_byte_for_byte_with_its_length(tmp_path):
    upstream = Echo(message_events(text("ok"))).start()
    runner, recorder, port = _proxy(tmp_path, upstream.origin)
    body = json.dumps({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "y" * 3_000_000}]},
                      separators=(",", ":")).encode()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("POST", "/v1/messages", body=body, headers={"content-type": "application/json"})
        assert connection.getresponse().status == 200
        assert upstream.raw == [body]
        assert upstream.requests[0]["headers"]["content-length"] == str(len(body))
    finally:
        runner.stop()
        recorder.close()
        upstream.stop()


def test_a_30_mb_answer_passes_without_being_held(tmp_path):
    """The answer is passed on and read chunk by chunk: the proxy's allocations while it passes stay a few
    MB (the whole answer was kept, up to 64 MB, before)."""
    from tests.fakes.fake_anthropic import sse

    piece = sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": "z" * 60_000}})
    start, end = message_events(text("")), message_events(text(""), output_tokens=7)
    chunks = [b"".join(start[:2])] + [piece] * 500 + [b"".join(end[-3:])]
    total = sum(map(len, chunks))
    upstream = Echo(chunks).start()
    runner, recorder, port = _proxy(tmp_path, upstream.origin)
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        tracemalloc.start()
        connection.request("POST", "/v1/messages", body=BODY, headers={"content-type": "application/json"})
        answer = connection.getresponse()
        got = 0
        while data := answer.read(65536):
            got += len(data)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert got == total > 30_000_000 and peak < 12_000_000, (got, peak)
    finally:
        runner.stop()
        recorder.close()
        upstream.stop()


@pytest.mark.parametrize("url", ["http://127.0.0.1:", "http://127.0.0.1:0", "http://127.0.0.1:99999",
                                 "http://127.0.0.1:80x", "http://[zz]:1", "http:// x", "api.anthropic.com"])
def test_a_bad_upstream_url_is_refused_with_one_line(tmp_path, url):
    done = subprocess.run([sys.executable, "-m", "tui_agent", "proxy", "--json", "--record-dir", str(tmp_path),
                           "--upstream", url], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "--upstream" in done.stderr


def test_an_answer_too_large_to_keep_is_read_from_its_tail(monkeypatch):
    """A JSON body (or one SSE line) over the kept size: its usage and stop reason are read from its end; the
    reply's text is kept up to its bound, the rest said."""
    import gzip

    from tui_agent.proxy import usage

    monkeypatch.setattr(usage, "KEEP_LINE_BYTES", 1000)
    monkeypatch.setattr(usage, "KEEP_REPLY_CHARS", 50)
    body = json.dumps({"type": "message", "content": [{"type": "text", "text": "w" * 50_000}],
                       "stop_reason": "max_tokens", "usage": {"input_tokens": 12, "output_tokens": 34}}).encode()
    packed = gzip.compress(body)
    reader = usage.AnswerReader("anthropic-messages", "application/json", "gzip")
    for at in range(0, len(packed), 100):
        reader.feed(packed[at:at + 100])
    outcome = reader.finish()
    assert outcome.usage == {"input_tokens": 12, "output_tokens": 34} and outcome.stop_reason == "max_tokens"
    stream = usage.AnswerReader("anthropic-messages", "text/event-stream", None)
    for event in message_events(text("v" * 600), usage={"input_tokens": 5}, output_tokens=9):
        stream.feed(event)
    told = stream.finish()
    assert told.usage["input_tokens"] == 5 and told.usage["output_tokens"] == 9
    assert told.reply[0]["text"] == "v" * 50 and "550 more characters not recorded" in told.reply[-1]["text"]


def test_a_request_of_many_mb_is_recorded_whole_and_its_next_call_as_a_delta(tmp_path):
    """A body over the large-line size is written piece by piece (never serialised whole a second time) and
    reads back as sent; the next call of its conversation is stored as what it adds."""
    from tests.agents.proxy_run import exchanges_of
    from tui_agent.proxy.recorder import LARGE_LINE, Exchange

    path = new_recording(tmp_path)
    recorder = Recorder(path)
    first = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "é" * (LARGE_LINE // 2 + 10)}]}
    second = dict(first, messages=first["messages"] + [{"role": "assistant", "content": "ok"},
                                                       {"role": "user", "content": "more"}])
    for n, body in enumerate((first, second), start=1):
        exchange = Exchange(call=n, api="anthropic-messages", method="POST", path="/v1/messages", request=None)
        exchange.spool = recorder.spool(1 << 20)
        exchange.spool.write(json.dumps(body, ensure_ascii=False).encode())
        recorder.submit(exchange)
    recorder.close()
    assert [e["request"] for e in exchanges_of(path)] == [first, second]
    assert path.stat().st_size < 1.2 * len(json.dumps(first, ensure_ascii=False).encode())
