"""What `tui-agent -p` has imported when it sends its first request: nothing that request does not need.

Everything loaded before the first request is on `-p`'s critical path (issue 43: the import thread and the
main thread share one GIL, so loading in the background only moves the cost). The real CLI path runs in a child
process against the fake Anthropic server (real HTTP, the real SDK); the provider records `sys.modules` as the
request goes out. Not before it: the faces' UI, the MCP client with no MCP config, the compaction strategies
not chosen, the journal's reader, telemetry without an endpoint, and the SDK's parts a messages call does not
use (its beta streams, reached only through `anthropic.lib.streaming`'s type aliases).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import cli_env
from tests.fakes.fake_anthropic import FakeAnthropic, text

CHILD = """
import json, os, sys
from tui_agent.core.providers import anthropic_provider
from tui_agent.faces.cli import main

streamed = anthropic_provider.AnthropicProvider._streamed

async def first_request(self, *args, **kwargs):
    path = os.environ["MODULES_AT_FIRST_REQUEST"]
    if not os.path.exists(path):
        with open(path, "w") as handle:
            json.dump(sorted(sys.modules), handle)
    async for event in streamed(self, *args, **kwargs):
        yield event

anthropic_provider.AnthropicProvider._streamed = first_request
sys.exit(main(sys.argv[1:]))
"""

NOT_BEFORE_THE_FIRST_REQUEST = (
    "textual", "rich", "tui_agent.ui", "tui_agent.web", "mcp", "openai", "aiohttp", "markdown_it",
    "tui_agent.core.mcp.manager", "tui_agent.core.mcp.client",
    "tui_agent.core.compaction.strategies.legacy", "tui_agent.core.compaction.strategies.seed",
    "tui_agent.core.journal.reader", "tui_agent.core.recordings", "tui_agent.core.agent.telemetry",
    "tui_agent.core.agent.metrics",
    "anthropic.lib.streaming._beta_messages", "anthropic.lib.streaming._beta_types", "anthropic.resources.beta",
)


def test_dash_p_loads_only_what_its_first_request_needs(tmp_path: Path) -> None:
    record = tmp_path / "modules.json"
    with FakeAnthropic([text("Hello.")]) as fake:
        out = subprocess.run([sys.executable, "-c", CHILD, "-p", "hello there", "-C", str(tmp_path)],
                             cwd=tmp_path, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                             env=cli_env(tmp_path, fake, MODULES_AT_FIRST_REQUEST=str(record),
                                         TUI_AGENT_DATA_DIR=str(tmp_path / "data")))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("Hello.")
    modules = json.loads(record.read_text())
    assert "anthropic._base_client" in modules  # the child did reach the request, through the SDK
    early = sorted(m for m in modules if any(m == name or m.startswith(name + ".")
                                             for name in NOT_BEFORE_THE_FIRST_REQUEST))
    assert early == []
