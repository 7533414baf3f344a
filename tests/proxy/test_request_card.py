"""The proxy's face shows each call's exact request (Pilot): its system prompt block by block, its tools,
its messages, where its cache breakpoints are, and the side calls so far; `r` opens the whole request. On the
real Claude Code recording (`tests/data/proxy-claude-code.jsonl.xz`) and on a Responses recording."""

from __future__ import annotations

import json

from tests.proxy.test_side_calls import _real
from tests.waiting import wait_until
from tui_agent.core.recordings.strategy_table import default_policy
from tui_agent.core.recordings.proxy_index import RequestIndex, describe
from tui_agent.faces.watch import LogSource
from tui_agent.ui.screens.proxy_watch import ProxyWatchScreen, WholeRequest
from tui_agent.ui.watch_app import WatchApp
from tui_agent.ui.widgets.request_card import RequestCard


def _app(path):
    app = WatchApp(LogSource(path, False, False), path, default_policy(), session_label="proxy",
                   show_durations=False)
    app.animation_level = "none"
    return app


def _card(screen) -> str:
    return str(screen.query_one(RequestCard).render())


async def test_the_face_shows_the_exact_request_of_each_call_with_its_cache_breakpoints(tmp_path):
    path = _real(tmp_path)
    index = RequestIndex(path)
    index.refresh()
    views = [describe(index.request(k)) for k in range(index.steps)]
    assert [v.call for v in views] == [2, 3, 4, 5]  # the title (call 1) is a side call
    assert views[-1].breakpoints == ("system[1]", "system[2]", "messages[2].content[2]")
    assert len(views[-1].tools) == 25 and views[-1].tools[0].label == "tool Agent"
    app = _app(path)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        assert isinstance(screen, ProxyWatchScreen)
        await wait_until(lambda: screen.replay is not None and screen.replay.calls == 4 and "proxy call 5" in
                         _card(screen), what="the last call's request", timeout=60, shown=lambda: _card(screen))
        card = _card(screen)
        assert "3 breakpoints: system[1], system[2], messages[2].content[2]" in card
        assert "tools     25 ·" in card and "tool Agent" in card
        assert "#3 user" in card and "tool_result×3" in card and "▸cache 5m" in card
        assert "1 side call so far" in card and "call 1 · claude-fake-1 · structured answer" in card
        await pilot.press("p")
        await wait_until(lambda: "proxy call 4" in _card(screen), what="the previous call's request", timeout=30)
        await pilot.press("r")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, WholeRequest) and modal.record["call"] == 4
        shown = str(modal.query_one("Static").render())
        assert '"tools": [' in shown and '"cache_control"' in shown
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen


def test_a_responses_request_is_shown_in_its_own_terms(tmp_path):
    record = {"type": "exchange", "call": 7, "api": "openai-responses", "model": "gpt-5-codex", "request": {
        "model": "gpt-5-codex", "instructions": "You are Codex.", "prompt_cache_key": "thread-1",
        "tools": [{"type": "function", "name": "shell", "description": "run a command", "parameters": {}}],
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ls"}]},
                  {"type": "function_call", "call_id": "c", "name": "shell", "arguments": "{}"}]}}
    view = describe(json.loads(json.dumps(record)))
    assert [p.label for p in view.system] == ["system 1"] and view.system[0].summary == "text · You are Codex."
    assert [p.label for p in view.tools] == ["tool shell"]
    assert [p.label for p in view.messages] == ["#1 user", "#2 function_call"]
    assert view.breakpoints == () and view.cache_note == "automatic prefix cache · prompt_cache_key thread-1"


def test_the_index_follows_a_growing_recording_cut_mid_line_and_one_started_again(tmp_path):
    data = _real(tmp_path).read_bytes()
    path = tmp_path / "live.jsonl"
    index = RequestIndex(path)
    for cut in (len(data) // 3, len(data) * 2 // 3, len(data)):
        path.write_bytes(data[:cut])
        index.refresh()
    assert index.steps == 4 and [describe(index.request(k)).call for k in range(4)] == [2, 3, 4, 5]
    path.write_bytes(data[: data.index(b"\n") + 1])  # replaced by a new recording: read from its start
    index.refresh()
    assert index.steps == 0 and index.side == []
