"""What a bare `tui-agent` has imported when its first frame is drawn: nothing the first frame does not draw.

The real CLI path (parse, session flags, build_session, journal, the app) runs in a child process up to
the first frame (headless Textual driver, 120×40); there the app records `sys.modules` and quits. Modals,
other screens, replay, serve, the Markdown machinery, the model SDKs, MCP and the journal's reader are all
loaded later (after the first frame, or when asked for).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = """
import json, sys
import tui_agent.faces.cli as cli
from tui_agent.ui import app as appmod

cli.headless_prompt = lambda *args: None  # the child's stdin is not a terminal: open the app anyway
run = appmod.AgentApp.run
appmod.AgentApp.run = lambda self: run(self, headless=True, size=(120, 40))

def first_frame(self):
    print(json.dumps(sorted(sys.modules)), flush=True)
    self.exit(0)

appmod.AgentApp._after_first_frame = first_frame
sys.exit(cli.main(sys.argv[1:]))
"""

NOT_BEFORE_THE_FIRST_FRAME = (
    "anthropic", "openai", "mcp", "markdown_it", "textual_serve", "aiohttp",
    "tui_agent.web", "tui_agent.faces.replay", "tui_agent.ui.replay_app", "tui_agent.ui.turn",
    "tui_agent.ui.screens.permission", "tui_agent.ui.screens.trust", "tui_agent.ui.screens.replay",
    "tui_agent.ui.screens.message_view", "tui_agent.ui.screens.event_view", "tui_agent.ui.screens.resume_picker",
    "tui_agent.ui.widgets.assistant_reply", "tui_agent.core.providers.anthropic_provider",
    "tui_agent.core.providers.openai_provider", "tui_agent.core.journal.reader", "tui_agent.core.journal.store",
    "tui_agent.core.journal.resume", "tui_agent.core.recordings.replay", "tui_agent.core.recordings.economics",
    # the turn and the compaction engine: the session makes its compactor at the first plan (the prewarm
    # imports them after the first frame); telemetry only with an OTLP endpoint; themes found without
    # importlib.resources (40 modules)
    "tui_agent.core.agent.loop", "tui_agent.core.agent.tool_round", "tui_agent.core.compaction.compactor",
    "tui_agent.core.compaction.tiers", "tui_agent.core.compaction.facts", "tui_agent.core.compaction.recap",
    "tui_agent.core.compaction.strategies.legacy", "tui_agent.core.compaction.strategies.seed",
    "tui_agent.core.compaction.strategies.server", "tui_agent.core.agent.telemetry", "tui_agent.core.agent.metrics",
    "tui_agent.core.agent.event_wire", "importlib.resources.readers", "zipfile",
    # the demo's mind (its answers, flows and prompt readers) loads with its first answer or the prewarm
    "tui_agent.core.providers.demo_decide", "tui_agent.core.providers.demo_answers",
    "tui_agent.core.providers.demo_flows", "tui_agent.core.providers.demo_prompts",
)


def test_the_first_frame_loads_only_what_it_draws(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# demo\n")
    env = {**os.environ, "TUI_AGENT_CONFIG_DIR": str(tmp_path / "config"), "TUI_AGENT_DATA_DIR": str(tmp_path / "data")}
    out = subprocess.run([sys.executable, "-c", CHILD, "--model", "demo", "-C", str(tmp_path)], capture_output=True,
                         text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr[-2000:]
    modules = json.loads(out.stdout.strip().splitlines()[0])
    assert "tui_agent.ui.screens.main" in modules  # the child did reach the first frame
    early = sorted(m for m in modules if m.split(".")[0] in NOT_BEFORE_THE_FIRST_FRAME
                   or any(m == name or m.startswith(name + ".") for name in NOT_BEFORE_THE_FIRST_FRAME))
    assert early == []
