"""Claude through the official `anthropic` SDK: streaming, prompt caching, visible retries, exact counts.

The SDK carries every call (its own headers, User-Agent, auth and error classes; Bedrock and Vertex
clients share its interface); the streamed body's raw events are gathered into the message here
(`anthropic_events.py`), not by the SDK's typed snapshot per event. Its import, only what a call needs
(`sdk_lazy_import.py`), is never on the path to the TUI's first frame: `background_import.py` starts it in
a thread (the TUI after its first frame, `-p` from argv at process start). Constructing the provider is cheap.
What is sent is built in `anthropic_request.py` (pure: breakpoints, thinking, the count's form); what a
failed status means is read in `anthropic_errors.py`; this module makes the calls and follows the stream.

Failure handling (each ends in a one-line `ProviderError` the loop can show):
- 408/409/429/5xx/529 and connection errors before any text arrived are retried here (the client has
  `max_retries=0`) so every wait is announced with a `StreamNotice`; `retry-after(-ms)` is honoured, as
  seconds or as an HTTP date. The SDK's own retries would be silent, and it does not retry an
  `event: error` (e.g. overloaded) inside a 200 stream, which is retried here the same way when no text
  has been shown yet.
- A redirect or a 200 that is not an event stream names what came back and ANTHROPIC_BASE_URL, once.
- After text was shown, a dropped connection, a malformed event or a stream that ends without
  `message_stop` raises `ProviderError(partial_text=...)`: the loop keeps that text marked interrupted
  and no half-built tool_use ever reaches history.
- 400 "prompt is too long: N tokens > M maximum" raises `PromptTooLongError` (the loop compacts harder);
  401/403 name the variable to fix (`ANTHROPIC_API_KEY`): both read in `anthropic_errors.py`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, AsyncIterator, ClassVar

from tui_agent.core.models import DEFAULT_ANTHROPIC_MODEL
from tui_agent.core.providers.anthropic_blocks import message_from_response, usage_from
from tui_agent.core.providers.anthropic_errors import status_error
from tui_agent.core.providers.anthropic_request import cache_mark, count_params, stream_params
from tui_agent.core.providers.anthropic_transport import is_transport, make_client, not_a_stream_error, sendable
from tui_agent.core.providers.background_import import import_finished, import_in_background
from tui_agent.core.providers.base import (
    ModelRequest,
    PromptTooLongError,
    ProviderError,
    ProviderEvent,
    StreamDone,
    StreamNotice,
    StreamText,
)
from tui_agent.core.providers.cloud import CloudSettings, make_cloud_client, platform_model_id
from tui_agent.core.providers.retry import RetryableFailure, one_line, with_retries
from tui_agent.core.providers.sdk import SdkProvider
from tui_agent.core.providers.server_report import betas_for, report_from

if TYPE_CHECKING:
    from tui_agent.core.providers.base import Pinged


@dataclass
class AnthropicProvider(SdkProvider):
    model: str = DEFAULT_ANTHROPIC_MODEL
    name: str = "anthropic"
    manages_context: ClassVar[bool] = True  # context editing and server compaction (`--compact server-*`)
    can_ping: ClassVar[bool] = True  # `anthropic_ping.py`
    prompt_caching: bool = True
    key_variable: str = "ANTHROPIC_API_KEY"
    cache_ttl: str = "5m"  # "1h": every breakpoint asks for the 1-hour cache (writes cost 2x instead of 1.25x)
    thinking_budget: int = 0  # > 0: extended thinking with this many tokens (MAX_THINKING_TOKENS)
    cloud: CloudSettings | None = None  # Bedrock / Vertex / Foundry (core/providers/cloud.py); None: the API

    def wire_model(self, model: str) -> str:
        """The model id as the endpoint expects it (a cloud platform's own form; the engine keeps ours)."""
        if self.cloud is None:
            return model
        return platform_model_id(self.cloud.platform, model, self.cloud.region)
    diagnose: bool = False  # send the cache-diagnosis beta (turned off for the session by a 400)

    # -- request building -------------------------------------------------------------------
    def outbound_body(self, request: ModelRequest) -> dict[str, Any]:
        """The exact JSON body the next `stream(request)` would POST (`stream: true` included): for
        `--print-outbound`. The same request always gives the same body (no state moves)."""
        return {**sendable(self.build_params(request)), "stream": True}

    def cache_control(self) -> dict[str, str]:
        """The breakpoint marker: ephemeral, with `ttl: "1h"` when the 1-hour cache is on."""
        return cache_mark(self.cache_ttl)

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The `messages.stream` keyword arguments, with cache breakpoints (`anthropic_request.py`);
        `request` is never mutated and nothing about earlier calls is remembered."""
        return stream_params(request, model=self.wire_model(request.model or self.model),
                             max_tokens=request.max_tokens or self.max_output_tokens,
                             mark=self.cache_control() if self.prompt_caching else None,
                             thinking_budget=self.thinking_budget, diagnose=self.diagnose)

    # -- streaming --------------------------------------------------------------------------
    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        params = self.build_params(request)
        where = "Anthropic API" if self.cloud is None else self.cloud.label
        try:
            async for item in with_retries(lambda: self._attempt(params), self.retry, where):
                yield item
            return
        except _DiagnosisRefused:
            self.diagnose = False  # the endpoint does not take the beta: the rest of the session goes without
        yield StreamNotice("The API refused the cache-diagnosis beta (400); sending without it from now on.", "info")
        params = self.build_params(request)
        async for item in with_retries(lambda: self._attempt(params), self.retry, where):
            yield item

    async def ping(self, request: ModelRequest, zero: bool = True) -> "Pinged":
        """Keep the cache warm: `request` sent again with `max_tokens` 0 (`zero`) or the smallest form the
        endpoint takes, read for its usage (`anthropic_ping.py`)."""
        from tui_agent.core.providers.anthropic_ping import ping

        return await ping(self, request, zero)

    def _sdk(self) -> Any:
        """The SDK client, created (and the SDK imported, or its background import joined) on first use."""
        if self._client is None:
            if self.cloud is not None:
                self._client = make_cloud_client(self.cloud, self.timeout)
            else:
                self._client = make_client(self.api_key, self.base_url, self.timeout)
        return self._client

    def preload(self) -> None:
        """Import the SDK (in a thread the caller owns: the TUI's after its first frame, -p's at start)."""
        import_in_background().join()

    async def _attempt(self, params: dict[str, Any]) -> AsyncIterator[ProviderEvent]:
        """One HTTP request; raises `RetryableFailure` for retryable failures before any text was shown."""
        shown: list[str] = []
        answered: list[bool] = []  # one entry once the response's status and headers came
        if self._client is None:
            await import_finished()
        client = self._sdk()
        import anthropic

        try:
            async for item in self._streamed(client, params, shown, answered):
                yield item
        except anthropic.APIStatusError as error:
            failure = self._status_error(error, shown)
            if "diagnostics" in params and getattr(error, "status_code", None) == 400 and not shown \
                    and not isinstance(failure, PromptTooLongError):
                raise _DiagnosisRefused() from error
            raise failure from error
        except (asyncio.CancelledError, GeneratorExit, ProviderError, _DiagnosisRefused):
            raise
        except Exception as error:  # noqa: BLE001 - transport errors, malformed events, ...
            if isinstance(error, _Dropped) or is_transport(error):
                if not shown:
                    # What happened, not what the SDK calls it (its versions wrap a read error mid-stream
                    # differently): no response yet is a failed connection, a response cut short a drop.
                    raise RetryableFailure("connection dropped" if answered else "connection failed") from error
                raise ProviderError(
                    f"Connection to the Anthropic API dropped mid-reply ({one_line(error, 120)}).",
                    partial_text="".join(shown),
                ) from error
            if self.cloud is not None and not answered and "credentials" in str(error).lower():
                # The platform's library found none to sign with (the SDK says RuntimeError): nothing was sent.
                raise ProviderError(f"{self.cloud.label}: no credentials could be read ({one_line(error, 120)}). "
                                    f"Set {self.cloud.credentials_hint}.") from error
            reason = "a malformed event" if isinstance(error, (ValueError, KeyError, TypeError)) else type(error).__name__
            raise ProviderError(
                f"The Anthropic stream broke off ({reason}: {one_line(error, 120)}).",
                partial_text="".join(shown),
            ) from error

    async def _streamed(self, client: Any, params: dict[str, Any], shown: list[str],
                        answered: list[bool]) -> AsyncIterator[ProviderEvent]:
        """The SDK's streaming response, its raw events gathered here (`anthropic_events.py`: no typed
        snapshot per event): text as it comes, then the message as history keeps it. `answered` gets an
        entry once the response came (its status and headers), `shown` each text."""
        from tui_agent.core.providers.anthropic_events import Gathered, StreamError, decoded_events

        betas = betas_for(params.get("context_management"), "diagnostics" in params, params["messages"])
        # The beta client when a beta is asked for (context management, diagnosis), else the plain one.
        create = (partial(client.beta.messages.with_streaming_response.create, betas=betas) if betas
                  else client.messages.with_streaming_response.create)
        try:
            opened = create(**params, stream=True)
            response = await opened.__aenter__()
        except UnicodeEncodeError:  # a lone surrogate: nothing was sent yet
            opened = create(**sendable(params), stream=True)
            response = await opened.__aenter__()
        answered.append(True)
        # `__aexit__` closes the HTTP response on any exit, including cancellation (Esc).
        try:
            problem = not_a_stream_error(response.headers.get("content-type", ""), self.base_url)
            if problem is not None:
                raise problem
            gathered = Gathered()
            try:
                async for name, data in decoded_events(client, response):
                    text = gathered.apply(name, data)
                    if text:
                        shown.append(text)
                        yield StreamText(text)
            except StreamError as error:  # the SDK's own error for it (status 200): retried when nothing shown
                raise client._make_status_error(one_line(error, 300), body=error.body,
                                                response=response.http_response) from None
            final = gathered.final()
            # `message_delta` carries the stop reason and the final usage; `message_stop` adds nothing (some
            # recorded streams end without it). Without either, the reply was cut off.
            if final is None or (not gathered.stopped and final.get("stop_reason") is None):
                raise _Dropped("the connection closed before the reply was complete")
        except BaseException as error:
            await opened.__aexit__(type(error), error, error.__traceback__)
            raise
        await opened.__aexit__(None, None, None)
        try:
            message, usage = message_from_response(final), usage_from(final.get("usage"))
        except Exception as error:  # noqa: BLE001 - never lose an answer already shown to a shape
            raise ProviderError(f"The Anthropic reply could not be read ({one_line(error, 120)}).",
                                partial_text="".join(shown)) from error
        yield StreamDone(message, final.get("stop_reason"), usage, report_from(final))

    def _status_error(self, error: Any, shown: list[str]) -> Exception:
        return status_error(error, shown, base_url=self.base_url, key_variable=self.key_variable, cloud=self.cloud)

    # -- exact counting ---------------------------------------------------------------------
    async def count_tokens(self, request: ModelRequest) -> int | None:
        """Exact input tokens via `messages.count_tokens`; None where the endpoint is not offered. A request
        with `context_management` is counted after the edits the server would apply (see `count_edited`)."""
        counted = await self.count_edited(request)
        return None if counted is None else counted[0]

    async def count_edited(self, request: ModelRequest) -> tuple[int, int] | None:
        """(input tokens after the request's `context_management` edits, before them): the counting endpoint
        says what the server's context editing would clear. Without edits both are the plain count. None
        where the endpoint is not offered (Bedrock: the SDK's client refuses counting before sending)."""
        if self.cloud is not None and self.cloud.platform == "bedrock":
            return None
        params = self.build_params_for_count(request)
        if self._client is None:
            await import_finished()
        client = self._sdk()
        import anthropic

        betas = betas_for(request.context_management, False, params["messages"])
        try:
            if betas:
                edits = {"context_management": request.context_management} if request.context_management else {}
                result = await client.beta.messages.count_tokens(**params, **edits, betas=betas)
            else:
                result = await client.messages.count_tokens(**params)
        except anthropic.NotFoundError:
            return None  # an Anthropic-compatible server without the counting endpoint
        except anthropic.APIStatusError as error:
            failure = self._status_error(error, [])
            if isinstance(failure, RetryableFailure):
                raise ProviderError(f"Token count failed: Anthropic API {failure.what}.") from error
            raise failure from error
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as error:  # noqa: BLE001 - a transport error, a body that is not JSON
            raise ProviderError(f"Token count failed: {one_line(error, 120)}") from error
        after = usage_from({"input_tokens": getattr(result, "input_tokens", 0)}).input_tokens
        original = getattr(getattr(result, "context_management", None), "original_input_tokens", None)
        return after, original if isinstance(original, int) and original >= after else after

    def build_params_for_count(self, request: ModelRequest) -> dict[str, Any]:
        """Like `build_params` without caching or `max_tokens`."""
        return count_params(request, self.wire_model(request.model or self.model))


class _DiagnosisRefused(Exception):
    """A 400 for a request carrying the cache-diagnosis beta: sent again without it."""


class _Dropped(Exception):
    """The stream ended without `message_stop` (the HTTP body itself ended cleanly)."""
