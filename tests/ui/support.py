"""Shared builders for the UI tests and snapshots: fixed workspaces, scripted sessions, test apps.

Everything is deterministic: fixed file contents and mtimes, scripted or demo replies (no clock), a
fixed session label, tool durations hidden, animations off.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tui_agent.core.compaction import CompactOptions
from tui_agent.core.providers.demo import DemoProvider
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply
from tui_agent.core.agent.session import Session
from tui_agent.core.tools import ToolOutput, ToolRegistry, builtin_tools
from tui_agent.core.tools.base import Tool, ToolContext
from tui_agent.ui.app import AgentApp

FIXED_MTIME = 1_700_000_000
# Compaction 3's marks (high 65 %, low 30 %, the newest writes within a quarter of the low mark, nothing kept
# for recurring), which the demo keeps too (`demo_policy`): the panel's scenes on a 16k window need an event
# that leaves masked and cut rows in the request, and compaction 4's 10 % low mark drops them in that event.
SMALL_WINDOW_MARKS = dict(high_water=0.65, low_water=0.30, keep_for_use_share=0.25, keep_recurring_share=0.0,
                          cut_keep_chars=2000)


def make_repo(root: Path, name: str = "demo-repo") -> Path:
    """A small repository with a few large files, so compaction has something to cut."""
    repo = root / name
    (repo / "src").mkdir(parents=True, exist_ok=True)
    files = {
        "README.md": "# demo-repo\n\nA tiny service used to show the context-budget panel.\n",
        "pyproject.toml": '[project]\nname = "demo-repo"\nversion = "0.1.0"\n',
        "src/app.py": "".join(f"def handler_{i}(request):\n    return {{'status': {i}}}\n\n" for i in range(160)),
        "src/models.py": "".join(f"class Model{i}:\n    field_{i}: int = {i}\n\n" for i in range(200)),
        "src/util.py": "".join(f"def helper_{i}(x):\n    return x * {i}  # handler helper\n\n" for i in range(150)),
    }
    for offset, (rel, text) in enumerate(sorted(files.items())):
        path = repo / rel
        path.write_text(text, encoding="utf-8")
        os.utime(path, (FIXED_MTIME + offset, FIXED_MTIME + offset))
    return repo


class FakeWrite(Tool):
    """A tiny non-read-only tool, so the loop asks for permission."""

    name = "Write"
    description = "Write a file (test double: records the call, touches nothing)."
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["file_path", "content"],
    }
    read_only = False

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        self.calls.append(tool_input)
        return ToolOutput(f"Wrote {len(tool_input['content'])} chars to {tool_input['file_path']}")


class FakeEdit(FakeWrite):
    name = "Edit"
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "old_string": {"type": "string"},
                       "new_string": {"type": "string"}},
        "required": ["file_path", "old_string", "new_string"],
    }

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        self.calls.append(tool_input)
        return ToolOutput(f"Edited {tool_input['file_path']}")


SNAPSHOT_SYSTEM = "You are tui-agent, a coding agent working in the user's repository at /work/demo-repo."


class Frozen(Tool):
    """A real tool behind a fixed description, so other people's wording changes do not move snapshots
    (the baseline tokens of the meter depend on every tool's schema)."""

    def __init__(self, inner: Tool) -> None:
        self.inner = inner
        self.name = inner.name
        self.description = f"{inner.name} (test)"
        self.input_schema = inner.input_schema
        self.read_only = inner.read_only

    def summary(self, tool_input: dict[str, Any]) -> str:
        return self.inner.summary(tool_input)

    def paths(self, tool_input: dict[str, Any]) -> list[str]:
        return self.inner.paths(tool_input)

    def permission_preview(self, tool_input: dict[str, Any], ctx: ToolContext) -> str:
        return self.inner.permission_preview(tool_input, ctx)

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return await self.inner.call(tool_input, ctx)


def reading_tools() -> list[Tool]:
    return [Frozen(t) for t in builtin_tools() if t.name in ("Read", "Glob", "Grep")]


def acting_tools() -> list[Tool]:
    """The real Write, Edit and Bash (they need permission), behind fixed descriptions."""
    return [Frozen(t) for t in builtin_tools() if t.name in ("Write", "Edit", "Bash")]


class McpStyleTool(Tool):
    """An MCP-like tool: a server-style name, arbitrary JSON input, no read-only hint."""

    name = "mcp__tracker__create_issue"
    description = "Create an issue in the tracker (test double: records the call)."
    input_schema: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": True}
    read_only = False

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        self.calls.append(tool_input)
        return ToolOutput("created issue #1")


def fixed_repo(base: Path = Path("/tmp/tui-agent-snapshots")) -> Path:
    """`make_repo` at a fixed path, wiped first: for snapshots whose screen shows the workspace path."""
    import shutil

    shutil.rmtree(base, ignore_errors=True)
    return make_repo(base)


def frozen(session: Session) -> Session:
    """Fix everything in the outbound baseline that does not belong to the test (tmp path, tool docs)."""
    session.system_prompt_builder = lambda s: SNAPSHOT_SYSTEM
    return session


def scripted_session(workspace: Path, replies: list, *, extra_tools: list[Tool] | None = None,
                     compact: CompactOptions | None = None, delay: float = 0.0,
                     provider: ScriptedProvider | None = None) -> Session:
    """A session on `ScriptedProvider(replies)`, or on `provider` (a subclass, usage set...) given them."""
    if provider is None:
        provider = ScriptedProvider(replies=list(replies), delay=delay)
    else:
        provider.replies = list(replies)
    tools = ToolRegistry([*reading_tools(), *(extra_tools or [])])
    return frozen(Session(provider, tools, workspace, compact=compact or CompactOptions()))


def demo_session(workspace: Path, *, compact: CompactOptions | None = None) -> Session:
    provider = DemoProvider(workspace=workspace, delay=0.0, context_window=16_000)  # the snapshots' small window
    return frozen(Session(provider, ToolRegistry(reading_tools()), workspace, compact=compact or CompactOptions()))


def make_app(session: Session, **kwargs: Any) -> AgentApp:
    kwargs.setdefault("session_label", "test")
    kwargs.setdefault("show_durations", False)
    app = AgentApp(session, **kwargs)
    app.animation_level = "none"
    return app


async def send(pilot: Any, text: str) -> None:
    """Type a prompt and press Enter, then wait for the turn to finish."""
    app = pilot.app
    prompt = app.screen.query_one("PromptArea")
    prompt.load_text(text)
    prompt.focus()
    await pilot.press("enter")
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def wait_for(pilot: Any, condition: Any, what: str) -> None:
    """The one bounded wait (tests/waiting.py), then a pause so the screen shows what was waited for."""
    from tests.waiting import wait_until

    await wait_until(condition, what=what)
    await pilot.pause()


def three_reads(workspace: Path) -> Session:
    """A quick scripted turn with three tool cards (the demo's six rounds are not needed here)."""
    return scripted_session(workspace, [tool_reply("Read", {"file_path": name}, f"t{i}", f"Reading {name}.")
                                        for i, name in enumerate(("README.md", "src/app.py", "src/util.py"))]
                            + [text_reply("Done.")])
