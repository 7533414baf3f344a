"""Model providers. Real SDK-backed providers are imported lazily (the SDKs take seconds to import)."""

from tui_agent.core.providers.base import (
    ModelRequest,
    PromptTooLongError,
    Provider,
    ProviderError,
    ProviderEvent,
    StreamDone,
    StreamNotice,
    StreamText,
    UsageInfo,
)

__all__ = [
    "ModelRequest",
    "PromptTooLongError",
    "Provider",
    "ProviderError",
    "ProviderEvent",
    "StreamDone",
    "StreamNotice",
    "StreamText",
    "UsageInfo",
]
