"""The body of a Claude request: where its cache breakpoints go, its thinking, the form the count takes.

Its own concept because it is pure: a `ModelRequest` and the provider's settings in, the keyword arguments
of `messages.stream` (or `count_tokens`) out, with no SDK, no network and nothing remembered between calls.
Streaming and failures live in `anthropic_provider.py`; what they mean in `anthropic_errors.py`. The ping
(`anthropic_ping.py`) and `--print-outbound` read the same body, so what is sent and what is shown agree.
"""

from __future__ import annotations

from typing import Any

from tui_agent.core.messages import Block, Message
from tui_agent.core.providers.base import ModelRequest, with_notice

EPHEMERAL = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
# Blocks that may not carry cache_control (the API rejects it on thinking blocks).
_UNCACHEABLE = {"thinking", "redacted_thinking"}


def cache_mark(cache_ttl: str) -> dict[str, str]:
    """The breakpoint marker: ephemeral, with `ttl: "1h"` when the 1-hour cache is on."""
    return {**EPHEMERAL, "ttl": "1h"} if cache_ttl == "1h" else dict(EPHEMERAL)


def stream_params(request: ModelRequest, *, model: str, max_tokens: int, mark: dict[str, str] | None,
                  thinking_budget: int, diagnose: bool) -> dict[str, Any]:
    """The `messages.stream` keyword arguments, with cache breakpoints (`mark`; None: prompt caching off);
    `request` is never mutated.

    Breakpoints (at most 4): the last tool definition, the system prompt, the end of the part of the
    messages unchanged since the previous call (the cache written last time can be read there even
    when compaction changed later messages: `request.stable_prefix`, from the plan), and the last
    message (written now, read next call). Nothing about earlier calls is remembered here.
    """
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "messages": [dict(m) for m in request.messages],
    }
    if request.system:
        block: Block = {"type": "text", "text": request.system}
        if mark is not None:
            block["cache_control"] = dict(mark)
        params["system"] = [block]
    if request.tools:
        tools = [dict(t) for t in request.tools]
        if mark is not None:
            tools[-1]["cache_control"] = dict(mark)
        params["tools"] = tools
    count = len(params["messages"])
    stable = request.stable_prefix
    if mark is not None and count:
        used = ("system" in params) + ("tools" in params)
        targets = [count - 1]
        if 0 < stable < count:
            targets.insert(0, stable - 1)
        for index in targets[-(MAX_BREAKPOINTS - used):] if used < MAX_BREAKPOINTS else []:
            params["messages"][index] = with_breakpoint(params["messages"][index], mark)
    # The notice goes after the last breakpoint: never cached, so the next prefix is this one's.
    params["messages"] = with_notice(params["messages"], request.notice)
    if thinking_budget > 0:
        params["thinking"] = thinking_config(thinking_budget, params["max_tokens"])
    if request.context_management:
        params["context_management"] = request.context_management
    if diagnose:  # null on the first call: opted in, nothing to compare yet
        params["diagnostics"] = {"previous_message_id": request.previous_message_id or None}
    return params


def count_params(request: ModelRequest, model: str) -> dict[str, Any]:
    """The `count_tokens` keyword arguments: the stream's without caching or `max_tokens`."""
    params: dict[str, Any] = {"model": model, "messages": list(request.sent_messages)}
    if request.system:
        params["system"] = [{"type": "text", "text": request.system}]
    if request.tools:
        params["tools"] = list(request.tools)
    return params


def thinking_config(budget: int, max_tokens: int) -> dict[str, Any]:
    """Extended thinking as the API takes it: a budget of at least 1,024 tokens and below max_tokens."""
    return {"type": "enabled", "budget_tokens": max(1024, min(budget, max_tokens - 1))}


def with_breakpoint(message: Message, mark: dict[str, str] = EPHEMERAL) -> Message:
    """A copy of `message` whose last cacheable block carries `cache_control` (no-op if none can)."""
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return message
        return {**message, "content": [{"type": "text", "text": content, "cache_control": dict(mark)}]}
    blocks = list(content or [])
    for i in range(len(blocks) - 1, -1, -1):
        block = blocks[i]
        if block.get("type") in _UNCACHEABLE or (block.get("type") == "text" and not block.get("text")):
            continue
        blocks[i] = {**block, "cache_control": dict(mark)}
        return {**message, "content": blocks}
    return message
