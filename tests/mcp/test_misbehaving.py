"""A misbehaving MCP server (issue 9, item 13): junk on stdout leaves no traceback on our stderr, its
stderr log stays bounded, and a huge result reaches the model capped with a note."""

from __future__ import annotations

import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.mcp.helpers import write_config
from tui_agent.core.mcp.results import CAPPED_NOTE, MAX_RESULT_CHARS, format_result
from tui_agent.core.mcp.server_log import MAX_LOG_BYTES

NOISY = Path(__file__).parent / "servers" / "noisy_server.py"

SCRIPT = r"""
import asyncio, sys
from pathlib import Path
from tui_agent.core.mcp.config import load_config
from tui_agent.core.mcp.manager import McpManager
from tui_agent.core.tools.base import ToolContext

async def main():
    root = Path(sys.argv[1])
    manager = McpManager(load_config([root / ".mcp.json"], {}), cwd=root, log_dir=root / "logs",
                         start_timeout=30, call_timeout=60)
    notices = await manager.start()
    assert not notices, [n.text for n in notices]
    tools = {t.name: t for t in manager.tools}
    for name, args in [("junk", {}), ("shout", {"megabytes": 3}), ("big", {"chars": 2_000_000})]:
        out = await tools[f"mcp__noisy__{name}"].call(args, ToolContext(workspace=root))
        print(f"RESULT {name} {out.is_error} {len(str(out.content))} {str(out.content)[-160:]!r}")
    await manager.aclose()

asyncio.run(main())
"""


def test_a_noisy_server_stays_out_of_our_stderr_and_its_logs_stay_bounded(tmp_path: Path) -> None:
    # A banner on stdout before the server starts (wrapper scripts do this), plus junk mid-session.
    banner = f"echo 'Starting noisy server v1...'; echo '{{broken'; exec {shlex.quote(sys.executable)} {shlex.quote(str(NOISY))}"
    write_config(tmp_path / ".mcp.json", {"noisy": {"command": "sh", "args": ["-c", banner]}})
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT), str(tmp_path)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stderr == ""  # before: "Failed to parse JSONRPC message from server" and a traceback
    results = {line.split()[1]: line for line in out.stdout.splitlines() if line.startswith("RESULT")}
    assert "answered after junk" in results["junk"]
    assert "shouted" in results["shout"]
    size = int(results["big"].split()[3])
    assert MAX_RESULT_CHARS <= size < MAX_RESULT_CHARS + 400 and "MCP result truncated" in results["big"]
    logs = tmp_path / "logs"
    assert (logs / "noisy.log").stat().st_size <= MAX_LOG_BYTES
    assert (logs / "noisy.log.1").stat().st_size <= MAX_LOG_BYTES  # rotated, not grown to 3 MB
    assert "Failed to parse" in (logs / "sdk.log").read_text()  # the SDK's complaint is kept, one line


class _Text:
    type = "text"

    def __init__(self, text: str) -> None:
        self.text = text


class _Result:
    def __init__(self, *texts: str) -> None:
        self.content = [_Text(t) for t in texts]
        self.structured_content = None
        self.is_error = False


def test_results_are_capped_with_a_note() -> None:
    out = format_result(_Result("a" * 60_000, "b" * 60_000))
    assert isinstance(out.content, str)
    assert out.content.startswith("a" * 60_000) and out.content.count("b") == MAX_RESULT_CHARS - 60_000
    assert out.content.endswith(CAPPED_NOTE.format(shown=MAX_RESULT_CHARS, total=120_000))
    small = format_result(_Result("fine"))
    assert small.content == "fine"
