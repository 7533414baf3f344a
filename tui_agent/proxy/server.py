"""The forwarder: each request passes to its upstream unchanged, each answer streams back as it arrives.

Built on aiohttp (the HTTP stack textual-serve already brings): one server on a loopback socket, one client
session with pooled keep-alive connections to the upstreams. The request body is read whole (an API request
is a JSON document; it must be recorded anyway) and sent with the client's own headers except the hop-by-hop
ones; the answer's status and headers are passed back, and its body chunk by chunk as each arrives, encoded as
the upstream encoded it (no decompression on the way: `auto_decompress=False`). Errors pass through as they
are (status and body). When the upstream drops the connection mid-answer, the client's connection is dropped
too (it must not take a cut stream for a whole one); when the client goes away, the upstream request is
closed. Each exchange is then recorded (`recorder.py`), off the answer's path.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from aiohttp import ClientError, ClientSession, ClientTimeout, TCPConnector, web

from tui_agent.proxy.recorder import Exchange, Recorder, auth_values
from tui_agent.proxy.routes import MODEL_CALLS, forwarded_headers, route
from tui_agent.proxy.usage import read_outcome

MAX_REQUEST_BYTES = 256 * 1024 * 1024  # a request larger than this is refused (413)
KEEP_ANSWER_BYTES = 64 * 1024 * 1024  # an answer's first bytes kept to read its usage


def _error_body(status: int, message: str) -> web.Response:
    """The proxy's own error (never the upstream's: those pass as they are), in the Messages API's shape."""
    body = {"type": "error", "error": {"type": "proxy_error", "message": message}}
    return web.Response(status=status, text=json.dumps(body), content_type="application/json")


class Forwarder:
    """The aiohttp handler: route, forward, stream back, record."""

    def __init__(self, recorder: Recorder, upstream: str | None = None) -> None:
        self.recorder = recorder
        self.upstream = upstream
        self.session: ClientSession | None = None

    async def start(self, app: web.Application) -> None:
        # no total timeout (an agent's call streams for minutes); a connect that hangs fails
        self.session = ClientSession(connector=TCPConnector(limit=0, ttl_dns_cache=300), auto_decompress=False,
                                     timeout=ClientTimeout(total=None, sock_connect=30), skip_auto_headers=(
                                         "User-Agent", "Accept-Encoding", "Accept", "Content-Type"))

    async def stop(self, app: web.Application) -> None:
        if self.session is not None:
            await self.session.close()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        headers = {k.lower(): v for k, v in request.headers.items()}
        target = route(request.path, headers, self.upstream)
        if target is None:
            return _error_body(404, f"not an API path this proxy forwards: {request.path}")
        if request.content_length is not None and request.content_length > MAX_REQUEST_BYTES:
            return _error_body(413, "request too large for the proxy")
        body = await request.read()
        exchange = Exchange(call=0, api=target.api, method=request.method, path=request.path, request=_json(body),
                            keys=auth_values(request.headers))
        if target.api in MODEL_CALLS:
            exchange.call = self.recorder.next_call()
        try:
            return await self._forward(request, target.url(request.path_qs), body, exchange, started)
        finally:
            exchange.ms = (time.perf_counter() - started) * 1000
            self.recorder.submit(exchange)  # (count_tokens too: an exchange, not a call)

    async def _forward(self, request: web.Request, url: str, body: bytes, exchange: Exchange,
                       started: float) -> web.StreamResponse:
        assert self.session is not None
        sent_headers = forwarded_headers(list(request.headers.items()))
        try:
            upstream = await self.session.request(request.method, url, data=body, headers=sent_headers,
                                                  allow_redirects=False, compress=None)
        except (ClientError, OSError, asyncio.TimeoutError) as error:
            exchange.status, exchange.outcome, exchange.error = 502, "upstream-unreachable", type(error).__name__
            return _error_body(502, f"the upstream could not be reached ({type(error).__name__})")
        async with upstream:
            exchange.status = upstream.status
            answer = web.StreamResponse(status=upstream.status, reason=upstream.reason)
            for key, value in forwarded_headers(list(upstream.headers.items())):
                answer.headers.add(key, value)
            if upstream.headers.get("content-length") is not None and "transfer-encoding" not in upstream.headers:
                answer.content_length = int(upstream.headers["content-length"])
            kept = bytearray()
            try:
                await _to_client(answer.prepare(request))
                async for chunk in upstream.content.iter_any():
                    if exchange.ttfb_ms is None:
                        exchange.ttfb_ms = (time.perf_counter() - started) * 1000
                    if len(kept) < KEEP_ANSWER_BYTES:  # kept before it is passed on: an agent that has its
                        kept += chunk  # whole answer may hang up (and cancel this) before the write returns
                    await _to_client(answer.write(chunk))
            except (_ClientGone, asyncio.CancelledError) as gone:
                exchange.outcome = "client-disconnected"
                upstream.close()
                self._read(exchange, kept, upstream.headers)
                if isinstance(gone, asyncio.CancelledError):
                    raise
                return answer
            except (ClientError, asyncio.IncompleteReadError) as error:  # the upstream dropped mid-answer
                exchange.outcome, exchange.error = "upstream-dropped", type(error).__name__
                if request.transport is not None:
                    request.transport.abort()  # the client sees the stream break, not end
                self._read(exchange, kept, upstream.headers)
                return answer
            await answer.write_eof()
            self._read(exchange, kept, upstream.headers)
            return answer

    @staticmethod
    def _read(exchange: Exchange, kept: bytearray, headers: Any) -> None:
        outcome = read_outcome(exchange.api, bytes(kept), headers.get("content-type"), headers.get("content-encoding"))
        exchange.usage, exchange.stop_reason, exchange.model = outcome.usage, outcome.stop_reason, outcome.model
        exchange.reply = outcome.reply
        exchange.error = exchange.error or outcome.error


class _ClientGone(Exception):
    """The agent closed its connection while its answer was being passed on."""


async def _to_client(write: Any) -> None:
    """A write to the client; its connection gone is told apart from the upstream's (both are OSErrors)."""
    try:
        await write
    except ConnectionError as error:
        raise _ClientGone() from error


def _json(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def make_app(recorder: Recorder, upstream: str | None = None) -> web.Application:
    forwarder = Forwarder(recorder, upstream)
    app = web.Application(client_max_size=MAX_REQUEST_BYTES)
    app.on_startup.append(forwarder.start)
    app.on_cleanup.append(forwarder.stop)
    app.router.add_route("*", "/{tail:.*}", forwarder.handle)
    return app


async def serve(recorder: Recorder, host: str, port: int, upstream: str | None = None) -> tuple[web.AppRunner, int]:
    """Start the proxy; returns its runner and the port it listens on (`port` 0: a free one)."""
    runner = web.AppRunner(make_app(recorder, upstream), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True)
    await site.start()
    sockets = site._server.sockets if site._server is not None else []  # noqa: SLF001 - the bound port
    return runner, sockets[0].getsockname()[1] if sockets else port
