"""Retry policy shared by the SDK-backed providers: which failures to retry, how long to wait, what to say.

The SDKs can retry on their own, but silently; a user watching a frozen spinner during a 529 storm needs
to see "overloaded (529), retrying in 2 s (attempt 2 of 4)". So the clients are built with
`max_retries=0` and the providers loop here, honouring `retry-after-ms` / `retry-after`.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Mapping

from tui_agent.core.providers.base import ProviderError, ProviderEvent, StreamNotice

RETRYABLE_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}

_STATUS_WORDS = {
    408: "request timed out",
    409: "conflict",
    429: "rate limited",
    500: "server error",
    502: "bad gateway",
    503: "service unavailable",
    504: "gateway timeout",
    529: "overloaded",
}


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0

    def delay(self, attempt: int, headers: Mapping[str, str] | None) -> float:
        """Seconds to wait before retry number `attempt` (1-based): the server's hint, else backoff."""
        hinted = retry_after(headers)
        if hinted is not None:
            return min(max(hinted, 0.0), self.max_delay)
        backoff = min(self.base_delay * (2 ** (attempt - 1)), self.max_delay)
        return backoff * (1 - 0.25 * random.random())


def retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """The server's wait in seconds: `retry-after-ms`, else `retry-after` as seconds or as an HTTP date
    (RFC 9110 allows both; a proxy may send the date, and waiting 0.5 s instead of 5 s gets a 429 again)."""
    if not headers:
        return None
    try:
        raw_ms = headers.get("retry-after-ms")
        if raw_ms is not None:
            return float(raw_ms) / 1000
        raw = headers.get("retry-after")
        if raw is None:
            return None
        try:
            return float(raw)
        except ValueError:
            from email.utils import parsedate_to_datetime  # rare: only a date needs the email package

            when = parsedate_to_datetime(raw)
        return when.timestamp() - (time.time() if now is None else now)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def describe_status(status: int | None, kind: str | None = None) -> str:
    """"overloaded (529)" / "rate limited (429)": the words the retry notice and final error use."""
    if kind == "overloaded_error":
        return f"overloaded ({status if status and status != 200 else 529})"
    if status is None:
        return "connection error"
    if status == 200:
        return f"stream error ({kind or 'unknown'})"
    return f"{_STATUS_WORDS.get(status, 'error')} ({status})"


def retry_notice(what: str, delay: float, attempt: int, policy: RetryPolicy) -> str:
    wait = f"{delay:.1f} s" if delay < 10 else f"{delay:.0f} s"
    return f"{what}, retrying in {wait} (retry {attempt} of {policy.max_retries})…"


def one_line(text: Any, limit: int = 300) -> str:
    """Collapse an error message to one screen line."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class RetryableFailure(Exception):
    """Raised by one attempt that failed before showing any text, in a way worth retrying."""

    def __init__(self, what: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.headers = headers


async def with_retries(
    attempt: Callable[[], AsyncIterator[ProviderEvent]], policy: RetryPolicy, service: str
) -> AsyncIterator[ProviderEvent]:
    """Run `attempt` until it finishes; announce each wait; give up with one clear line.

    Only failures before any text was shown are retried (the attempt decides), so a retry never
    repeats text the user already saw.
    """
    retries = 0
    while True:
        try:
            async for item in attempt():
                yield item
            return
        except RetryableFailure as failure:
            retries += 1
            if retries > policy.max_retries:
                raise ProviderError(
                    f"{service} {failure.what}; gave up after {policy.max_retries} retries. Try again in a moment.",
                ) from failure
            delay = policy.delay(retries, failure.headers)
            yield StreamNotice(retry_notice(failure.what, delay, retries, policy))
            await asyncio.sleep(delay)
