"""One answer of the model, streamed: continued while a server tool pauses it, kept once it was received.

`pause_turn` means the server paused a long server-tool loop (a web search, code execution) and the answer
is not finished. The Messages API asks for the reply to be sent back as it is, as the last (assistant)
message of the same request, and the model goes on from there; consecutive assistant turns are one turn
to it. So the continuation's blocks are joined to the paused ones into one answer, at most
`MAX_CONTINUATIONS` times (then what came is kept, and the loop leaves a server call without its result out
of history with a notice). History never holds a paused reply on its own.

An answer the provider delivered whole (`StreamDone`) is the model's answer: a failure after it (the
stream's teardown, a late event) is a warning, never a failed turn that would lose or disown it.

The provider's `StreamDone.stop_reason` is all this reads, so it holds whichever client carries the call.
"""

from __future__ import annotations

from dataclasses import replace
from typing import AsyncIterator, Literal

from tui_agent.core import events as ev
from tui_agent.core.messages import blocks, clean_message
from tui_agent.core.providers.base import (
    ModelRequest,
    PromptTooLongError,
    Provider,
    ProviderEvent,
    StreamDone,
    StreamNotice,
    StreamText,
    UsageInfo,
)

MAX_CONTINUATIONS = 5
PAUSE_TURN = "pause_turn"


async def stream_answer(provider: Provider, request: ModelRequest, partial: list[str]) -> AsyncIterator[ProviderEvent]:
    """The provider's events for `request` (text also collected in `partial`), ending with one `StreamDone`
    that holds the whole answer: a paused answer's parts joined, with the usage of the planned request
    (what calibrates the estimates) and the output tokens of every part."""
    done: StreamDone | None = None
    first_usage: UsageInfo | None = None
    parts: list[dict] = []
    output_tokens = 0
    call = request
    for attempt in range(MAX_CONTINUATIONS + 1):
        if attempt:  # the planned request as sent (its notice closing the prompt), then the reply so far
            paused = clean_message({"role": "assistant", "content": parts})
            call = replace(request, messages=[*request.sent_messages, paused], notice="")
        done = None
        async for item in _one_stream(provider, call, partial):
            if isinstance(item, StreamDone):
                done = item
            else:
                yield item
        if done is None:
            return  # (the loop reports a stream that ended without an answer)
        parts += blocks(done.message)
        output_tokens += _output_tokens(done.usage)
        first_usage = done.usage if attempt == 0 else first_usage
        if done.stop_reason != PAUSE_TURN:
            break
        if attempt == MAX_CONTINUATIONS:
            yield StreamNotice(f"The server paused this answer {MAX_CONTINUATIONS + 1} times; it is kept as it "
                               "stands (send another prompt to go on).", "warning")
            break
    assert done is not None
    if attempt == 0:
        yield done
        return
    usage = None if first_usage is None else replace(first_usage, output_tokens=output_tokens)
    yield StreamDone({**done.message, "content": parts}, done.stop_reason, usage, done.server)


async def _one_stream(provider: Provider, request: ModelRequest, partial: list[str]) -> AsyncIterator[ProviderEvent]:
    """One call's events; a failure after its `StreamDone` becomes a warning notice."""
    received = False
    try:
        async for item in provider.stream(request):
            if isinstance(item, StreamText):
                partial.append(item.text)
            received = received or isinstance(item, StreamDone)
            yield item
    except PromptTooLongError:
        raise
    except Exception as error:  # noqa: BLE001 - the answer already came whole: keep it, say what failed
        if not received:
            raise
        yield StreamNotice(f"The answer came whole, then the stream failed ({type(error).__name__}: {error}); "
                           "the answer is kept.", "warning")


def _output_tokens(usage: UsageInfo | None) -> int:
    value = getattr(usage, "output_tokens", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_event(call: int, usage: UsageInfo, purpose: Literal["call", "summary"] = "call") -> ev.Usage:
    """The engine event for a call's (checked) usage: every count the API reported, the hour's writes too."""
    return ev.Usage(call, usage.input_tokens, usage.output_tokens, usage.cache_creation_input_tokens,
                    usage.cache_read_input_tokens, purpose, usage.cache_write_1h)


def checked_usage(usage: UsageInfo) -> tuple[UsageInfo | None, str | None]:
    """`usage` with whole-number fields, or (None, why) when a field is not a number: the answer it came
    with is already in history and shown, so a usage the engine cannot read costs a warning, not the turn."""
    fields = {}
    for name in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                 "cache_write_1h"):
        value = getattr(usage, name, 0)
        if value is None:
            value = 0
        try:
            if isinstance(value, bool):
                raise ValueError
            number = int(value) if isinstance(value, int) else int(float(value))
        except (TypeError, ValueError, OverflowError):
            return None, f"The API's token usage for this call is unreadable ({name}={str(value)[:40]!r}); not counted."
        if number < 0:
            return None, f"The API's token usage for this call is unreadable ({name}={number}); not counted."
        fields[name] = number
    return UsageInfo(**fields), None
