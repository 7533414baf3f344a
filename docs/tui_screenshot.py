"""Make docs/tui-panel.svg, the README's picture of the chat beside the context-budget panel.

Run: `.venv/bin/python docs/tui_screenshot.py`. The session is opened as a plain `tui-agent` run with no
API key opens it (`door.open_session`: the demo model, its own 24k window and marks, today's compaction),
in a small generated repository (the tests' `make_repo`); the demo answers the README's tour prompts until
cuts, masks and a drop show, and the screen is saved as an SVG. Nothing is sent to a model.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PROMPTS = ("what is in this repo?", "what does src/app.py do?", "how are the models built?",
           "what are the biggest files?", "where are the helpers used?", "how does the handler work?",
           "explain the util module")


async def shoot(out: Path, size: tuple[int, int]) -> None:
    import tempfile

    from tests.ui.support import fixed_repo, make_app, send
    from tui_agent.core.agent.door import SessionOptions, open_session

    repo = fixed_repo(Path("/tmp/tui-agent-docs/demo-repo"))
    with tempfile.TemporaryDirectory(prefix="tui-shot-") as home:  # no key, no user settings, a journal thrown away
        env = {"TUI_AGENT_CONFIG_DIR": f"{home}/config", "TUI_AGENT_DATA_DIR": f"{home}/data"}
        opened = open_session(SessionOptions(workspace=repo, env=env))
        app = make_app(opened.session, startup_notices=opened.notices, run_background=False)
        async with app.run_test(size=size) as pilot:
            for prompt in PROMPTS:  # until a compaction event has masked and dropped something
                await send(pilot, prompt)
                if any(e.event.dropped and e.event.masked for e in opened.session.ledger.major_events):
                    break
            await pilot.pause()
            out.write_text(app.export_screenshot(title="tui-agent"), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "tui-panel.svg")
    parser.add_argument("--size", default="140x40", help="columns x lines")
    args = parser.parse_args()
    cols, rows = (int(n) for n in args.size.split("x"))
    asyncio.run(shoot(args.out, (cols, rows)))
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
