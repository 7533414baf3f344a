"""How Claude calls travel: the `anthropic` SDK's client, made on first use, imported early off the
critical path, and what it does not say clearly on its own.

- The whole import costs 1.5–2.3 s (about 3,300 modules); only what a call needs is imported
  (`sdk_lazy_import.py`: about 1,500, half the time), in a thread `background_import.py` starts: the TUI after
  its first frame (`preload`), `-p` at process start, in parallel with the rest of start-up; the first call
  (or `preload`) then only waits for what is left of it, and takes the HTTP client that thread made.
- The client is built with `max_retries=0` (retry.py retries with a notice the user sees) and with
  redirects not followed: the key is never sent on to wherever a 3xx points, and the user is told.
- A 3xx and a 200 that is not an event stream (a proxy answering JSON or HTML) are reported in one line
  naming what came back and ANTHROPIC_BASE_URL: retrying either gets the same answer.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from tui_agent.core.providers.base import ProviderError

from tui_agent.core.providers.background_import import wait_for_import

DEFAULT_BASE_URL = "https://api.anthropic.com"

def base_url_of(base_url: str | None) -> str:
    """The endpoint in use, as the SDK picks it (argument, then ANTHROPIC_BASE_URL, then the default)."""
    return (base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def make_client(api_key: str, base_url: str | None, timeout: float) -> Any:
    """The SDK's async client: our retries, our redirect rule, the SDK's headers and User-Agent."""
    wait_for_import()
    import anthropic

    # The SDK's accumulation re-dumps a message whose usage came as strings (usage_from reads such counts
    # as 0): no pydantic warning painted over the screen or mixed into -p's stderr.
    warnings.filterwarnings("ignore", message="Pydantic serializer warnings", category=UserWarning)

    from tui_agent.core.providers.sdk_lazy_import import take_http_client

    http_client = take_http_client() or anthropic.DefaultAsyncHttpxClient(follow_redirects=False)
    return anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout,
                                    http_client=http_client)


def redirect_error(status: int, headers: Mapping[str, str] | None, base_url: str | None) -> ProviderError:
    from tui_agent.core.providers.base import ProviderError
    from tui_agent.core.providers.retry import one_line

    where = (headers or {}).get("location") or "no Location header"
    return ProviderError(
        f"The Anthropic endpoint answered a redirect ({status} to {one_line(where, 120)}), which is not followed "
        f"(the key would go with it): check ANTHROPIC_BASE_URL ({base_url_of(base_url)}).")


def not_a_stream_error(content_type: str, base_url: str | None) -> ProviderError | None:
    """The one-line error for a 200 that is not `text/event-stream` (None when it is one)."""
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind in ("text/event-stream", "application/vnd.amazon.eventstream"):  # Bedrock frames its events
        return None
    from tui_agent.core.providers.base import ProviderError

    return ProviderError(
        f"The Anthropic endpoint answered {kind or 'no content type'} instead of an event stream "
        f"(a proxy or a wrong path?): check ANTHROPIC_BASE_URL ({base_url_of(base_url)}).")


def sendable(params: dict[str, Any]) -> dict[str, Any]:
    """`params` as they can go out: the SDK sends UTF-8 JSON, which a lone surrogate (undecodable bytes a
    tool kept) cannot be; only then is a copy made with each lone surrogate replaced by U+FFFD, instead
    of failing the call. The provider calls this when the SDK refused to encode (never on the hot path);
    `--print-outbound` shows the same copy."""
    try:
        json.dumps(params, ensure_ascii=False).encode("utf-8")
        return params
    except UnicodeEncodeError:
        return _replace_surrogates(params)


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {k: _replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    return value


def is_transport(error: BaseException) -> bool:
    """A failure of the connection itself (refused, reset, closed early, timed out), whatever the SDK
    version wraps it in: the SDK's connection error or its HTTP library's transport and stream errors.
    Whether it came before or after the response is the caller's to tell (it saw what arrived)."""
    import anthropic
    import httpx2

    return isinstance(error, (anthropic.APIConnectionError, httpx2.TransportError, httpx2.StreamError))
