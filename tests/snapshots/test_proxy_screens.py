"""SVG snapshot of the proxy's face: the watch screen on a recording, with the request card of the call shown
(the real Claude Code recording: its system blocks, 25 tools, messages, cache breakpoints, and the title
request listed as a side call). Deterministic: a fixed file (its times are in it), no clock on screen."""

from __future__ import annotations

import lzma
from pathlib import Path

from textual.pilot import Pilot

from tests.waiting import wait_until
from tui_agent.core.recordings.economics import default_policy
from tui_agent.faces.watch import LogSource
from tui_agent.ui.watch_app import WatchApp
from tui_agent.ui.widgets.request_card import RequestCard

REAL = Path(__file__).resolve().parents[1] / "data" / "proxy-claude-code.jsonl.xz"


def test_proxy_request_card(snap_compare, tmp_path) -> None:
    path = tmp_path / "proxy-claude-code.jsonl"
    path.write_bytes(lzma.decompress(REAL.read_bytes()))
    app = WatchApp(LogSource(path, False, False), path, default_policy(), session_label="proxy",
                   show_durations=False, workspace=Path("/work/project"))
    app.animation_level = "none"

    async def run_before(pilot: Pilot) -> None:
        screen = pilot.app.screen
        await wait_until(lambda: screen.replay is not None and screen.replay.calls == 4 and "proxy call 5" in
                         str(screen.query_one(RequestCard).render()), what="the last call's request", timeout=60)
        screen.query_one("#replay-left").scroll_end(animate=False, immediate=True)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(170, 56), run_before=run_before)
