"""Issue 19 item 7: `tui-agent serve` over real HTTP and websockets on 127.0.0.1. The URL's token is
needed on every route; a foreign Host (DNS rebinding, userinfo) is refused on every route, textual-serve's
own `/static/…` and `/download/…` included, also with `--host 0.0.0.0`; Origin is compared with the
allow-list, not with Host; tabs are capped; the terminal size a client asks for is clamped."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from tests.ui.support import make_repo
from tui_agent.web.guard import Guard, parse_host
from tui_agent.web.server import MAX_COLUMNS, MAX_ROWS, AgentServer, clamp_size

STATIC = "static/css/xterm.css"


def jar() -> aiohttp.CookieJar:
    return aiohttp.CookieJar(unsafe=True)  # keep cookies for 127.0.0.1 (aiohttp's default drops IP hosts)


async def status(client: aiohttp.ClientSession, url: str, **headers: str) -> int:
    async with client.get(url, headers=headers, allow_redirects=False) as response:
        return response.status


@pytest.fixture
def served(tmp_path):
    from tests.web.support import Served

    servers = []

    def start(*extra: str) -> Served:
        server = Served(make_repo(tmp_path / f"ws{len(servers)}"), tmp_path / "config", "--model", "demo", *extra)
        servers.append(server)
        server.wait_until_serving()
        return server

    yield start
    for server in servers:
        assert server.stop() == 0


async def test_every_route_needs_the_token(served) -> None:
    server = served()
    assert server.token and len(server.token) >= 20
    base = server.base
    async with aiohttp.ClientSession(cookie_jar=jar()) as client:
        for path in ("", STATIC, "download/nothing", "ws"):
            assert await status(client, base + path) == 403, path
            assert await status(client, f"{base}{path}?token=wrong") == 403, path
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await client.ws_connect(base.replace("http:", "ws:") + "ws")
        assert refused.value.status == 403
        async with client.get(server.url, allow_redirects=False) as opened:
            assert opened.status == 303 and opened.headers["Location"] == "/"
            cookie = opened.headers["Set-Cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and server.token in cookie
        # from now on the cookie carries the token: the page, its files, the socket
        assert await status(client, base) == 200
        assert await status(client, base + STATIC) == 200
        async with client.ws_connect(base.replace("http:", "ws:") + "ws", origin=base.rstrip("/")) as tab:
            await tab.send_json(["ping", "x"])
            assert await tab.receive_json(timeout=30) == ["pong", "x"]
    assert "no valid token" in "".join(server.stderr) and server.token not in "".join(server.stderr)


async def test_a_foreign_host_is_refused_on_every_route(served) -> None:
    server = served()
    port, token = server.port, server.token
    async with aiohttp.ClientSession() as client:
        for host in (f"evil.example:{port}", f"evil@127.0.0.1:{port}", f"127.0.0.1:{port}@evil.example",
                     "", f"127.0.0.1:{port} x"):
            for path in ("", STATIC, "download/nothing", "ws"):
                assert await status(client, f"{server.base}{path}?token={token}", Host=host) == 403, (host, path)
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await client.ws_connect(f"ws://127.0.0.1:{port}/ws?token={token}", headers={"Host": f"evil@127.0.0.1:{port}"})
        assert refused.value.status == 403
        assert await status(client, f"{server.base}{STATIC}?token={token}", Host=f"localhost:{port}") == 200


async def test_a_wildcard_bind_keeps_host_and_origin_checks(served) -> None:
    server = served("--host", "0.0.0.0")
    assert "warning: listening on 0.0.0.0" in "".join(server.stderr)
    port, token = server.port, server.token
    ws = f"ws://127.0.0.1:{port}/ws?token={token}"
    async with aiohttp.ClientSession() as client:
        assert await status(client, f"{server.base}?token={token}", Host=f"evil.example:{port}") == 403
        assert await status(client, f"{server.base}{STATIC}?token={token}", Host=f"evil.example:{port}") == 403
        # DNS rebinding: the page's Origin and Host are both the attacker's name
        with pytest.raises(aiohttp.WSServerHandshakeError):
            await client.ws_connect(ws, headers={"Host": f"evil.example:{port}"}, origin=f"http://evil.example:{port}")
        for origin in ("http://evil.example", f"http://evil.example:{port}", "null", f"http://127.0.0.1:{port + 1}"):
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await client.ws_connect(ws, origin=origin)
            assert refused.value.status == 403, origin
        # an address of this machine as another host would type it
        assert await status(client, f"{server.base}{STATIC}?token={token}", Host=f"192.0.2.7:{port}") == 200
        async with client.ws_connect(ws, origin=f"http://127.0.0.1:{port}") as tab:
            await tab.send_json(["ping", "1"])
            assert await tab.receive_json(timeout=30) == ["pong", "1"]


async def test_tabs_are_capped_with_a_clear_refusal(served) -> None:
    server = served("--max-tabs", "2")
    ws = server.base.replace("http:", "ws:") + f"ws?token={server.token}"
    async with aiohttp.ClientSession(cookie_jar=jar()) as client:
        first = await client.ws_connect(ws)
        second = await client.ws_connect(ws)
        for tab in (first, second):
            await tab.send_json(["ping", "p"])
            assert await tab.receive_json(timeout=30) == ["pong", "p"]
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await client.ws_connect(ws)
        assert refused.value.status == 503
        async with client.get(server.url) as page:
            assert page.status == 503 and "2 tabs are open" in await page.text()
        await first.close()

        async def reopened():
            try:
                return await client.ws_connect(ws)
            except aiohttp.WSServerHandshakeError:
                return None

        third = None
        for _ in range(200):  # bounded: the closed tab's app takes a moment to stop
            third = await reopened()
            if third is not None:
                break
            await asyncio.sleep(0.05)
        assert third is not None, "a tab could not open after another was closed"
        await third.close()
        await second.close()
    assert "2 tabs are open" in "".join(server.stderr)


def test_terminal_sizes_are_clamped() -> None:
    assert clamp_size(80, 24) == (80, 24)
    assert clamp_size(100_000, 100_000) == (MAX_COLUMNS, MAX_ROWS)
    assert clamp_size(-5, 0) == (1, 1)
    assert clamp_size("80", 24) is None and clamp_size(True, 24) is None and clamp_size(None, None) is None


async def test_a_client_cannot_ask_for_a_huge_terminal(tmp_path, monkeypatch) -> None:
    """In-process server on 127.0.0.1 with the app process replaced by a recorder: the size at connect and
    in resize messages reaches the app clamped."""
    from aiohttp.test_utils import TestServer
    from textual_serve.app_service import AppService

    sizes = []

    async def start(self, width, height):
        sizes.append(("start", width, height))

    async def set_terminal_size(self, width, height):
        sizes.append(("resize", width, height))

    async def stop(self):
        return None

    monkeypatch.setattr(AppService, "start", start)
    monkeypatch.setattr(AppService, "set_terminal_size", set_terminal_size)
    monkeypatch.setattr(AppService, "stop", stop)
    server = AgentServer("true", host="127.0.0.1", port=0, title="t", workspace=tmp_path, guard=Guard("127.0.0.1", 0))
    http = TestServer(await server._make_app(), host="127.0.0.1")
    await http.start_server()
    try:
        url = f"ws://127.0.0.1:{http.port}/ws?width=100000&height=99999&token={server.guard.token}"
        async with aiohttp.ClientSession() as client:
            async with client.ws_connect(url) as tab:
                await tab.send_json(["resize", {"width": 10**9, "height": 10**9}])
                await tab.send_json(["resize", {"width": "x", "height": []}])
                await tab.send_json(["ping", "done"])
                assert await tab.receive_json(timeout=30) == ["pong", "done"]
    finally:
        await http.close()
    assert sizes == [("start", MAX_COLUMNS, MAX_ROWS), ("resize", MAX_COLUMNS, MAX_ROWS)]


@pytest.mark.parametrize("value, parsed", [("127.0.0.1:8000", ("127.0.0.1", 8000)), ("LOCALHOST", ("localhost", None)),
                                           ("[::1]:80", ("::1", 80)), ("evil@127.0.0.1:8000", None), ("", None),
                                           ("a b", None), ("127.0.0.1:99999", None), ("[zz]:1", None),
                                           ("127.0.0.1:8000/x", None)])
def test_host_headers_parse_strictly(value, parsed) -> None:
    assert parse_host(value) == parsed


def test_max_tabs_below_one_is_a_one_line_error(tmp_path) -> None:
    from tests.faces.test_demo_and_headless import cli

    out = cli(["serve", "--max-tabs", "0", "-C", str(tmp_path)], tmp_path)
    assert out.returncode == 2 and out.stderr.strip() == "error: --max-tabs 0 must be at least 1"
