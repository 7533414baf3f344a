"""One keep-warm ping on the Messages API: the last request sent again, read only up to its usage.

The prompt cache keys on tools, system, messages (with their breakpoints) and the thinking settings; a
request that repeats them reads the cached prefix at the read price and starts its time to live again
(`core/agent/keep_warm.py` decides when). So the ping's body is `build_params` of the very request the
last call sent, with one field changed: `max_tokens` is 1 (it is not part of the cache key), unless the
request asks for extended thinking, whose budget must stay below `max_tokens` and whose settings are
part of the key: then nothing changes. The stream is closed as soon as `message_start` brought the
usage (what was read and written), so at most a token or so of output is billed.

No retry and no notice: a failure of any kind (an HTTP status, a dropped or refused connection, a stream
without `message_start`) is one `PingFailed` with a one-line reason, and the caller stops warming.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from tui_agent.core.messages import UsageInfo
from tui_agent.core.providers.anthropic_blocks import usage_from
from tui_agent.core.providers.anthropic_transport import sendable
from tui_agent.core.providers.background_import import import_finished
from tui_agent.core.providers.retry import one_line
from tui_agent.core.providers.server_report import betas_for

if TYPE_CHECKING:
    from tui_agent.core.providers.base import ModelRequest


class AnthropicClient(Protocol):
    """What a ping needs of `AnthropicProvider`: its request building and its SDK client."""

    _client: Any

    def build_params(self, request: "ModelRequest") -> dict[str, Any]: ...

    def _sdk(self) -> Any: ...


class PingFailed(Exception):
    """A ping got no usage back: one line saying why (never retried)."""


def ping_params(provider: AnthropicClient, request: "ModelRequest") -> dict[str, Any]:
    """The ping's keyword arguments: the call's own (`build_params`), `max_tokens` 1 unless thinking."""
    params = provider.build_params(request)
    if "thinking" not in params:
        params["max_tokens"] = 1
    return params


async def ping(provider: AnthropicClient, request: "ModelRequest") -> UsageInfo:
    """Send `request` again as a ping and return the usage of its `message_start`."""
    params = sendable(ping_params(provider, request))
    if provider._client is None:
        await import_finished()
    client = provider._sdk()
    import anthropic

    betas = betas_for(params.get("context_management"), "diagnostics" in params, params["messages"])
    open_stream = partial(client.beta.messages.stream, betas=betas) if betas else client.messages.stream
    try:
        async with open_stream(**params) as stream:  # leaving the block closes the HTTP response
            async for event in stream:
                if event.type == "message_start":
                    return usage_from(getattr(event.message, "usage", None))
    except anthropic.APIStatusError as error:
        raise PingFailed(f"HTTP {getattr(error, 'status_code', '?')}: {one_line(error, 100)}") from error
    except (asyncio.CancelledError, GeneratorExit):
        raise
    except Exception as error:  # noqa: BLE001 - a refused or dropped connection, a malformed event
        raise PingFailed(f"{type(error).__name__}: {one_line(error, 100)}") from error
    raise PingFailed("the stream ended before its usage came")
