"""Make docs/tui-panel.svg, the README's picture of the chat beside the context-budget panel.

Run: `.venv/bin/python docs/tui_screenshot.py`. The offline demo model answers three tour prompts in a small
generated repository (the tests' `make_repo`), with a small window so that cuts, masks and a recap show, and
the screen is saved as an SVG. Nothing is sent to a model.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PROMPTS = ("what is in this repo?", "what does src/app.py do?", "what are the biggest files?")


async def shoot(out: Path, size: tuple[int, int]) -> None:
    from tests.ui.support import demo_session, fixed_repo, make_app, send

    app = make_app(demo_session(fixed_repo(Path("/tmp/tui-agent-docs/demo-repo"))))
    async with app.run_test(size=size) as pilot:
        for prompt in PROMPTS:
            await send(pilot, prompt)
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
