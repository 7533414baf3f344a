"""What an Anthropic failure means: an SDK status error read into the one line the loop shows, or into
`RetryableFailure` (retried with a notice) or `PromptTooLongError` (the loop compacts harder).

Its own concept because it is a reading, not a call: the same classification serves a streamed reply and
an exact count (`anthropic_provider.py`), and which variable to fix depends only on where the call went
(the API's key, a cloud platform's credentials, ANTHROPIC_BASE_URL), never on how far the stream got
beyond whether text was already shown.
"""

from __future__ import annotations

import re
from typing import Any

from tui_agent.core.providers.anthropic_transport import redirect_error
from tui_agent.core.providers.base import PromptTooLongError, ProviderError
from tui_agent.core.providers.cloud import CloudSettings
from tui_agent.core.providers.retry import RETRYABLE_STATUS, RetryableFailure, describe_status, one_line

_TOO_LONG = re.compile(r"prompt is too long:\s*(\d+)\s*tokens\s*>\s*(\d+)\s*maximum", re.I)


def status_error(error: Any, shown: list[str], *, base_url: str | None, key_variable: str,
                 cloud: CloudSettings | None) -> Exception:
    """The exception an SDK status error stands for; `shown`: the text already streamed (none: retryable)."""
    status = getattr(error, "status_code", None)
    kind = _error_type(error) or getattr(error, "type", None)
    message = one_line(_api_message(error) or error)
    headers = getattr(getattr(error, "response", None), "headers", None)
    if status is not None and 300 <= status < 400:
        return redirect_error(status, headers, base_url)
    if status in (401, 403) or kind in ("authentication_error", "permission_error"):
        if cloud is not None:
            verb = "rejected the credentials" if status == 401 else "refused access"
            return ProviderError(f"{cloud.label} {verb} ({status}: {message}). "
                                 f"Check {cloud.credentials_hint}.")
        verb = "rejected the API key" if status == 401 else "refused access"
        return ProviderError(
            f"Anthropic {verb} ({status}: {message}). Set {key_variable} to a valid key."
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
