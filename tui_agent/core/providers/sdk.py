"""What the SDK-backed providers share: a client created on first use, preloading, closing.

The vendor SDKs cost seconds to import, so nothing here imports them until a call (or `preload`, which
the TUI runs in a thread after its first frame) needs them. The SDK's own retries are off: `retry.py`
retries with a status the user can see.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, ClassVar

from tui_agent.core.providers.base import Provider
from tui_agent.core.providers.retry import RetryPolicy


@dataclass
class SdkProvider(Provider):
    api_key: str = field(default="", repr=False)  # never in reprs, logs or traces
    base_url: str | None = None
    reports_usage: bool = True
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    timeout: float = 600.0
    key_variable: str = ""  # named in the one-line message when the API rejects the key
    sdk_module: ClassVar[str] = ""
    client_class: ClassVar[str] = ""
    _client: Any = field(default=None, init=False, repr=False)

    def _sdk(self) -> Any:
        """The SDK client, created (and the SDK imported) on first use."""
        if self._client is None:
            module = importlib.import_module(self.sdk_module)
            self._client = getattr(module, self.client_class)(
                api_key=self.api_key, base_url=self.base_url, max_retries=0, timeout=self.timeout
            )
        return self._client

    def preload(self) -> None:
        importlib.import_module(self.sdk_module)  # about 2 s: in a thread, after the TUI's first frame

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()
