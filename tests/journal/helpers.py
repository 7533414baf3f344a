"""Shared builders for the journal tests: scripted sessions on a real workspace, journaled into the
test's data dir (conftest points `TUI_AGENT_DATA_DIR` at a fresh folder per test)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any, AsyncIterator

from tests.turns import turn_events
from tests.core.helpers import EchoTool, WriteLikeTool
from tui_agent.core.compaction import CompactOptions
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.providers.base import ModelRequest, ProviderEvent, StreamDone, StreamText, UsageInfo
from tui_agent.core.providers.scripted import ScriptedProvider
from tui_agent.core.agent.session import Session
from tui_agent.core.tools import ToolRegistry
from tui_agent.core.tools.read import ReadTool


class LocalClaude(AnthropicProvider):
    """The real Anthropic request builder (cache breakpoints, remembered prefix) with scripted replies
    instead of HTTP: what each call would have POSTed is kept in `bodies`."""

    def __init__(self, replies: list[list[dict[str, Any]]] | None = None, usage: UsageInfo | None = None,
                 sized: bool = False, **kwargs: Any) -> None:
        super().__init__(api_key="test-key", **kwargs)
        self.replies = list(replies or [])
        self.usage = usage
        self.sized = sized  # report the request's own size (chars/4) as its input tokens, as an API would
        self.bodies: list[dict[str, Any]] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        self.bodies.append({**self.build_params(request), "stream": True})
        content = self.replies.pop(0) if self.replies else [{"type": "text", "text": "(done)"}]
        for block in content:
            if block.get("type") == "text":
                yield StreamText(block["text"])
                await asyncio.sleep(0)
        stop = "tool_use" if any(b.get("type") == "tool_use" for b in content) else "end_turn"
        usage = self.usage
        if usage is not None and self.sized:
            body = self.bodies[-1]
            size = len(json.dumps([body.get("system"), body.get("tools"), body.get("messages")])) // 4
            usage = dataclasses.replace(usage, input_tokens=size)
        yield StreamDone({"role": "assistant", "content": [dict(b) for b in content]}, stop, usage)


def tools() -> ToolRegistry:
    return ToolRegistry([ReadTool(), EchoTool(), WriteLikeTool()])


def session_on(workspace: Path, provider: Any = None, *, compact: CompactOptions | None = None) -> Session:
    """The default (v2, sticky) compactor unless `compact` asks for the v1 one."""
    return Session(provider if provider is not None else ScriptedProvider(), tools(), workspace,
                   compact=compact, system_prompt_builder=lambda s: "You are a test agent.")


run = turn_events  # one turn; permission requests answered from `answers` (by tool name), else denied
