"""The forwarder: each request passes to its upstream unchanged, each answer streams back as it arrives, and
nothing is ever held whole or kept waiting on someone who left.

Built on aiohttp (the HTTP stack textual-serve already brings): one server on a loopback socket, one client
session with pooled keep-alive connections to the upstreams. The request body is spooled as it arrives (in
memory up to `Limits.spool_in_memory`, then to a 0600 file in the recordings' folder) and then sent with the
client's own headers (its Content-Length too) except the hop-by-hop ones; the answer's status and headers are
passed back, and its body chunk by chunk as each arrives, encoded as the upstream encoded it (no decompression
on the way: `auto_decompress=False`). Each chunk, once passed on, is read for the call's usage and reply
(`usage.AnswerReader`, bounded). Errors pass through as they are (status and body).

Bounds (`Limits`): a client that leaves cancels its handler at once (`handler_cancellation`), which closes
the upstream request; a connection that sends no whole request head within the idle timeout is closed (a
slow head: slowloris), as is one idle that long between requests, a request body stalled that long and an
answer the client stops reading that long; an upstream silent for `upstream_idle` mid-answer is dropped; the
listen backlog holds a burst of hundreds of connections. When the upstream drops the connection mid-answer,
the client's connection is dropped too (it must not take a cut stream for a whole one). Each exchange is then
recorded (`recorder.py`), off the answer's path.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any, AsyncIterator

from aiohttp import ClientError, ClientSession, ClientTimeout, TCPConnector, web

from tui_agent.proxy.recorder import Exchange, Recorder, auth_values
from tui_agent.proxy.routes import MODEL_CALLS, forwarded_headers, route
from tui_agent.proxy.usage import AnswerReader

MAX_REQUEST_BYTES = 256 * 1024 * 1024  # a request larger than this is refused (413)
SEND_CHUNK = 256 * 1024  # a spooled body is sent upstream in pieces of this size


@dataclass(frozen=True)
class Limits:
    idle_timeout: float = 75.0  # seconds: a request head, a kept-alive connection, a body or a client read
    upstream_connect: float = 30.0  # seconds to connect to the upstream
    upstream_idle: float = 600.0  # seconds the upstream may be silent mid-answer (above agents' own timeouts)
    backlog: int = 1024  # connections waiting to be accepted
    max_request_bytes: int = MAX_REQUEST_BYTES
    spool_in_memory: int = 1024 * 1024  # a request body larger than this is spooled to disk


def _error_body(status: int, message: str) -> web.Response:
    """The proxy's own error (never the upstream's: those pass as they are), in the Messages API's shape."""
    body = {"type": "error", "error": {"type": "proxy_error", "message": message}}
    return web.Response(status=status, text=json.dumps(body), content_type="application/json")


class _ClientGone(Exception):
    """The agent closed its connection (or stopped reading) while its answer was being passed on."""


class _TooLarge(Exception):
    pass


class Forwarder:
    """The aiohttp handler: route, spool, forward, stream back, record."""

    def __init__(self, recorder: Recorder, upstream: str | None = None, limits: Limits | None = None,
                 api_base: str | None = None) -> None:
        self.recorder = recorder
        self.upstream = upstream
        self.api_base = api_base
        self.limits = limits or Limits()
        self.session: ClientSession | None = None

    async def start(self, app: web.Application) -> None:
        # no total timeout (an agent's call streams for minutes); a connect that hangs fails, and so does an
        # upstream silent for longer than any agent waits
        timeout = ClientTimeout(total=None, sock_connect=self.limits.upstream_connect,
                                sock_read=self.limits.upstream_idle)
        self.session = ClientSession(connector=TCPConnector(limit=0, ttl_dns_cache=300), auto_decompress=False,
                                     timeout=timeout, skip_auto_headers=(
                                         "User-Agent", "Accept-Encoding", "Accept", "Content-Type"))

    async def stop(self, app: web.Application) -> None:
        if self.session is not None:
            await self.session.close()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        headers = {k.lower(): v for k, v in request.headers.items()}
        target = route(request.path, headers, self.upstream, self.api_base)
        if target is None:
            return _error_body(404, f"not an API path this proxy forwards: {request.path}")
        if request.content_length is not None and request.content_length > self.limits.max_request_bytes:
            return _error_body(413, "request too large for the proxy")
        if headers.get("upgrade", "").lower() == "websocket":
            # Codex tries the Responses API over a WebSocket first and falls back to HTTP streaming when the
            # upgrade fails: the same requests, each one whole, which is what this proxy reads and records
            return _error_body(501, "the proxy does not relay WebSockets: use HTTP streaming")
        exchange = Exchange(call=0, api=target.api, method=request.method, path=request.path, request=None,
                            keys=auth_values(request.headers))
        if target.api in MODEL_CALLS and request.method == "POST":
            exchange.call = self.recorder.next_call()
        try:
            try:
                size = await self._spool(request, exchange)
            except _TooLarge:
                exchange.status, exchange.outcome = 413, "refused"
                return await _closing(request, _error_body(413, "request too large for the proxy"))
            except asyncio.TimeoutError:
                exchange.status, exchange.outcome = 408, "client-stalled"
                return await _closing(request, _error_body(408, "the request body stalled"))
            return await self._forward(request, target.url(request.path_qs), size, exchange, started)
        except asyncio.CancelledError:
            if exchange.outcome == "complete":
                exchange.outcome = "client-disconnected"
            raise
        finally:
            exchange.ms = (time.perf_counter() - started) * 1000
            self.recorder.submit(exchange)  # (count_tokens too: an exchange, not a call)

    async def _spool(self, request: web.Request, exchange: Exchange) -> int:
        """The request body, read as it comes into the exchange's spool (a body stalled for the idle
        timeout ends the exchange); its size."""
        if not request.body_exists:
            return 0
        spool = exchange.spool = self.recorder.spool(self.limits.spool_in_memory)
        size = 0
        while True:
            async with asyncio.timeout(self.limits.idle_timeout):
                chunk = await request.content.readany()
            if not chunk:
                return size
            size += len(chunk)
            if size > self.limits.max_request_bytes:
                raise _TooLarge()
            spool.write(chunk)

    async def _forward(self, request: web.Request, url: str, size: int, exchange: Exchange,
                       started: float) -> web.StreamResponse:
        assert self.session is not None
        sent_headers = forwarded_headers(list(request.headers.items()))
        if exchange.spool is not None:
            sent_headers.append(("Content-Length", str(size)))  # sent as the client sent it: never chunked
        try:
            upstream = await self.session.request(request.method, url, data=_sent(exchange.spool, size),
                                                  headers=sent_headers, allow_redirects=False, compress=None)
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
            reader = AnswerReader(exchange.api, upstream.headers.get("content-type"),
                                  upstream.headers.get("content-encoding"))
            await self._pass_on(request, answer, upstream, reader, exchange, started)
            return answer

    async def _pass_on(self, request: web.Request, answer: web.StreamResponse, upstream: Any,
                       reader: AnswerReader, exchange: Exchange, started: float) -> None:
        """Each chunk to the client as it comes, then read (a chunk the client was given is read even when
        the handler is cancelled at its write: an agent that has its whole answer may hang up at once)."""
        chunk = b""
        try:
            await self._to_client(answer.prepare(request))
            async for chunk in upstream.content.iter_any():
                if exchange.ttfb_ms is None:
                    exchange.ttfb_ms = (time.perf_counter() - started) * 1000
                await self._to_client(answer.write(chunk))
                reader.feed(chunk)
                chunk = b""
        except (_ClientGone, asyncio.CancelledError) as gone:
            exchange.outcome = "client-disconnected"
            upstream.close()
            exchange.apply(_finished(reader, chunk))
            if isinstance(gone, asyncio.CancelledError):
                raise
            return
        except (ClientError, asyncio.IncompleteReadError, asyncio.TimeoutError) as error:  # dropped mid-answer
            exchange.outcome, exchange.error = "upstream-dropped", type(error).__name__
            if request.transport is not None:
                request.transport.abort()  # the client sees the stream break, not end
            exchange.apply(_finished(reader, b""))
            return
        await answer.write_eof()
        exchange.apply(reader.finish())

    async def _to_client(self, write: Any) -> None:
        """A write to the client; its connection gone (or not read for the idle timeout) is told apart from
        the upstream's (both are OSErrors)."""
        try:
            async with asyncio.timeout(self.limits.idle_timeout):
                await write
        except (ConnectionError, asyncio.TimeoutError) as error:
            raise _ClientGone() from error


async def _closing(request: web.Request, response: web.Response) -> web.Response:
    """The error, then the connection closed: the rest of its bytes are not a request to read (aiohttp would
    linger reading them for seconds)."""
    response.force_close()
    await response.prepare(request)
    await response.write_eof()
    if request.transport is not None:
        request.transport.close()
    return response


def _finished(reader: AnswerReader, pending: bytes) -> Any:
    if pending:
        reader.feed(pending)
    return reader.finish()


async def _chunks(spool: Any, size: int) -> AsyncIterator[bytes]:
    spool.seek(0)
    left = size
    while left > 0:
        piece = spool.read(min(SEND_CHUNK, left))
        if not piece:
            return
        left -= len(piece)
        yield piece


def _sent(spool: Any, size: int) -> Any:
    """What is sent upstream: nothing, the body itself when it is small (held in memory anyway), else the
    spool read in pieces."""
    if spool is None:
        return None
    if size <= SEND_CHUNK:
        spool.seek(0)
        return spool.read()
    return _chunks(spool, size)


def make_app(recorder: Recorder, upstream: str | None = None, limits: Limits | None = None,
             api_base: str | None = None) -> web.Application:
    forwarder = Forwarder(recorder, upstream, limits, api_base)
    app = web.Application(client_max_size=forwarder.limits.max_request_bytes)
    app.on_startup.append(forwarder.start)
    app.on_cleanup.append(forwarder.stop)
    app.router.add_route("*", "/{tail:.*}", forwarder.handle)
    return app


async def serve(recorder: Recorder, host: str, port: int, upstream: str | None = None,
                limits: Limits | None = None, api_base: str | None = None) -> tuple[web.AppRunner, int]:
    """Start the proxy; returns its runner and the port it listens on (`port` 0: a free one)."""
    limits = limits or Limits()
    # handler_cancellation: a client that leaves cancels its handler, and with it the upstream request;
    # keepalive_timeout: aiohttp closes a connection that has not sent a whole request head by then
    runner = web.AppRunner(make_app(recorder, upstream, limits, api_base), access_log=None, handle_signals=False,
                           handler_cancellation=True, keepalive_timeout=limits.idle_timeout)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True, backlog=limits.backlog)
    await site.start()
    sockets = site._server.sockets if site._server is not None else []  # noqa: SLF001 - the bound port
    return runner, sockets[0].getsockname()[1] if sockets else port
