"""A provider that replays scripted replies: for tests, snapshots and examples (no network, no clock).

Each reply is an assistant message (content blocks) or a callable that builds one from the request, or
an exception to raise. Text blocks are streamed word by word, like a real model.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Union

from tui_agent.core.messages import Message
from tui_agent.core.providers.base import ModelRequest, Provider, ProviderEvent, StreamDone, StreamText, UsageInfo

Reply = Union[list[dict[str, Any]], Callable[[ModelRequest], list[dict[str, Any]]], BaseException]


def words(text: str) -> list[str]:
    """Split text into word-sized chunks that join back to the exact text."""
    return re.findall(r"\S+\s*|\s+", text)


def text_reply(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def tool_reply(name: str, tool_input: dict[str, Any], tool_id: str, text: str = "") -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
    return blocks


@dataclass
class ScriptedProvider(Provider):
    """Replays `replies` in order; `requests` records what each call received (for assertions)."""

    replies: list[Reply] = field(default_factory=list)
    requests: list[ModelRequest] = field(default_factory=list)
    delay: float = 0.0
    model: str = "scripted"
    name: str = "scripted"
    usage: UsageInfo | None = None

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        self.requests.append(request)
        if not self.replies:
            reply: Reply = text_reply("(no more scripted replies)")
        else:
            reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        content = reply(request) if callable(reply) else reply
        for block in content:
            if block.get("type") == "text":
                for chunk in words(block["text"]):
                    if self.delay:
                        await asyncio.sleep(self.delay)
                    else:
                        await asyncio.sleep(0)
                    yield StreamText(chunk)
        message: Message = {"role": "assistant", "content": [dict(b) for b in content]}
        stop = "tool_use" if any(b.get("type") == "tool_use" for b in content) else "end_turn"
        yield StreamDone(message, stop, self.usage)
