"""`tui-agent serve` closes quietly (issue 28): tabs closed while a turn runs or after it, then the server
stopped with a tab open, leave nothing behind but its own lines: no "RuntimeError: Event loop is closed",
no "coroutine ... was never awaited", no NoMatches or other traceback from a tab's app going away. The
tabs' apps' stderr reaches the server's stdout (textual-serve copies it there), so both are read. A real
server process, real sockets, and the real Anthropic SDK against the fake API (its HTTP client closing
after the loop is the usual source of "Event loop is closed")."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest

from tests.fakes.fake_anthropic import FakeAnthropic, text
from tests.ui.support import make_repo
from tests.web.support import Served

NOISE = ("Traceback", "Event loop is closed", "never awaited", "NoMatches", "Exception ignored", "Error")


async def open_tab(served: Served, client: aiohttp.ClientSession) -> aiohttp.ClientWebSocketResponse:
    """A tab's socket, read until its app has drawn a frame (it started, and it is running)."""
    url = served.base.replace("http:", "ws:") + f"ws?width=100&height=30&token={served.token}"
    socket = await client.ws_connect(url, origin=served.base.rstrip("/"))
    drawn = 0
    while drawn < 2_000:
        message = await socket.receive(timeout=60)
        assert message.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY), message
        drawn += len(message.data)
    return socket


async def ask(socket: aiohttp.ClientWebSocketResponse, prompt: str, wait: bool) -> None:
    await socket.send_str(json.dumps(["stdin", prompt + "\r"]))
    if wait:  # read the screen until the answer is drawn
        seen = ""
        while "fake" not in seen and "found" not in seen:
            message = await socket.receive(timeout=60)
            seen += message.data if isinstance(message.data, str) else message.data.decode("utf-8", "replace")


@pytest.mark.parametrize("model", ["demo", "claude-sonnet-4-5-20250929"])
async def test_closing_tabs_and_stopping_the_server_leave_no_noise(tmp_path, model: str) -> None:
    with FakeAnthropic(model=lambda body: text("An answer from the fake.")) as fake:
        served = Served(make_repo(tmp_path), tmp_path / "config", "--model", model,
                        env={"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url})
        try:
            served.wait_until_serving()
            async with aiohttp.ClientSession() as client:
                for wait in (True, False):  # closed after its answer, then in the middle of a turn
                    tab = await open_tab(served, client)
                    await ask(tab, "what does the handler do?", wait)
                    await tab.close()
                last = await open_tab(served, client)  # left open while the server stops
                await ask(last, "and the models?", True)
                code = await asyncio.to_thread(served.stop)
                await last.close()
            assert code == 0
        finally:
            if served.process.poll() is None:
                served.stop()
    printed = "".join(served.stderr) + "".join(line for line in served.stdout if not line.startswith("tui-agent serving"))
    assert not [word for word in NOISE if word in printed], printed


async def test_a_tab_closed_while_the_model_streams_leaves_no_noise(tmp_path) -> None:
    """The real SDK's stream is open (the fake stalls mid-reply) when the tab closes and the server stops."""
    from dataclasses import replace

    from tests.fakes.fake_anthropic import stream_reply

    stalled = lambda body: replace(stream_reply(text("A long answer that never ends.")), stall_after=2)  # noqa: E731
    with FakeAnthropic(model=stalled) as fake:
        served = Served(make_repo(tmp_path), tmp_path / "config", "--model", "claude-sonnet-4-5-20250929",
                        env={"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url})
        try:
            served.wait_until_serving()
            async with aiohttp.ClientSession() as client:
                tab = await open_tab(served, client)
                await ask(tab, "what does the handler do?", False)
                assert await asyncio.to_thread(fake.stalled.wait, 60), "the model never started its reply"
                await tab.close()
                last = await open_tab(served, client)
                await ask(last, "and the models?", False)
                code = await asyncio.to_thread(served.stop)
                await last.close()
            assert code == 0
        finally:
            fake.release.set()
            if served.process.poll() is None:
                served.stop()
    printed = "".join(served.stderr) + "".join(line for line in served.stdout if not line.startswith("tui-agent serving"))
    assert not [word for word in NOISE if word in printed], printed
