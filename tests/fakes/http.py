"""The shared plumbing of the fake model servers: a stdlib HTTP server on 127.0.0.1 with scripted replies.

Real SDKs talk to these over real HTTP (anthropic 2.x uses `httpx2`, so transport mocks do not apply).
A reply is a JSON body, a stream of byte chunks (SSE), or a dropped connection part-way through.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Reply:
    """One scripted HTTP answer.

    `chunks` is a streaming body (each chunk written and flushed on its own); `drop_after` closes the
    socket after that many chunks without finishing the chunked body (a connection dropped mid-stream);
    `stall_after` stops sending there until the test sets `release` (a model that hangs mid-reply, so a
    test can kill the client at a known point of the stream).
    """

    status: int = 200
    json_body: Any = None
    chunks: list[bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop_after: int | None = None
    stall_after: int | None = None  # after that many chunks: set `server.stalled`, wait for `server.release`
    content_type: str = "text/event-stream"  # of a streamed body (Bedrock streams AWS event-stream frames)


class FakeServer:
    """Subclasses implement `handle(path, headers, body, raw) -> Reply` and may record what they saw."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.violations: list[str] = []
        self.lock = threading.Lock()
        self.open_streams = 0
        self.stalled = threading.Event()
        self.release = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                raw = self.rfile.read(int(self.headers.get("content-length", 0) or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = None
                headers = {k.lower(): v for k, v in self.headers.items()}
                with fake.lock:
                    fake.requests.append({"path": self.path, "headers": headers, "body": body})
                reply = fake.handle(self.path, headers, body, raw)
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                if reply.chunks is None:
                    data = json.dumps(reply.json_body).encode()
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.send_header("request-id", "req_fake")
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_response(reply.status)
                self.send_header("content-type", reply.content_type)
                self.send_header("transfer-encoding", "chunked")
                self.send_header("request-id", "req_fake")
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                with fake.lock:
                    fake.open_streams += 1
                try:
                    for n, chunk in enumerate(reply.chunks):
                        if reply.stall_after is not None and n == reply.stall_after:
                            fake.stalled.set()
                            fake.release.wait(60)
                        if reply.drop_after is not None and n >= reply.drop_after:
                            self.wfile.flush()
                            self.close_connection = True
                            self.connection.shutdown(2)
                            return
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                        if reply.delay:
                            time.sleep(reply.delay)
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError, OSError):
                    self.close_connection = True  # the client went away (e.g. cancelled): fine
                finally:
                    with fake.lock:
                        fake.open_streams -= 1

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def handle(self, path: str, headers: dict[str, str], body: Any, raw: bytes) -> Reply:  # pragma: no cover
        raise NotImplementedError

    def violate(self, message: str) -> None:
        with self.lock:
            self.violations.append(message)

    def start(self) -> "FakeServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()  # let a stalled stream finish, so its thread ends
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class ScriptedAPI(FakeServer):
    """The base of the fake model APIs (Anthropic's Messages, OpenAI's chat completions and Responses): the
    scripted replies (`replies` first, then `model` called with the request body), the one key it takes, the
    requests of one route, and the two checks each makes before answering: every validation error is a
    violation the test sees (and the first one the 400's message), and a request with no reply left is one."""

    def __init__(self, replies: list[Any] | None, model: Callable[..., Any] | None, api_key: str) -> None:
        super().__init__()
        self.replies: list[Any] = list(replies or [])
        self.model = model
        self.api_key = api_key

    def requests_to(self, route: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].split("?")[0] == route]

    def first_violation(self, errors: list[str]) -> str | None:
        """Each of `errors` recorded as a violation of this request; the first (None: a valid request)."""
        for error in errors:
            self.violate(f"request {len(self.requests)}: {error}")
        return errors[0] if errors else None

    def next_scripted(self, body: Any) -> Any:
        """The next scripted reply for `body`; None (a violation) when the script has run out."""
        item = next_reply(self.replies, self.model, body)
        if item is None:
            self.violate("no scripted reply left for a request")
        return item


def next_reply(queue: list[Any], default: Callable[..., Any] | None, *args: Any) -> Any:
    """Pop the next scripted reply (a value or a callable of the request); fall back to `default`."""
    if queue:
        item = queue.pop(0)
    elif default is not None:
        item = default
    else:
        return None
    return item(*args) if callable(item) else item
