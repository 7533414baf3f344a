"""textual-serve's Server with tui-agent's offline page and a same-origin guard on the app socket.

Why a guard: a WebSocket is not bound by the browser's same-origin policy, so without a check any web
page the user visits could open `ws://127.0.0.1:8000/ws` and type into the agent (and approve its tool
calls). Two checks stop that: the request's Host must be a name this server is reached by (a DNS-rebinding
page sends its own name; only checked when listening on loopback, since on a public address the user has
accepted that anyone who reaches the port can use it), and a browser's Origin must be this very server.
Clients that are not browsers send no Origin; they can reach the port anyway, which is what the warning
for non-loopback hosts is about.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import signal
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
from aiohttp import web
from textual_serve.server import Server, to_int

TEMPLATES = Path(__file__).parent / "templates"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


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


def _hostname(netloc: str) -> str | None:
    try:
        return urlsplit(f"//{netloc}").hostname
    except ValueError:
        return None


class AgentServer(Server):
    """One tui-agent app process per browser tab, for one workspace."""

    def __init__(self, command: str, *, host: str, port: int, title: str, workspace: Path) -> None:
        super().__init__(command, host=host, port=port, title=title, templates_path=TEMPLATES)
        self.workspace = workspace
        self.loopback = is_loopback(host)
        self.allowed_hosts = LOOPBACK_NAMES | {host.strip("[]").lower()}
        self._tabs: set[asyncio.Task] = set()

    def refusal(self, request: web.Request) -> str | None:
        """Why this request may not use the app (None when it may)."""
        host = _hostname(request.host)
        if host is None:
            return "bad Host header"
        if self.loopback and host not in self.allowed_hosts:
            return f"Host {request.host!r} is not this server"
        origin = request.headers.get("Origin")
        if origin is not None and (origin == "null" or urlsplit(origin).netloc.lower() != request.host.lower()):
            return f"Origin {origin!r} is another site"
        return None

    def _refuse(self, request: web.Request, reason: str) -> web.HTTPForbidden:
        print(f"tui-agent serve: refused {request.path} from {request.remote}: {reason}", file=sys.stderr, flush=True)
        return web.HTTPForbidden(text=f"tui-agent serve: {reason}\n")

    def initialize_logging(self) -> None:
        """textual-serve's log, without a line per request (the URL and refusals are what a user needs)."""
        super().initialize_logging()
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)

    async def on_startup(self, app: web.Application) -> None:
        """Quiet: textual-serve prints its logo here, before the port is even bound."""

    def announce(self, _message: str = "") -> None:
        """The URL line, printed once the port accepts connections (scripts and tests wait for it)."""
        print(f"tui-agent serving {self.workspace} at http://{url_host(self.host)}:{self.port}/ "
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
        listening on 0.0.0.0 works from another machine)."""
        if (reason := self.refusal(request)) is not None:
            raise self._refuse(request, reason)
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
        if (reason := self.refusal(request)) is not None:
            raise self._refuse(request, reason)
        tab = asyncio.current_task()
        if tab is not None:
            self._tabs.add(tab)
        try:
            return await super().handle_websocket(request)
        finally:
            self._tabs.discard(tab)

    async def on_shutdown(self, app: web.Application) -> None:
        """Stop every open tab's app now. aiohttp waits for running handlers on shutdown (up to a minute),
        and a tab's socket never ends by itself; cancelled, textual-serve's handler tells the app to quit
        and waits for it, so no app process outlives the server."""
        tabs = [tab for tab in self._tabs if not tab.done()]
        for tab in tabs:
            tab.cancel()
        if tabs:
            await asyncio.wait(tabs, timeout=15)
