"""`tui-agent proxy` between a client and a fake upstream over real HTTP: what passes, unchanged, as it comes;
errors, a dropped upstream and a client that leaves mid-stream; what is recorded and what never is."""

from __future__ import annotations

import gzip
import http.client
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fake_anthropic import error_reply, message_events, sse, text
from tests.fakes.http import FakeServer, Reply
from tests.waiting import wait_until_sync
from tui_agent.proxy.recorder import Recorder, new_recording
from tui_agent.faces.proxy import ProxyThread

KEY = "sk-ant-api03-proxytestsecret0123456789abcdefXYZ"


class Upstream(FakeServer):
    """Answers each request with the next scripted `Reply`; keeps the raw bytes it got."""

    def __init__(self, replies: list[Reply]) -> None:
        super().__init__()
        self.replies = replies
        self.raw: list[bytes] = []

    def handle(self, path: str, headers: dict[str, str], body: Any, raw: bytes) -> Reply:
        self.raw.append(raw)
        return self.replies.pop(0)


@pytest.fixture
def proxied(tmp_path):
    """(upstream, port, recording path) with the proxy running in process; `upstream.replies` is scripted."""
    upstream = Upstream([]).start()
    path = new_recording(tmp_path / "rec")
    recorder = Recorder(path)
    runner = ProxyThread(recorder, "127.0.0.1", 0, upstream.origin)
    port = runner.start()
    try:
        yield upstream, port, path
    finally:
        runner.stop()
        recorder.close()
        upstream.stop()


def _exchanges(path: Path) -> list[dict]:
    from tests.agents.proxy_run import exchanges_of

    return exchanges_of(path)


def _post(port: int, body: bytes, path: str = "/v1/messages", **headers: str) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    connection.request("POST", path, body=body, headers={"content-type": "application/json", "x-api-key": KEY,
                                                          "anthropic-version": "2023-06-01", **headers})
    return connection.getresponse()


BODY = b'{"model":  "claude-x",\n "max_tokens": 64, "stream": true,\n "messages": [{"role": "user", "content": "hi"}]}'


def test_the_request_reaches_the_upstream_byte_for_byte_and_no_header_is_recorded(proxied):
    upstream, port, path = proxied
    upstream.replies.append(Reply(chunks=message_events(text("hello"), usage={"input_tokens": 42})))
    answer = _post(port, BODY, **{"x-custom-header": "kept", "authorization": f"Bearer {KEY}"})
    streamed = answer.read()
    assert answer.status == 200
    assert upstream.raw == [BODY]
    seen = upstream.requests[0]["headers"]
    assert (seen["x-custom-header"], seen["x-api-key"], seen["authorization"]) == ("kept", KEY, f"Bearer {KEY}")
    assert streamed == b"".join(message_events(text("hello"), usage={"input_tokens": 42}))
    [exchange] = wait_until_sync(lambda: _exchanges(path), what="the exchange recorded")
    assert exchange["usage"]["input_tokens"] == 42 and exchange["stop_reason"] == "end_turn"
    assert exchange["request"] == json.loads(BODY) and exchange["reply"] == text("hello")
    assert KEY not in path.read_text() and "x-custom-header" not in path.read_text()
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_secret_in_a_request_body_is_redacted_in_the_recording(proxied):
    upstream, port, path = proxied
    upstream.replies.append(Reply(chunks=message_events(text("ok"))))
    body = json.dumps({"model": "m", "max_tokens": 5, "stream": True,
                       "messages": [{"role": "user", "content": f"my key is {KEY}"}]}).encode()
    _post(port, body).read()
    assert upstream.raw == [body]  # the upstream gets it as sent
    wait_until_sync(lambda: _exchanges(path), what="the exchange recorded")
    assert KEY not in path.read_text() and "[redacted]" in path.read_text()


def test_the_answer_streams_through_before_the_upstream_has_finished(proxied):
    upstream, port, _ = proxied
    events = message_events(text("streaming"))
    upstream.replies.append(Reply(chunks=events, stall_after=3))
    answer = _post(port, BODY)
    first = b""
    while len(first) < len(b"".join(events[:3])):
        first += answer.read1(65536)
    assert upstream.stalled.is_set() and first == b"".join(events[:3])  # arrived while the upstream still holds
    upstream.release.set()
    assert first + answer.read() == b"".join(events)


def test_errors_pass_through_with_their_status_and_body(proxied):
    upstream, port, path = proxied
    upstream.replies.append(error_reply(529, "overloaded_error", "Overloaded"))
    answer = _post(port, BODY)
    assert (answer.status, json.loads(answer.read())["error"]["type"]) == (529, "overloaded_error")
    [exchange] = wait_until_sync(lambda: _exchanges(path), what="the exchange recorded")
    assert exchange["status"] == 529 and exchange["error"].startswith("overloaded_error")


def test_a_streamed_error_reaches_the_client_as_sent(proxied):
    upstream, port, path = proxied
    chunks = message_events(text("partial"))[:3] + [sse("error", {"type": "error", "error": {
        "type": "overloaded_error", "message": "Overloaded"}})]
    upstream.replies.append(Reply(chunks=chunks))
    answer = _post(port, BODY)
    assert answer.read() == b"".join(chunks)
    [exchange] = wait_until_sync(lambda: _exchanges(path), what="the exchange recorded")
    assert exchange["error"] == "overloaded_error: Overloaded" and exchange["outcome"] == "complete"


def test_a_dropped_upstream_connection_breaks_the_clients_stream_too(proxied):
    upstream, port, path = proxied
    upstream.replies.append(Reply(chunks=message_events(text("cut short")), drop_after=3))
    answer = _post(port, BODY)
    with pytest.raises((http.client.IncompleteRead, ConnectionError)):
        answer.read()
    [exchange] = wait_until_sync(lambda: _exchanges(path), what="the exchange recorded")
    assert exchange["outcome"] == "upstream-dropped"


def test_a_client_that_leaves_mid_stream_ends_the_upstream_request(proxied):
    upstream, port, path = proxied
    upstream.replies.append(Reply(chunks=message_events(text("long answer " * 20)), stall_after=2))
    client = socket.create_connection(("127.0.0.1", port), timeout=20)
    client.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
                   b"content-length: %d\r\n\r\n%s" % (len(BODY), BODY))
    assert client.recv(65536).startswith(b"HTTP/1.1 200")
    wait_until_sync(upstream.stalled.is_set, what="the upstream mid-answer")
    client.close()
    upstream.release.set()
    [exchange] = wait_until_sync(lambda: _exchanges(path), what="the exchange recorded")
    assert exchange["outcome"] == "client-disconnected"
    wait_until_sync(lambda: upstream.open_streams == 0, what="the upstream stream closed")


def test_gzip_passes_through_encoded_and_its_usage_is_still_read(proxied):
    upstream, port, path = proxied
    plain = b"".join(message_events(text("zipped"), usage={"input_tokens": 77}))
    packed = gzip.compress(plain)
    upstream.replies.append(Reply(chunks=[packed[:20], packed[20:]], headers={"content-encoding": "gzip"}))
    answer = _post(port, BODY, **{"accept-encoding": "gzip"})
    assert answer.getheader("content-encoding") == "gzip" and answer.read() == packed
    [exchange] = wait_until_sync(lambda: _exchanges(path), what="the exchange recorded")
    assert exchange["usage"]["input_tokens"] == 77


def test_only_api_paths_go_and_only_to_the_configured_upstream(proxied):
    upstream, port, path = proxied
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    connection.request("GET", "/etc/passwd")
    assert connection.getresponse().status == 404
    upstream.replies.append(Reply(json_body={"input_tokens": 5}))
    raw = socket.create_connection(("127.0.0.1", port), timeout=20)
    body = b'{"model":"m","messages":[]}'
    raw.sendall(b"POST http://169.254.169.254/v1/messages/count_tokens HTTP/1.1\r\nHost: 169.254.169.254\r\n"
                b"content-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body))
    reply = b""
    while chunk := raw.recv(65536):
        reply += chunk
    assert reply.startswith(b"HTTP/1.1 200") and upstream.raw == [body]  # it went to the one upstream
    assert upstream.requests[0]["path"] == "/v1/messages/count_tokens"
    [exchange] = wait_until_sync(lambda: _exchanges(path), what="the exchange recorded")
    assert exchange["call"] == 0 and exchange["api"] == "anthropic-count-tokens"  # an exchange, not a call


def test_an_unreachable_upstream_is_a_502_in_the_apis_error_shape(tmp_path):
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    dead = free.getsockname()[1]
    free.close()
    recorder = Recorder(new_recording(tmp_path))
    runner = ProxyThread(recorder, "127.0.0.1", 0, f"http://127.0.0.1:{dead}")
    port = runner.start()
    try:
        answer = _post(port, BODY)
        assert answer.status == 502 and json.loads(answer.read())["error"]["type"] == "proxy_error"
    finally:
        runner.stop()
        recorder.close()


@pytest.mark.parametrize("argv, says", [
    (["--host", "0.0.0.0"], "not loopback"),
    (["--upstream", "ftp://example.com"], "http(s) URL"),
    (["--upstream", "http://user:pw@127.0.0.1:1"], "credentials"),
])
def test_bad_flags_are_refused_with_one_line(tmp_path, argv, says):
    done = subprocess.run([sys.executable, "-m", "tui_agent", "proxy", "--json", "--record-dir", str(tmp_path), *argv],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_chat_completions_pass_and_their_recording_replays_as_a_conversation(proxied):
    from tests.fakes.fake_openai import completion_chunks
    from tui_agent.core.recordings.replay import open_replay

    upstream, port, path = proxied
    first = [{"type": "tool_use", "id": "call_1", "name": "read", "input": {"path": "a.py"}}]
    upstream.replies += [Reply(chunks=completion_chunks(first, usage={"prompt_tokens": 900, "completion_tokens": 9,
                                                                      "total_tokens": 909})),
                         Reply(chunks=completion_chunks(text("done"), usage={"prompt_tokens": 1300,
                                                                             "completion_tokens": 3,
                                                                             "total_tokens": 1303}))]
    tools = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "read a.py"}]
    for reply in ("call", "answer"):
        body = json.dumps({"model": "gpt-x", "stream": True, "stream_options": {"include_usage": True},
                           "tools": tools, "messages": messages}).encode()
        answer = _post(port, body, "/v1/chat/completions", authorization=f"Bearer {KEY}")
        assert answer.status == 200 and answer.read().endswith(b"data: [DONE]\n\n")
        messages = messages + [
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
                "name": "read", "arguments": '{"path": "a.py"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "print(1)"}]
    exchanges = wait_until_sync(lambda: len(_exchanges(path)) == 2 and _exchanges(path), what="two exchanges")
    assert [(e["api"], e["usage"]["prompt_tokens"], e["stop_reason"]) for e in exchanges] == [
        ("openai-chat", 900, "tool_calls"), ("openai-chat", 1300, "stop")]
    replay = open_replay(path, ("none", "v2"))
    assert [replay.step(k).real_tokens for k in range(replay.calls)] == [900, 1300]
    assert replay.agent_compactions == []


def test_an_answer_passed_on_whole_keeps_its_usage_when_the_handler_is_cancelled_at_its_last_write(proxied, monkeypatch):
    """The real Codex CLI through the proxy, under load: it had its whole answer and hung up while the proxy's
    last write was still returning; the handler was cancelled there, and the exchange was recorded without its
    usage (the chunk that carried it was kept only after the write). What is passed on is kept first."""
    import asyncio

    from aiohttp import web

    upstream, port, path = proxied
    upstream.replies.append(Reply(chunks=message_events(text("all of it"), output_tokens=42)))
    original = web.StreamResponse.write

    async def delivered_then_cancelled(self: web.StreamResponse, data: bytes) -> None:
        await original(self, data)
        if b"message_delta" in data:  # the client has the chunk; the handler is cancelled before the write returns
            raise asyncio.CancelledError

    monkeypatch.setattr(web.StreamResponse, "write", delivered_then_cancelled)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    connection.request("POST", "/v1/messages", body=BODY, headers={"content-type": "application/json"})
    try:
        connection.getresponse().read()
    except (http.client.IncompleteRead, ConnectionError):
        pass  # the cancelled handler never ended the stream
    [exchange] = wait_until_sync(lambda: _exchanges(path), what="the exchange recorded")
    assert exchange["outcome"] == "client-disconnected" and exchange["usage"]["output_tokens"] == 42
