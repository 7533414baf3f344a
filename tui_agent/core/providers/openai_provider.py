"""OpenAI-compatible chat completions (DeepSeek, Ollama, llama.cpp, vLLM) through the `openai` SDK.

History stays in Anthropic Messages shape; this module converts at its edge, both ways:
- out: the system prompt becomes a `system` message; an assistant message keeps its text *and* its
  tool_calls (the seed dropped the text); a user message's tool_results become `tool` messages placed
  first (right after the assistant that asked), then its text as a `user` message; tool definitions are
  sent with their full JSON schemas (the seed dropped booleans, enums and arrays);
- in: streamed content deltas are shown as they arrive, fragmented tool_calls are assembled by index,
  usage comes from the final chunk (`stream_options.include_usage`), finish_reason maps to stop_reason.

The SDK is imported on the first call. Failures are handled like the Anthropic provider's: visible
retries before any text, partial text kept after, `PromptTooLongError` for context-length errors, and
401/403 naming `OPENAI_API_KEY`.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, ClassVar

from tui_agent.core.messages import Block, Message, assemble_content, blocks, result_text
from tui_agent.core.providers.base import (
    ModelRequest,
    PromptTooLongError,
    ProviderError,
    ProviderEvent,
    StreamDone,
    StreamText,
    UsageInfo,
)
from tui_agent.core.models import DEFAULT_OPENAI_BASE_URL, DEFAULT_OPENAI_MODEL
from tui_agent.core.providers.sdk import SdkProvider
from tui_agent.core.providers.retry import (
    RETRYABLE_STATUS,
    RetryableFailure,
    describe_status,
    one_line,
    with_retries,
)

STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens",
                "content_filter": "refusal"}
_CONTEXT = re.compile(
    r"maximum context length is (\d+) tokens.*?(?:resulted in|requested|you requested) (\d+) tokens", re.I | re.S
)
_CONTEXT_HINTS = ("context_length_exceeded", "maximum context length", "context length", "too many tokens",
                  "exceeds the context", "prompt is too long")


# -- conversion out ------------------------------------------------------------------------------
def to_openai_messages(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    """Anthropic-shaped history → chat completion messages (never mutates the input)."""
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for message in messages:
        content = blocks(message)
        if message.get("role") == "assistant":
            text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
            calls = [
                {"id": b["id"], "type": "function",
                 "function": {"name": b["name"], "arguments": json.dumps(b.get("input") or {}, ensure_ascii=False)}}
                for b in content if b.get("type") == "tool_use"
            ]
            converted: dict[str, Any] = {"role": "assistant", "content": text if (text or not calls) else None}
            if calls:
                converted["tool_calls"] = calls
            out.append(converted)
            continue
        for block in content:
            if block.get("type") == "tool_result":
                text = result_text(block)
                if _has_images(block):
                    text += "\n[image omitted: this endpoint receives text only]"
                if block.get("is_error") and not text.startswith("Error"):
                    text = f"Error: {text}"
                out.append({"role": "tool", "tool_call_id": block.get("tool_use_id", ""), "content": text})
        parts = [b for b in content if b.get("type") in ("text", "image")]
        if any(b.get("type") == "image" for b in parts):
            out.append({"role": "user", "content": [_image_or_text_part(b) for b in parts]})
        elif parts:
            out.append({"role": "user", "content": "".join(b.get("text", "") for b in parts)})
    return out


def _has_images(block: Block) -> bool:
    inner = block.get("content")
    return isinstance(inner, list) and any(isinstance(b, dict) and b.get("type") == "image" for b in inner)


def _image_or_text_part(block: Block) -> dict[str, Any]:
    if block.get("type") == "text":
        return {"type": "text", "text": block.get("text", "")}
    source = block.get("source") or {}
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    else:
        url = source.get("url", "")
    return {"type": "image_url", "image_url": {"url": url}}


def to_openai_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic tool definitions → function tools, with the full JSON schema as `parameters`."""
    return [
        {"type": "function", "function": {
            "name": tool["name"],
            "description": tool.get("description", ""),
            "parameters": tool.get("input_schema") or {"type": "object", "properties": {}},
        }}
        for tool in tools
    ]


# -- conversion in -------------------------------------------------------------------------------
@dataclass
class StreamAssembler:
    """Accumulates streamed chunks into one Anthropic-shaped assistant message."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: UsageInfo | None = None

    def feed(self, chunk: Any) -> str:
        """Take one chunk; return its new text (possibly empty)."""
        if getattr(chunk, "usage", None) is not None:
            self.usage = usage_from(chunk.usage)
        new = ""
        for choice in (getattr(chunk, "choices", None) or [])[:1]:
            delta = getattr(choice, "delta", None)
            if delta is not None:
                if getattr(delta, "content", None):
                    new = delta.content
                    self.text.append(new)
                for position, call in enumerate(getattr(delta, "tool_calls", None) or []):
                    index = call.index if getattr(call, "index", None) is not None else position
                    slot = self.calls.setdefault(index, {"id": None, "name": "", "arguments": []})
                    if getattr(call, "id", None):
                        slot["id"] = call.id
                    function = getattr(call, "function", None)
                    if function is not None:
                        if getattr(function, "name", None):
                            slot["name"] = function.name
                        if getattr(function, "arguments", None):
                            slot["arguments"].append(function.arguments)
            if getattr(choice, "finish_reason", None):
                self.finish_reason = choice.finish_reason
        return new

    def message(self) -> Message:
        content: list[Block] = []
        text = "".join(self.text)
        content.append({"type": "text", "text": text})  # kept beside tool_calls (the seed dropped it)
        for index in sorted(self.calls):
            slot = self.calls[index]
            content.append({
                "type": "tool_use",
                "id": slot["id"] or f"call_{uuid.uuid4().hex[:16]}",
                "name": slot["name"],
                "input": parse_arguments("".join(slot["arguments"])),
            })
        # Blank text dropped; repeated ids (some servers number calls `call_0` in every reply) renamed.
        return {"role": "assistant", "content": assemble_content(content)}

    def stop_reason(self) -> str | None:
        if self.finish_reason == "length":
            return "max_tokens"  # even with tool calls: the last one may be cut off (the loop won't run it)
        if self.calls:
            return "tool_use"
        return STOP_REASONS.get(self.finish_reason or "", self.finish_reason)


def parse_arguments(raw: str) -> dict[str, Any]:
    """Tool-call arguments as an object; empty, invalid or non-object JSON becomes {} (input validation
    then tells the model which field is missing)."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def usage_from(usage: Any) -> UsageInfo:
    """OpenAI usage → Anthropic semantics: `input_tokens` excludes the cached part (reported separately)."""
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    cached = cached or int(getattr(usage, "prompt_cache_hit_tokens", 0) or 0)  # DeepSeek's field
    return UsageInfo(
        input_tokens=max(prompt - cached, 0),
        output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cache_read_input_tokens=cached,
    )


# -- the provider --------------------------------------------------------------------------------
@dataclass
class OpenAIProvider(SdkProvider):
    base_url: str = DEFAULT_OPENAI_BASE_URL
    model: str = DEFAULT_OPENAI_MODEL
    name: str = "openai"
    key_variable: str = "OPENAI_API_KEY"
    sdk_module: ClassVar[str] = "openai"
    client_class: ClassVar[str] = "AsyncOpenAI"
    _usage_option: bool = field(default=True, init=False, repr=False)

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": request.model or self.model,
            "messages": to_openai_messages(request.system, request.sent_messages),
            "stream": True,
        }
        if request.max_tokens:
            params["max_tokens"] = request.max_tokens
        if request.tools:
            params["tools"] = to_openai_tools(request.tools)
        if self._usage_option:
            params["stream_options"] = {"include_usage": True}
        return params

    def outbound_body(self, request: ModelRequest) -> dict[str, Any]:
        return self.build_params(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        params = self.build_params(request)
        async for item in with_retries(lambda: self._attempt(params), self.retry, f"Model endpoint ({self.base_url})"):
            yield item

    async def _attempt(self, params: dict[str, Any]) -> AsyncIterator[ProviderEvent]:
        shown: list[str] = []
        assembler = StreamAssembler()
        client = self._sdk()
        import openai

        try:
            stream = await client.chat.completions.create(**params)
            # `async with` closes the HTTP response on any exit, including cancellation (Esc).
            async with stream:
                async for chunk in stream:
                    piece = assembler.feed(chunk)
                    if piece:
                        shown.append(piece)
                        yield StreamText(piece)
        except openai.APIStatusError as error:
            if self._usage_option and error.status_code in (400, 422) and "stream_options" in str(error):
                # An older server that rejects `stream_options`: ask again without usage.
                self._usage_option = False
                params.pop("stream_options", None)
                raise RetryableFailure("endpoint does not accept stream_options") from error
            raise self._status_error(error, shown) from error
        except openai.APIConnectionError as error:
            if not shown:
                raise RetryableFailure("connection failed") from error
            raise ProviderError(f"Connection to the model endpoint dropped mid-reply ({one_line(error, 120)}).",
                                partial_text="".join(shown)) from error
        except openai.APIError as error:  # an error object inside the stream (HTTP 200)
            if not shown:
                raise RetryableFailure(f"stream error ({one_line(error.message, 80)})") from error
            raise ProviderError(f"The model endpoint reported an error mid-reply: {one_line(error.message)}",
                                partial_text="".join(shown)) from error
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as error:  # noqa: BLE001 - malformed chunks, transport errors
            reason = "a malformed event" if isinstance(error, ValueError) else type(error).__name__
            raise ProviderError(f"The model stream broke off ({reason}: {one_line(error, 120)}).",
                                partial_text="".join(shown)) from error
        if assembler.finish_reason is None:
            if not shown and not assembler.calls:
                raise RetryableFailure("connection dropped")
            raise ProviderError("Connection to the model endpoint closed before the reply was complete.",
                                partial_text="".join(shown))
        yield StreamDone(assembler.message(), assembler.stop_reason(), assembler.usage)

    def _status_error(self, error: Any, shown: list[str]) -> Exception:
        status = getattr(error, "status_code", None)
        message = one_line(_api_message(error) or error)
        headers = getattr(getattr(error, "response", None), "headers", None)
        if status in (401, 403):
            verb = "rejected the API key" if status == 401 else "refused access"
            return ProviderError(f"The model endpoint {verb} ({status}: {message}). Set {self.key_variable} "
                                 f"to a valid key for {self.base_url}.")
        lowered = f"{message} {getattr(error, 'code', '') or ''}".lower()
        if status in (400, 413) and any(hint in lowered for hint in _CONTEXT_HINTS):
            found = _CONTEXT.search(message)
            maximum, tokens = (int(found.group(1)), int(found.group(2))) if found else (None, None)
            return PromptTooLongError(message, tokens, maximum)
        if status in RETRYABLE_STATUS and not shown:
            return RetryableFailure(describe_status(status), headers)
        if status == 404:
            return ProviderError(f"Model endpoint: {message} (check OPENAI_MODEL / --model and OPENAI_BASE_URL).")
        return ProviderError(f"Model endpoint error ({status}): {message}", partial_text="".join(shown))


def _api_message(error: Any) -> str | None:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner: dict = body["error"] if isinstance(body.get("error"), dict) else body
        if inner.get("message"):
            return str(inner["message"])
    return getattr(error, "message", None)
