"""One bounded way for tests to wait for something: poll a condition until it holds or time runs out.

A hand-rolled `while not got: await asyncio.sleep(...)` hangs the whole suite when the condition never
comes true; these fail with a message that says what was awaited (and what was last seen). The timeout
is a safety net against hangs, never a performance assertion.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

DEFAULT_TIMEOUT = 10.0


async def wait_until(
    condition: Callable[[], Any],
    *,
    what: str = "the condition",
    timeout: float = DEFAULT_TIMEOUT,
    interval: float = 0.005,
    task: asyncio.Task | None = None,
    shown: Callable[[], Any] | None = None,
) -> Any:
    """Await until `condition()` is truthy and return its value; fail after `timeout` seconds.

    `task`: the task whose progress is awaited; if it ends first, its outcome is reported at once.
    `shown`: what to include in the failure message (e.g. a captured screen).
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if task is not None and task.done():
            outcome = "cancelled" if task.cancelled() else repr(task.exception())
            raise AssertionError(f"gave up waiting for {what}: the task ended first ({outcome})")
        if time.monotonic() >= deadline:
            extra = f"; last seen:\n{shown()}" if shown is not None else ""
            raise AssertionError(f"gave up waiting for {what} after {timeout:g} s{extra}")
        await asyncio.sleep(interval)


def wait_until_sync(
    condition: Callable[[], Any],
    *,
    what: str = "the condition",
    timeout: float = DEFAULT_TIMEOUT,
    interval: float = 0.02,
    shown: Callable[[], Any] | None = None,
) -> Any:
    """`wait_until` for synchronous tests (subprocesses, tmux)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            extra = f"; last seen:\n{shown()}" if shown is not None else ""
            raise AssertionError(f"gave up waiting for {what} after {timeout:g} s{extra}")
        time.sleep(interval)
