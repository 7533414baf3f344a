"""Claude through the official `anthropic` SDK: streaming, prompt caching, visible retries, exact counts.

The SDK carries every call (its own headers, User-Agent, auth and error classes; Bedrock and Vertex
clients share its interface); the streamed body's raw events are gathered into the message here
(`anthropic_events.py`), not by the SDK's typed snapshot per event. Its import, only what a call needs
(`sdk_lazy_import.py`), is never on the path to the TUI's first frame: `background_import.py` starts it in
a thread (the TUI after its first frame, `-p` from argv at process start). Constructing the provider is cheap.

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
- 400 "prompt is too long: N tokens > M maximum" raises `PromptTooLongError` (the loop compacts harder).
- 401/403 name the variable to fix (`ANTHROPIC_API_KEY`).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, AsyncIterator, ClassVar

from tui_agent.core.messages import Block, Message
from tui_agent.core.providers.anthropic_blocks import (  # noqa: F401 - re-exported: the conversion's old home
    block_from_response,
    message_from_response,
    usage_from,
)
from tui_agent.core.providers.background_import import import_finished, import_in_background
from tui_agent.core.providers.anthropic_transport import (
    is_transport,
    make_client,
    not_a_stream_error,
    redirect_error,
    sendable,
)
from tui_agent.core.providers.cloud import CloudSettings, make_cloud_client, platform_model_id
from tui_agent.core.providers.base import (
    ModelRequest,
    PromptTooLongError,
    ProviderError,
    ProviderEvent,
    StreamDone,
    StreamNotice,
    StreamText,
    with_notice,
)
from tui_agent.core.models import DEFAULT_ANTHROPIC_MODEL
from tui_agent.core.providers.retry import (
    RETRYABLE_STATUS,
    RetryableFailure,
    describe_status,
    one_line,
    with_retries,
)
from tui_agent.core.providers.sdk import SdkProvider
from tui_agent.core.providers.server_report import betas_for, report_from

if TYPE_CHECKING:
    from tui_agent.core.providers.base import Pinged

EPHEMERAL = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
_TOO_LONG = re.compile(r"prompt is too long:\s*(\d+)\s*tokens\s*>\s*(\d+)\s*maximum", re.I)
# Blocks that may not carry cache_control (the API rejects it on thinking blocks).
_UNCACHEABLE = {"thinking", "redacted_thinking"}


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
        return {**EPHEMERAL, "ttl": "1h"} if self.cache_ttl == "1h" else dict(EPHEMERAL)

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The `messages.stream` keyword arguments, with cache breakpoints; `request` is never mutated.

        Breakpoints (at most 4): the last tool definition, the system prompt, the end of the part of the
        messages unchanged since the previous call (the cache written last time can be read there even
        when compaction changed later messages: `request.stable_prefix`, from the plan), and the last
        message (written now, read next call). Nothing about earlier calls is remembered here.
        """
        params: dict[str, Any] = {
            "model": self.wire_model(request.model or self.model),
            "max_tokens": request.max_tokens or self.max_output_tokens,
            "messages": [dict(m) for m in request.messages],
        }
        cache = self.prompt_caching
        mark = self.cache_control()
        if request.system:
            block: Block = {"type": "text", "text": request.system}
            if cache:
                block["cache_control"] = dict(mark)
            params["system"] = [block]
        if request.tools:
            tools = [dict(t) for t in request.tools]
            if cache:
                tools[-1]["cache_control"] = dict(mark)
            params["tools"] = tools
        count = len(params["messages"])
        stable = request.stable_prefix
        if cache and count:
            used = ("system" in params) + ("tools" in params)
            targets = [count - 1]
            if 0 < stable < count:
                targets.insert(0, stable - 1)
            for index in targets[-(MAX_BREAKPOINTS - used):] if used < MAX_BREAKPOINTS else []:
                params["messages"][index] = _with_breakpoint(params["messages"][index], mark)
        # The notice goes after the last breakpoint: never cached, so the next prefix is this one's.
        params["messages"] = with_notice(params["messages"], request.notice)
        if self.thinking_budget > 0:
            params["thinking"] = thinking_config(self.thinking_budget, params["max_tokens"])
        if request.context_management:
            params["context_management"] = request.context_management
        if self.diagnose:  # null on the first call: opted in, nothing to compare yet
            params["diagnostics"] = {"previous_message_id": request.previous_message_id or None}
        return params

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
        status = getattr(error, "status_code", None)
        kind = _error_type(error) or getattr(error, "type", None)
        message = one_line(_api_message(error) or error)
        headers = getattr(getattr(error, "response", None), "headers", None)
        if status is not None and 300 <= status < 400:
            return redirect_error(status, headers, self.base_url)
        if status in (401, 403) or kind in ("authentication_error", "permission_error"):
            if self.cloud is not None:
                verb = "rejected the credentials" if status == 401 else "refused access"
                return ProviderError(f"{self.cloud.label} {verb} ({status}: {message}). "
                                     f"Check {self.cloud.credentials_hint}.")
            verb = "rejected the API key" if status == 401 else "refused access"
            return ProviderError(
                f"Anthropic {verb} ({status}: {message}). Set {self.key_variable} to a valid key."
            )
        too_long = _TOO_LONG.search(message)
        if too_long:
            return PromptTooLongError(message, int(too_long.group(1)), int(too_long.group(2)))
        retryable = status in RETRYABLE_STATUS or (status == 200 and kind in ("overloaded_error", "api_error"))
        if retryable and not shown:
            return RetryableFailure(describe_status(status, kind), headers if status != 200 else None)
        if status == 404 and kind == "not_found_error":
            return ProviderError(f"Anthropic API: {message} (check ANTHROPIC_MODEL / --model and ANTHROPIC_BASE_URL).")
        where = "mid-reply" if shown else f"({status})"
        return ProviderError(f"Anthropic API error {where}: {message}", partial_text="".join(shown))

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
        params: dict[str, Any] = {"model": self.wire_model(request.model or self.model),
                                  "messages": list(request.sent_messages)}
        if request.system:
            params["system"] = [{"type": "text", "text": request.system}]
        if request.tools:
            params["tools"] = list(request.tools)
        return params


class _DiagnosisRefused(Exception):
    """A 400 for a request carrying the cache-diagnosis beta: sent again without it."""


class _Dropped(Exception):
    """The stream ended without `message_stop` (the HTTP body itself ended cleanly)."""


def thinking_config(budget: int, max_tokens: int) -> dict[str, Any]:
    """Extended thinking as the API takes it: a budget of at least 1,024 tokens and below max_tokens."""
    return {"type": "enabled", "budget_tokens": max(1024, min(budget, max_tokens - 1))}


def _with_breakpoint(message: Message, mark: dict[str, str] = EPHEMERAL) -> Message:
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


def _api_message(error: Any) -> str | None:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if body.get("message"):
            return str(body["message"])
    if isinstance(body, str) and body.strip():
        return body
    return getattr(error, "message", None)


def _error_type(error: Any) -> str | None:
    body = getattr(error, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"].get("type")
    return None
