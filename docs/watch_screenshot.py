"""Make docs/watch-panel.svg, the README's screenshot of `tui-agent watch`.

Run: `.venv/bin/python docs/watch_screenshot.py [LOG] [--lines N]`. The first N lines of a real Claude
Code log (default: the athena log of ../shared/transcripts, up to just past its first recorded
compaction) are copied to a temporary file that the watch app follows under Pilot, as it would a session
being written; the screen is saved on the first call after the agent's compaction (its summary, what it
forgot, the coverage after it beside ours). Nothing is sent to a model.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ATHENA = ROOT.parent / "shared" / "transcripts" / "tensiondriven__athena__f059ad9a-9964-437c-90a1-28f4dd6d245b.jsonl"


async def shoot(log: Path, lines: int, out: Path) -> None:
    from tests.waiting import wait_until
    from tui_agent.core.recordings.economics import default_policy
    from tui_agent.ui.watch_app import WatchApp
    from tui_agent.faces.watch import LogSource

    with tempfile.TemporaryDirectory(prefix="watch-shot-") as tmp:
        live = Path(tmp) / "3cfce0ff-0725-47be-a572-f8af8122b71e.jsonl"
        live.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:lines]))
        app = WatchApp(LogSource(live, False, False), live, default_policy(), session_label="watch",
                       show_durations=False, workspace=Path("/home/me/Code/athena"))
        app.animation_level = "none"
        async with app.run_test(size=(160, 48)) as pilot:
            screen = app.screen
            await wait_until(lambda: screen.replay is not None and screen.view.fixed
                             and any(c.call > 0 for c in screen.view.agent_compactions),
                             what="the calls past the compaction", timeout=120)
            call = next(c.call for c in screen.view.agent_compactions if c.call > 0)
            screen.show_call(call - 1)
            await pilot.pause()
            await pilot.pause()
            out.write_text(app.export_screenshot(title="tui-agent watch"), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", nargs="?", type=Path, default=ATHENA)
    parser.add_argument("--lines", type=int, default=700)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "watch-panel.svg")
    args = parser.parse_args()
    asyncio.run(shoot(args.log, args.lines, args.out))
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
