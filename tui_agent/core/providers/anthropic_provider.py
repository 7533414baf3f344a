"""Claude over the Messages API: streaming, prompt caching, visible retries, exact counts.

The HTTP and SSE side is `anthropic_wire` (httpx2, imported on the first call or by `preload`), not the
`anthropic` SDK: the SDK cost 1–2 s to import on every `-p` run and a pydantic object per streamed event
(bench/bench_turn.py). Constructing the provider is cheap.

Failure handling (each ends in a one-line `ProviderError` the loop can show):
- 408/409/429/5xx/529 and connection errors before any text arrived are retried here (the client has
  `max_retries=0`) so every wait is announced with a `StreamNotice`; `retry-after(-ms)` is honoured.
- An `event: error` (e.g. overloaded) inside a 200 stream is retried the same way when no text has been
  shown yet (`anthropic_wire.StatusError` with status 200).
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
from typing import Any, AsyncIterator, Mapping

from tui_agent.core.messages import Block, Message, assemble_content, clean_block
from tui_agent.core.providers.base import (
    ModelRequest,
    PromptTooLongError,
    ProviderError,
    ProviderEvent,
    StreamDone,
    StreamText,
    UsageInfo,
    with_notice,
)
from tui_agent.core.providers.models import DEFAULT_ANTHROPIC_MODEL
from tui_agent.core.providers.sdk import SdkProvider
from tui_agent.core.providers.retry import (
    RETRYABLE_STATUS,
    RetryableFailure,
    describe_status,
    one_line,
    with_retries,
)

EPHEMERAL = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
_TOO_LONG = re.compile(r"prompt is too long:\s*(\d+)\s*tokens\s*>\s*(\d+)\s*maximum", re.I)
# Blocks that may not carry cache_control (the API rejects it on thinking blocks).
_UNCACHEABLE = {"thinking", "redacted_thinking"}


@dataclass
class AnthropicProvider(SdkProvider):
    model: str = DEFAULT_ANTHROPIC_MODEL
    name: str = "anthropic"
    prompt_caching: bool = True
    key_variable: str = "ANTHROPIC_API_KEY"

    # -- request building -------------------------------------------------------------------
    def outbound_body(self, request: ModelRequest) -> dict[str, Any]:
        """The exact JSON body the next `stream(request)` would POST (`stream: true` included): for
        `--print-outbound`. The same request always gives the same body (no state moves)."""
        return {**self.build_params(request), "stream": True}

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The `messages.stream` keyword arguments, with cache breakpoints; `request` is never mutated.

        Breakpoints (at most 4): the last tool definition, the system prompt, the end of the part of the
        messages unchanged since the previous call (the cache written last time can be read there even
        when compaction changed later messages: `request.stable_prefix`, from the plan), and the last
        message (written now, read next call). Nothing about earlier calls is remembered here.
        """
        params: dict[str, Any] = {
            "model": request.model or self.model,
            "max_tokens": request.max_tokens or self.max_output_tokens,
            "messages": [dict(m) for m in request.messages],
        }
        cache = self.prompt_caching
        if request.system:
            block: Block = {"type": "text", "text": request.system}
            if cache:
                block["cache_control"] = dict(EPHEMERAL)
            params["system"] = [block]
        if request.tools:
            tools = [dict(t) for t in request.tools]
            if cache:
                tools[-1]["cache_control"] = dict(EPHEMERAL)
            params["tools"] = tools
        count = len(params["messages"])
        stable = request.stable_prefix
        if cache and count:
            used = ("system" in params) + ("tools" in params)
            targets = [count - 1]
            if 0 < stable < count:
                targets.insert(0, stable - 1)
            for index in targets[-(MAX_BREAKPOINTS - used):] if used < MAX_BREAKPOINTS else []:
                params["messages"][index] = _with_breakpoint(params["messages"][index])
        # The notice goes after the last breakpoint: never cached, so the next prefix is this one's.
        params["messages"] = with_notice(params["messages"], request.notice)
        return params

    # -- streaming --------------------------------------------------------------------------
    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        params = self.build_params(request)
        async for item in with_retries(lambda: self._attempt(params), self.retry, "Anthropic API"):
            yield item

    def _sdk(self) -> Any:
        """The HTTP client, created on first use (`anthropic_wire`: the SDK is not imported at all)."""
        if self._client is None:
            from tui_agent.core.providers.anthropic_wire import WireClient

            self._client = WireClient(self.api_key, self.base_url, self.timeout)
        return self._client

    def preload(self) -> None:
        import tui_agent.core.providers.anthropic_wire  # noqa: F401
        import httpx2  # noqa: F401 - what the first call imports; in a thread, after the TUI's first frame

    async def _attempt(self, params: dict[str, Any]) -> AsyncIterator[ProviderEvent]:
        """One HTTP request; raises `RetryableFailure` for retryable failures before any text was shown."""
        from tui_agent.core.providers.anthropic_wire import MessageBuilder, StatusError

        shown: list[str] = []
        client = self._sdk()
        builder = MessageBuilder()
        try:
            # `async with` inside `stream` closes the HTTP response on any exit, including cancellation (Esc).
            async for text in client.stream(params, builder):
                shown.append(text)
                yield StreamText(text)
            if not builder.stopped:
                raise _Dropped("the connection closed before the reply was complete")
        except StatusError as error:
            raise self._status_error(error, shown) from error
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as error:  # noqa: BLE001 - transport errors, malformed events, ...
            if isinstance(error, _Dropped) or _is_transport(error):
                if not shown:
                    connect = not isinstance(error, _Dropped) and client.is_connection_error(error)
                    raise RetryableFailure("connection failed" if connect else "connection dropped") from error
                raise ProviderError(
                    f"Connection to the Anthropic API dropped mid-reply ({one_line(error, 120)}).",
                    partial_text="".join(shown),
                ) from error
            reason = "a malformed event" if isinstance(error, (ValueError, KeyError, TypeError)) else type(error).__name__
            raise ProviderError(
                f"The Anthropic stream broke off ({reason}: {one_line(error, 120)}).",
                partial_text="".join(shown),
            ) from error
        final = builder.message
        yield StreamDone(message_from_response(final), final.get("stop_reason"), usage_from(final.get("usage")))

    def _status_error(self, error: Any, shown: list[str]) -> Exception:
        status = getattr(error, "status_code", None)
        kind = getattr(error, "type", None) or _error_type(error)
        message = one_line(getattr(error, "api_message", None) or _api_message(error) or error)
        headers = getattr(error, "headers", None)
        if status in (401, 403) or kind in ("authentication_error", "permission_error"):
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
        """Exact input tokens via `/v1/messages/count_tokens`; None where the endpoint is not offered."""
        from tui_agent.core.providers.anthropic_wire import StatusError

        params = self.build_params_for_count(request)
        client = self._sdk()
        try:
            return await client.count_tokens(params)
        except StatusError as error:
            if error.status_code == 404:
                return None  # an Anthropic-compatible server without the counting endpoint
            failure = self._status_error(error, [])
            if isinstance(failure, RetryableFailure):
                raise ProviderError(f"Token count failed: Anthropic API {failure.what}.") from error
            raise failure from error
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as error:  # noqa: BLE001 - a transport error, a body that is not JSON
            if _is_transport(error):
                raise ProviderError(f"Token count failed: {one_line(error, 120)}") from error
            raise ProviderError(f"Token count failed: {one_line(error, 120)}") from error

    def build_params_for_count(self, request: ModelRequest) -> dict[str, Any]:
        """Like `build_params` without caching or `max_tokens`."""
        params: dict[str, Any] = {"model": request.model or self.model, "messages": list(request.sent_messages)}
        if request.system:
            params["system"] = [{"type": "text", "text": request.system}]
        if request.tools:
            params["tools"] = list(request.tools)
        return params


class _Dropped(Exception):
    """The stream ended without `message_stop` (the HTTP body itself ended cleanly)."""


def _with_breakpoint(message: Message) -> Message:
    """A copy of `message` whose last cacheable block carries `cache_control` (no-op if none can)."""
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return message
        return {**message, "content": [{"type": "text", "text": content, "cache_control": dict(EPHEMERAL)}]}
    blocks = list(content or [])
    for i in range(len(blocks) - 1, -1, -1):
        block = blocks[i]
        if block.get("type") in _UNCACHEABLE or (block.get("type") == "text" and not block.get("text")):
            continue
        blocks[i] = {**block, "cache_control": dict(EPHEMERAL)}
        return {**message, "content": blocks}
    return message


def _is_transport(error: BaseException) -> bool:
    """httpx2 transport errors (refused, peer closed, read error, timeout) without importing httpx2 here."""
    return any(cls.__name__ in ("TransportError", "StreamError") for cls in type(error).__mro__)


def _api_message(error: Any) -> str | None:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if body.get("message"):
            return str(body["message"])
    return getattr(error, "message", None)


def _error_type(error: Any) -> str | None:
    body = getattr(error, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"].get("type")
    return None


def usage_from(usage: Mapping[str, Any] | None) -> UsageInfo:
    if not usage:
        return UsageInfo()
    return UsageInfo(
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        cache_creation_input_tokens=int(usage.get("cache_creation_input_tokens") or 0),
        cache_read_input_tokens=int(usage.get("cache_read_input_tokens") or 0),
    )


def block_from_response(block: Mapping[str, Any]) -> Block | None:
    """One streamed content block as an API-clean dict (None for an empty text block the API would refuse).

    Built field by field: keys such as `citations: None` (or whatever the stream adds to a block) are
    refused by the API when the block is sent back. Thinking blocks keep their signature verbatim.
    """
    kind = block.get("type")
    if kind == "text":
        text = block.get("text") or ""
        if not text.strip():
            return None  # blank text: the API refuses it when sent back
        out: Block = {"type": "text", "text": text}
        citations = [c for c in block.get("citations") or [] if c]
        if citations:
            out["citations"] = [{k: v for k, v in c.items() if v is not None} for c in citations]
        return out
    if kind == "tool_use":
        tool_input = block.get("input")
        return {"type": "tool_use", "id": block["id"], "name": block["name"],
                "input": tool_input if isinstance(tool_input, dict) else {}}
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.get("thinking", ""), "signature": block.get("signature", "")}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.get("data", "")}
    return clean_block({k: v for k, v in block.items() if v is not None})


def message_from_response(message: Mapping[str, Any]) -> Message:
    """The final assistant message as history wants it: plain dicts, API-clean keys, no blank text,
    unique tool_use ids, never empty."""
    content = [b for b in (block_from_response(block) for block in message.get("content") or []) if b is not None]
    return {"role": "assistant", "content": assemble_content(content)}
