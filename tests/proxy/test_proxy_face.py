"""The proxy's live face: the watch screen on the recording shows each call as it passes the proxy, with the
usage the upstream returned (Pilot; the proxy and the upstream are real HTTP servers)."""

from __future__ import annotations

import asyncio
import http.client
import json

from tests.fakes.fake_anthropic import FakeAnthropic, text, tool_use
from tests.waiting import wait_until
from tui_agent.core.recordings.strategy_table import default_policy
from tui_agent.proxy.recorder import Recorder, new_recording
from tui_agent.faces.proxy import ProxyThread
from tui_agent.ui.screens.watch import WatchScreen
from tui_agent.ui.watch_app import WatchApp
from tui_agent.faces.watch import LogSource

TOOLS = [{"name": "Read", "description": "read a file", "input_schema": {"type": "object", "properties": {}}}]


def _call(port: int, messages: list[dict]) -> list[dict]:
    """One streamed call through the proxy; the reply's content (read from the recorded SSE by the test)."""
    body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": True, "tools": TOOLS,
                       "messages": messages}).encode()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("POST", "/v1/messages", body=body, headers={
        "content-type": "application/json", "x-api-key": "test-key", "anthropic-version": "2023-06-01"})
    answer = connection.getresponse()
    assert answer.status == 200
    answer.read()
    return messages


async def test_the_face_shows_each_call_as_it_passes_the_proxy(tmp_path):
    replies = [tool_use("Read", {"file_path": "a.py"}, "toolu_1"), tool_use("Read", {"file_path": "b.py"}, "toolu_2"),
               text("both read")]
    fake = FakeAnthropic(list(replies)).start()
    path = new_recording(tmp_path / "rec")
    recorder = Recorder(path)
    runner = ProxyThread(recorder, "127.0.0.1", 0, fake.origin)
    port = runner.start()
    app = WatchApp(LogSource(path, False, False), path, default_policy(), session_label="proxy", show_durations=False)
    app.animation_level = "none"
    try:
        async with app.run_test(size=(150, 45)) as pilot:
            screen = app.screen
            assert isinstance(screen, WatchScreen)
            messages = [{"role": "user", "content": [{"type": "text", "text": "read a.py and b.py"}]}]
            for n, reply in enumerate(replies[:2], start=1):
                await asyncio.to_thread(_call, port, messages)
                await wait_until(lambda n=n: screen.replay is not None and screen.replay.calls == n,
                                 what=f"call {n} on the face", timeout=30, shown=lambda: screen.sub_title)
                messages = messages + [{"role": "assistant", "content": reply},
                                       {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}",
                                                                     "content": f"file {n}"}]}]
            await asyncio.to_thread(_call, port, messages)
            await wait_until(lambda: screen.replay is not None and screen.replay.calls == 3,
                             what="call 3 on the face", timeout=30, shown=lambda: screen.sub_title)
            await pilot.pause()
            assert screen.replay.agent_compactions == []  # each request extended the one before
            real = [screen.replay.step(k).real_tokens for k in range(3)]
            assert real == [sum(_input(u).values()) for u in fake.usages]  # the usage the upstream returned
            # the face's figures are the request's: its own message count, and the API's usage in the panel
            # (our request is the agent's own while neither compacted), not an estimate beside it
            card = screen.query_one("#replay-card")
            await wait_until(lambda: "its request: 5 messages" in str(card.render()), what="the request's count",
                             timeout=30, shown=lambda: str(card.render()))
            figures = screen.panel.ledger.current
            last = _input(fake.usages[-1])
            assert (figures.exact_total, figures.cached) == (sum(last.values()), last["cache_read_input_tokens"])
    finally:
        runner.stop()
        recorder.close()
        fake.stop()
    assert fake.violations == []


def _input(usage: dict[str, int]) -> dict[str, int]:
    return {k: usage.get(k, 0) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")}
