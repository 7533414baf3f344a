"""The app for `tui-agent replay FILE`: the usual app (themes, palette, quit keys) on a replay screen."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.screen import Screen

from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.replay import ReplayScreen

if TYPE_CHECKING:
    from tui_agent.core.recordings.replay import Replay


class ReplayApp(AgentApp):
    def __init__(self, replay: "Replay", *, start: int = 0, workspace: Path | None = None, **kwargs) -> None:
        from tui_agent.core.recordings.replay_session import replay_session

        self.replay = replay
        self.start = start
        kwargs.setdefault("run_background", False)
        super().__init__(replay_session(replay, workspace), **kwargs)
        self.workspace_label = replay.path.name

    def get_default_screen(self) -> Screen:
        return ReplayScreen(self.replay, self.session, self.start)


def run_replay(replay: "Replay", start: int = 0) -> int:
    app = ReplayApp(replay, start=start, session_label="replay")
    return app.run_to_end()
