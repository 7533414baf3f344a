"""`python hung_shutdown_main.py MARKER [tui-agent args]`: the real CLI, except that the session's shutdown
hangs for ever (it blocks the event loop, as a stuck driver write did in issue 21). MARKER is written
when the hang begins, so a test knows the shutdown is stuck before it sends the next signal."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from tui_agent.faces.cli import main
from tui_agent.core.agent.session import Session


def hang_on_close(marker: Path):
    async def aclose(self: Session) -> None:
        marker.write_text("hanging\n")
        threading.Event().wait()  # synchronous on purpose: nothing in the loop runs any more

    return aclose


if __name__ == "__main__":
    Session.aclose = hang_on_close(Path(sys.argv[1]))  # type: ignore[method-assign]
    sys.exit(main(sys.argv[2:]))
