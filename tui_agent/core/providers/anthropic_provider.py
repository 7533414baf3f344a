"""Claude through the official `anthropic` SDK: streaming, prompt caching, visible retries, exact counts.

The SDK is imported on the first call, never at module import: it costs about 2 s, and the TUI's first
frame must not pay for it. Constructing the provider is cheap.

Failure handling (each ends in a one-line `ProviderError` the loop can show):
- 408/409/429/5xx/529 and connection errors before any text arrived are retried here (the client has
  `max_retries=0`) so every wait is announced with a `StreamNotice`; `retry-after(-ms)` is honoured.
- An `event: error` (e.g. overloaded) inside a 200 stream is retried the same way when no text has been
  shown yet; the SDK raises it as a status-200 `APIStatusError` and would not retry it.
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
from typing import Any, AsyncIterator, ClassVar

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
    sdk_module: ClassVar[str] = "anthropic"
    client_class: ClassVar[str] = "AsyncAnthropic"

    # -- request building -------------------------------------------------------------------
    def outbound_body(self, request: ModelRequest) -> dict[str, Any]:
        """The exact JSON body the next `stream(request)` would POST (the SDK adds `stream: true`): for
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

    async def _attempt(self, params: dict[str, Any]) -> AsyncIterator[ProviderEvent]:
        """One HTTP request; raises `RetryableFailure` for retryable failures before any text was shown."""
        shown: list[str] = []
        client = self._sdk()
        import anthropic

        try:
            # `async with` closes the HTTP response on any exit, including cancellation (Esc).
            async with client.messages.stream(**params) as stream:
                stopped = False
                async for event in stream:
                    if event.type == "text" and event.text:
                        shown.append(event.text)
                        yield StreamText(event.text)
                    elif event.type == "message_stop":
                        stopped = True
                if not stopped:
                    raise _Dropped("the connection closed before the reply was complete")
                final = stream.current_message_snapshot
        except anthropic.APIStatusError as error:
            raise self._status_error(error, shown) from error
        except (anthropic.APIConnectionError, _Dropped) as error:
            if not shown:
                raise RetryableFailure("connection failed" if not isinstance(error, _Dropped) else "connection dropped") from error
            raise ProviderError(
                f"Connection to the Anthropic API dropped mid-reply ({one_line(error, 120)}).",
                partial_text="".join(shown),
            ) from error
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as error:  # noqa: BLE001 - httpx2 transport errors, malformed events, ...
            if not shown and _is_transport(error):
                raise RetryableFailure("connection dropped") from error
            reason = "a malformed event" if isinstance(error, ValueError) else type(error).__name__
            raise ProviderError(
                f"The Anthropic stream broke off ({reason}: {one_line(error, 120)}).",
                partial_text="".join(shown),
            ) from error
        yield StreamDone(message_from_response(final), final.stop_reason, usage_from(final.usage))

    def _status_error(self, error: Any, shown: list[str]) -> Exception:
        status = getattr(error, "status_code", None)
        kind = getattr(error, "type", None) or _error_type(error)
        message = one_line(getattr(error, "api_message", None) or _api_message(error) or error)
        headers = getattr(getattr(error, "response", None), "headers", None)
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
        return ProviderError(f"Anthropic API error {where}: {message}", partial_text="".join(shown),
                             retryable=retryable)

    # -- exact counting ---------------------------------------------------------------------
    async def count_tokens(self, request: ModelRequest) -> int | None:
        """Exact input tokens via `messages.count_tokens`; None where the endpoint is not offered."""
        params = self.build_params_for_count(request)
        client = self._sdk()
        import anthropic

        try:
            result = await client.messages.count_tokens(**params)
        except anthropic.NotFoundError:
            return None  # an Anthropic-compatible server without the counting endpoint
        except anthropic.APIStatusError as error:
            failure = self._status_error(error, [])
            if isinstance(failure, RetryableFailure):
                raise ProviderError(f"Token count failed: Anthropic API {failure.what}.", retryable=True) from error
            raise failure from error
        except anthropic.APIConnectionError as error:
            raise ProviderError(f"Token count failed: {one_line(error, 120)}", retryable=True) from error
        return int(result.input_tokens)

    def build_params_for_count(self, request: ModelRequest) -> dict[str, Any]:
        """Like `build_params` without caching or `max_tokens`."""
        params: dict[str, Any] = {"model": request.model or self.model, "messages": list(request.sent_messages)}
        if request.system:
            params["system"] = [{"type": "text", "text": request.system}]
        if request.tools:
            params["tools"] = list(request.tools)
        return params


class _Dropped(Exception):
    """The stream ended without `message_stop` (the SDK does not raise for this)."""


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
    """httpx2 transport errors (peer closed, read error) without importing httpx2 here."""
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


def usage_from(usage: Any) -> UsageInfo:
    if usage is None:
        return UsageInfo()
    return UsageInfo(
        input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
        output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
        cache_creation_input_tokens=int(getattr(usage, "cache_creation_input_tokens", 0) or 0),
        cache_read_input_tokens=int(getattr(usage, "cache_read_input_tokens", 0) or 0),
    )


def block_from_response(block: Any) -> Block | None:
    """One SDK content block as an API-clean dict (None for an empty text block the API would refuse).

    Built field by field: `model_dump()` would add keys such as `citations: None` or `parsed_output`
    that the API rejects when the block is sent back. Thinking blocks keep their signature verbatim.
    """
    kind = getattr(block, "type", None)
    if kind == "text":
        if not block.text.strip():
            return None  # blank text: the API refuses it when sent back
        out: Block = {"type": "text", "text": block.text}
        citations = getattr(block, "citations", None)
        if citations:
            out["citations"] = [c.model_dump(mode="json", exclude_none=True) for c in citations]
        return out
    if kind == "tool_use":
        tool_input = block.input if isinstance(block.input, dict) else {}
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": tool_input}
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    dumped = block.model_dump(mode="json", exclude_none=True) if hasattr(block, "model_dump") else dict(block)
    return clean_block(dumped)


def message_from_response(message: Any) -> Message:
    """The final assistant message as history wants it: plain dicts, API-clean keys, no blank text,
    unique tool_use ids, never empty."""
    content = [b for b in (block_from_response(block) for block in message.content) if b is not None]
    return {"role": "assistant", "content": assemble_content(content)}
