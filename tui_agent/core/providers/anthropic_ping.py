"""One keep-warm ping on the Messages API: the last request sent again, only to read its cached prefix.

The prompt cache keys on tools, system, messages (with their breakpoints) and the thinking settings; a
request that repeats them reads the cached prefix at the read price and starts its time to live again
(`core/agent/keep_warm.py` decides when). So the ping's body is `build_params` of the very request the
last call sent, with one field changed: `max_tokens`, which is not part of the cache key.

It is 0, as the API documents it ("Set to `0` to populate the prompt cache without generating a
response", `types/message_create_params.py`), with thinking on too: the thinking settings stay as they
are (they key the cached messages) and nothing is generated, so the call's full `max_tokens` is never
carried. Such a ping answers no content; its stream is read to the end for the final usage.

An endpoint that refuses `max_tokens: 0` (a 400: a gateway, an older deployment) gets the same ping once
more in the smallest form it accepts: `max_tokens` 1, or one above the thinking budget (the budget is in
the key, and `max_tokens` must exceed it), its stream closed as soon as `message_start` brought the usage
(a token or so of output is billed). `Pinged.refused` says so; the warmer remembers it for the session.

No other retry and no notice: a failure of any kind (an HTTP status, a dropped or refused connection, a
stream without `message_start`) is one `PingFailed` with a one-line reason, and the caller stops warming.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from tui_agent.core.providers.anthropic_blocks import usage_from
from tui_agent.core.providers.anthropic_transport import sendable
from tui_agent.core.providers.background_import import import_finished
from tui_agent.core.providers.retry import one_line
from tui_agent.core.providers.base import Pinged
from tui_agent.core.providers.server_report import betas_for, report_from

if TYPE_CHECKING:
    from tui_agent.core.providers.base import ModelRequest


class AnthropicClient(Protocol):
    """What a ping needs of `AnthropicProvider`: its request building and its SDK client."""

    _client: Any

    def build_params(self, request: "ModelRequest") -> dict[str, Any]: ...

    def _sdk(self) -> Any: ...


class PingFailed(Exception):
    """A ping got no usage back: one line saying why (never retried)."""


class _ZeroRefused(Exception):
    """The endpoint answered `max_tokens: 0` with a 400 (`detail`)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def smallest_max_tokens(params: dict[str, Any]) -> int:
    """The smallest `max_tokens` an endpoint without `max_tokens: 0` accepts for these params: 1, or one
    above the thinking budget (which must stay as the call sent it: it is part of the cache key)."""
    thinking = params.get("thinking")
    budget = thinking.get("budget_tokens") if isinstance(thinking, dict) else None
    return budget + 1 if isinstance(budget, int) and budget > 0 else 1


def ping_params(provider: AnthropicClient, request: "ModelRequest", zero: bool = True) -> dict[str, Any]:
    """The ping's keyword arguments: the call's own (`build_params`) with `max_tokens` 0, or the smallest
    form an endpoint that refuses 0 takes (`smallest_max_tokens`)."""
    params = provider.build_params(request)
    params["max_tokens"] = 0 if zero else smallest_max_tokens(params)
    return params


async def ping(provider: AnthropicClient, request: "ModelRequest", zero: bool = True) -> Pinged:
    """Send `request` again as a ping; `zero`: with `max_tokens: 0` (falling back once if refused)."""
    if provider._client is None:
        await import_finished()
    client = provider._sdk()
    if zero:
        try:
            return await _send(client, ping_params(provider, request, zero=True))
        except _ZeroRefused as refused:
            pinged = await _send(client, ping_params(provider, request, zero=False))
            return Pinged(pinged.usage, pinged.max_tokens, refused.detail, pinged.cache_miss)
    return await _send(client, ping_params(provider, request, zero=False))


async def _send(client: Any, params: dict[str, Any]) -> Pinged:
    """One ping request: `max_tokens` 0 is read to its end (nothing is generated), any other form is
    closed at `message_start`, whose usage already says what was read and written."""
    import anthropic

    params = sendable(params)
    zero = params["max_tokens"] == 0
    betas = betas_for(params.get("context_management"), "diagnostics" in params, params["messages"])
    open_stream = partial(client.beta.messages.stream, betas=betas) if betas else client.messages.stream
    started: Any = None
    try:
        async with open_stream(**params) as stream:  # leaving the block closes the HTTP response
            async for event in stream:
                if event.type == "message_start":
                    started = event.message
                    if not zero:
                        break
                elif event.type == "content_block_start":  # generating after all: the start's usage is enough
                    break
            final = stream.current_message_snapshot if zero and started is not None else started
    except anthropic.APIStatusError as error:
        detail = f"HTTP {getattr(error, 'status_code', '?')}: {one_line(error, 100)}"
        if zero and getattr(error, "status_code", None) == 400:
            raise _ZeroRefused(detail) from error
        raise PingFailed(detail) from error
    except (asyncio.CancelledError, GeneratorExit):
        raise
    except Exception as error:  # noqa: BLE001 - a refused or dropped connection, a malformed event
        raise PingFailed(f"{type(error).__name__}: {one_line(error, 100)}") from error
    if started is None:
        raise PingFailed("the stream ended before its usage came")
    miss = report_from(final).cache_miss
    return Pinged(usage_from(getattr(final, "usage", None)), params["max_tokens"], "", miss.kind if miss else "")
