"""The provider contract: one streamed model call in, text deltas and one final message out.

Providers speak Anthropic Messages API dicts on both sides (an OpenAI-compatible provider converts at
its own edge). Errors a user can act on are raised as `ProviderError` with a one-line message.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, ClassVar, Union

from tui_agent.core.messages import Message, UsageInfo  # noqa: F401  (UsageInfo: named here by the providers)
from tui_agent.core.providers.server_report import ServerReport


@dataclass(frozen=True)
class ModelRequest:
    """One model call as the engine planned it (`core/agent/call.py`).

    `stable_prefix` is how many leading messages are the same as in the previous request of this
    session (the compaction plan knows it: `CompactPlan.cached_messages`). A provider that caches puts
    its breakpoint there from the request alone, so it keeps no memory of earlier calls of its own and a
    resumed session places its breakpoints exactly as the old process would have.

    `notice` is outbound-only text for the model (`core/agent/context_notice.py`): providers send it as a last
    text block of the last message, after their cache breakpoints (`sent_messages`), so it never moves
    the cached prefix and never enters the history.
    """

    model: str
    system: str
    messages: list[Message]
    tools: list[dict[str, Any]]
    max_tokens: int
    stable_prefix: int = 0
    notice: str = ""
    # The API's own context management (`--compact server-clear` / `server-compact`): sent as it is.
    context_management: dict[str, Any] | None = None
    # The previous answer's message id: the cache-diagnosis beta compares that request's prefix with this one.
    previous_message_id: str = ""

    @property
    def sent_messages(self) -> list[Message]:
        """The messages as sent: `messages`, with the notice (if any) closing the last one."""
        return with_notice(self.messages, self.notice)


def with_notice(messages: list[Message], notice: str) -> list[Message]:
    """`messages` with `notice` as a final text block of the last message (a copy; the input is untouched).
    A provider places its cache breakpoints first and calls this after, so the notice is never cached."""
    if not notice or not messages:
        return messages
    last = messages[-1]
    content = last.get("content")
    parts = [{"type": "text", "text": content}] if isinstance(content, str) and content else list(content or [])
    return [*messages[:-1], {**last, "content": [*parts, {"type": "text", "text": notice}]}]


@dataclass(frozen=True)
class StreamText:
    text: str


@dataclass(frozen=True)
class StreamNotice:
    """Status the user should see while waiting (e.g. "rate limited, retrying in 2 s")."""

    text: str
    level: str = "warning"


@dataclass(frozen=True)
class StreamDone:
    """The complete assistant message (API-clean keys only) and what the API said about it."""

    message: Message
    stop_reason: str | None = None
    usage: UsageInfo | None = None
    server: ServerReport | None = None  # what the server did on its own (edits, compaction, cache miss)


ProviderEvent = Union[StreamText, StreamNotice, StreamDone]


@dataclass(frozen=True)
class Pinged:
    """What one ping did (`Provider.ping`, keep-warm): its usage (what it read and wrote), the `max_tokens` it went with, the server's
    line when it refused `max_tokens: 0` first (then the ping went in the smallest form it takes), and the
    API's `cache_miss_reason` for the ping when the cache diagnosis named one."""

    usage: UsageInfo
    max_tokens: int = 0
    refused: str = ""
    cache_miss: str = ""


class ProviderError(Exception):
    """A model-call failure with a message fit for one line on the screen."""

    def __init__(self, message: str, *, partial_text: str = "") -> None:
        super().__init__(message)
        self.partial_text = partial_text


class PromptTooLongError(ProviderError):
    """The API refused the prompt as too long; the loop compacts harder and retries once."""

    def __init__(self, message: str, tokens: int | None = None, maximum: int | None = None) -> None:
        super().__init__(message)
        self.tokens = tokens
        self.maximum = maximum


@dataclass
class Provider(ABC):
    """A model endpoint. `context_window` and `max_output_tokens` feed the budget panel.

    What the engine may ask of one beyond a call is declared here, off by default, so a new provider turns on
    what it has and nothing reads a capability it never declared (`tests/test_extension_points.py`)."""

    model: str = "demo"
    context_window: int = 200_000
    max_output_tokens: int = 8192
    name: str = "provider"
    manages_context: ClassVar[bool] = False  # sends the API's `context_management` (the server strategies)
    can_ping: ClassVar[bool] = False  # `ping()` sends a request again only to read its cached prefix (keep-warm)
    reports_usage: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    # keyword-only: a subclass's own fields keep their places
    prompt_caching: bool = field(default=False, kw_only=True)  # marks a cached prefix (cache breakpoints)
    cache_ttl: str = field(default="5m", kw_only=True)  # "1h": the 1-hour cache (writes at 2x), priced so
    thinking_budget: int = field(default=0, kw_only=True)  # > 0: extended thinking with this many tokens

    @abstractmethod
    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """Yield `StreamText` as text arrives and exactly one `StreamDone` at the end."""

    def preload(self) -> None:
        """Import what the first call needs (an SDK takes seconds) ahead of time. The TUI calls this
        from a thread after its first frame, so it must only import, never touch the event loop."""
        return None

    def outbound_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body this provider would send for `request` (`--print-outbound`). Providers with a
        wire format of their own override it; the default is the Messages API shape of the request."""
        body: dict[str, Any] = {"model": request.model or self.model, "max_tokens": request.max_tokens,
                                "messages": request.sent_messages}
        if request.system:
            body["system"] = request.system
        if request.tools:
            body["tools"] = request.tools
        return body

    async def count_tokens(self, request: ModelRequest) -> int | None:
        """Exact input tokens for `request` where the API can count them; None otherwise."""
        return None

    async def count_edited(self, request: ModelRequest) -> tuple[int, int] | None:
        """(tokens after the server's `context_management` edits, before them) where the API can say; None."""
        return None

    async def ping(self, request: ModelRequest, zero: bool = True) -> "Pinged":
        """`request` sent again only to read its cached prefix, with `max_tokens: 0` (`zero`) or the smallest
        form the endpoint takes; only where `can_ping`."""
        raise ProviderError(f"{self.name} cannot ping")

    async def aclose(self) -> None:
        return None
