"""A face of tui-agent run with one of its parts made to raise (the crash tests' subprocess):
`python -m tests.crash_faces FACE LOG`. The exception's message and a local of the raising frame hold
`SECRET`, standing for the conversation a real traceback's locals show."""

from __future__ import annotations

import sys
from pathlib import Path

SECRET = "CONVERSATION-TEXT-7f3a"


def boom(*args: object, **kwargs: object) -> None:
    prompt = f"please read {SECRET}"  # a local, as a traceback with locals would show it
    raise RuntimeError(f"broken while showing {prompt}")


def main(face: str, log: Path) -> int:
    from tui_agent.core.recordings.strategy_table import default_policy

    if face in ("tui", "tui-thread"):
        from tui_agent.core.recordings.watch_feed import WatchFeed
        from tui_agent.ui.screens.watch import WatchScreen
        from tui_agent.ui.watch_app import WatchApp
        from tui_agent.faces.watch import LogSource

        if face == "tui":
            WatchScreen.show_call = boom  # on the UI thread
        else:
            WatchFeed.feed = boom  # in the follower's thread worker
        app = WatchApp(LogSource(log, False, False), log, default_policy(), session_label="crash")
        return app.run_to_end(headless=True, size=(120, 40))
    if face == "replay":
        from tui_agent.core.recordings.replay import open_replay
        from tui_agent.ui.replay_app import ReplayApp
        from tui_agent.ui.screens.replay import ReplayScreen

        ReplayScreen.show_call = boom
        return ReplayApp(open_replay(log), session_label="crash").run_to_end(headless=True, size=(120, 40))
    from tui_agent.faces.cli import main as cli_main

    if face == "watch-json":
        from tui_agent.core.recordings.watch import LiveReplay

        LiveReplay.feed = boom
        return cli_main(["watch", str(log), "--json"])
    if face == "print":
        import tui_agent.faces.headless

        tui_agent.faces.headless.run_headless = boom
        return cli_main(["-p", "hello", "--model", "demo"])
    raise SystemExit(f"unknown face {face}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], Path(sys.argv[2])))
