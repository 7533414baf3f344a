"""textual-serve's Server with tui-agent's offline page, a guard on every route, and limits per client.

Why a guard: a WebSocket is not bound by the browser's same-origin policy, so without a check any web
page the user visits could open `ws://127.0.0.1:8000/ws` and type into the agent (and approve its tool
calls); and any local user could open the page. `web.guard` checks Host, Origin and the URL's token on
every request (a middleware, so textual-serve's own routes are covered too).

Why limits: each tab is an app process (about 30 MB); a script opening sockets in a loop started 50 of
them in 9 s. At most `max_tabs` run at once (a clear 503 past that), and the terminal size a client asks
for (at connect and in resize messages) is clamped to MAX_COLUMNS × MAX_ROWS.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import signal
import sys
from pathlib import Path
from typing import Any

import aiohttp_jinja2
from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from tui_agent.web.guard import TOKEN_QUERY, Guard

TEMPLATES = Path(__file__).parent / "templates"
DEFAULT_MAX_TABS = 8
MAX_COLUMNS = 400
MAX_ROWS = 200


def is_loopback(host: str) -> bool:
    """True for `localhost` and loopback addresses (127.0.0.0/8, ::1); False for names and other addresses."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def url_host(host: str) -> str:
    """A host as it is written in a URL (IPv6 addresses in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def clamp_size(width: object, height: object) -> tuple[int, int] | None:
    """A terminal size a client asked for, within 1..MAX_COLUMNS × 1..MAX_ROWS; None if not numbers."""
    if not isinstance(width, int) or not isinstance(height, int) or isinstance(width, bool) or isinstance(height, bool):
        return None
    return max(1, min(width, MAX_COLUMNS)), max(1, min(height, MAX_ROWS))


class AgentServer(Server):
    """One tui-agent app process per browser tab, for one workspace."""

    def __init__(self, command: str, *, host: str, port: int, title: str, workspace: Path,
                 max_tabs: int = DEFAULT_MAX_TABS, guard: Guard | None = None) -> None:
        super().__init__(command, host=host, port=port, title=title, templates_path=TEMPLATES)
        self.workspace = workspace
        self.guard = guard or Guard(host, port)
        self.max_tabs = max_tabs
        self._tabs: set[asyncio.Task] = set()

    @property
    def url(self) -> str:
        """The URL to open: it carries the token (printed at start, like Jupyter's)."""
        return f"http://{url_host(self.host)}:{self.port}/?{TOKEN_QUERY}={self.guard.token}"

    def refusal(self, request: web.Request) -> str | None:
        """Why this request may not be answered (None when it may)."""
        host_header = request.headers.get("Host", "")
        reason = self.guard.host_refusal(host_header)
        if reason is None:
            reason = self.guard.origin_refusal(request.headers.get("Origin"), host_header, request.secure)
        if reason is None and not self.guard.token_ok(request.query.get(TOKEN_QUERY),
                                                      request.cookies.get(self.guard.cookie)):
            reason = "no valid token: open the URL tui-agent serve printed (it ends in ?token=…)"
        return reason

    def _refuse(self, request: web.Request, reason: str, status: type[web.HTTPException] = web.HTTPForbidden
                ) -> web.HTTPException:
        print(f"tui-agent serve: refused {request.path} from {request.remote}: {reason}", file=sys.stderr, flush=True)
        return status(text=f"tui-agent serve: {reason}\n")

    @web.middleware
    async def _guard(self, request: web.Request, handler) -> web.StreamResponse:
        """Every route: refuse what the guard refuses; a page opened with the token gets it as a cookie and
        is sent on to the same URL without it (so the token does not stay in the address bar)."""
        if (reason := self.refusal(request)) is not None:
            raise self._refuse(request, reason)
        if TOKEN_QUERY in request.query and request.method == "GET" and request.path == "/":
            rest = request.rel_url.with_query([(k, v) for k, v in request.query.items() if k != TOKEN_QUERY])
            response = web.Response(status=303, headers={"Location": str(rest)})
            response.set_cookie(self.guard.cookie, self.guard.token, httponly=True, samesite="Strict", path="/")
            return response
        return await handler(request)

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        return app

    def _open_tabs(self) -> int:
        return sum(1 for tab in self._tabs if not tab.done())

    def _full(self, request: web.Request) -> web.HTTPException | None:
        if self._open_tabs() < self.max_tabs:
            return None
        return self._refuse(request, f"{self.max_tabs} tabs are open (the most this server runs at once; "
                                     "close one, or restart with a larger --max-tabs)", web.HTTPServiceUnavailable)

    def initialize_logging(self) -> None:
        """textual-serve's log, without a line per request (the URL and refusals are what a user needs)."""
        super().initialize_logging()
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)

    async def on_startup(self, app: web.Application) -> None:
        """Quiet: textual-serve prints its logo here, before the port is even bound."""

    def announce(self, _message: str = "") -> None:
        """The URL line, printed once the port accepts connections (scripts and tests wait for it)."""
        print(f"tui-agent serving {self.workspace} at {self.url} "
              "(each browser tab is its own session; Ctrl+C stops)", flush=True)

    def serve(self, debug: bool = False) -> None:
        """textual-serve's `serve`, announcing the URL after the bind rather than before it."""
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            loop.add_signal_handler(signal.SIGINT, self.request_exit)
            loop.add_signal_handler(signal.SIGTERM, self.request_exit)
        except NotImplementedError:  # Windows: Ctrl+C arrives as KeyboardInterrupt instead
            pass
        web.run_app(self._make_app(), host=self.host, port=self.port, handle_signals=False, loop=loop,
                    print=self.announce)

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        """The page, with its static and socket URLs on the origin the browser used (so a server
        listening on 0.0.0.0 works from another machine). The guard has already checked the request."""
        if (full := self._full(request)) is not None:
            raise full
        origin = f"{request.scheme}://{request.host}"
        socket = ("wss:" if request.scheme == "https" else "ws:") + f"//{request.host}/ws"
        context: dict[str, Any] = {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": socket,
            "config": {"static": {"url": f"{origin}/static/"}},
            "application": {"name": self.title},
        }
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        """One tab's app: refused past `max_tabs` (before any process starts), its size clamped."""
        if (full := self._full(request)) is not None:
            raise full
        size = clamp_size(to_int(request.query.get("width", "80"), 80), to_int(request.query.get("height", "24"), 24))
        width, height = size or (80, 24)
        request = request.clone(rel_url=request.rel_url.update_query(width=str(width), height=str(height)))
        tab = asyncio.current_task()
        if tab is not None:
            self._tabs.add(tab)
        try:
            return await super().handle_websocket(request)
        finally:
            self._tabs.discard(tab)

    async def _process_messages(self, websocket: web.WebSocketResponse, app_service: AppService) -> None:
        """textual-serve's message loop, with resize requests clamped like the size at connect."""
        resize = app_service.set_terminal_size

        async def clamped(width: object, height: object) -> None:
            if (size := clamp_size(width, height)) is not None:
                await resize(*size)

        app_service.set_terminal_size = clamped  # type: ignore[method-assign]
        await super()._process_messages(websocket, app_service)

    async def on_shutdown(self, app: web.Application) -> None:
        """Stop every open tab's app now. aiohttp waits for running handlers on shutdown (up to a minute),
        and a tab's socket never ends by itself; cancelled, textual-serve's handler tells the app to quit
        and waits for it, so no app process outlives the server."""
        tabs = [tab for tab in self._tabs if not tab.done()]
        for tab in tabs:
            tab.cancel()
        if tabs:
            await asyncio.wait(tabs, timeout=15)
