"""Fixtures for the provider tests: fake servers that fail the test on any invalid request."""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest

from tests.turns import turn_events
from tests.fakes.fake_anthropic import FakeAnthropic
from tui_agent.core import events as ev
from tui_agent.core.providers.retry import RetryPolicy
from tui_agent.core.providers.sdk_lazy_import import import_sdk

# The SDK as the app imports it (issue 43: only what a call needs, `sdk_lazy_import.py`), before any test module
# imports it whole: every provider test runs on the same SDK modules a user's session does.
import_sdk()

FAST_RETRY = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.05)


@pytest.fixture
def fake_anthropic():
    fake = FakeAnthropic()
    with fake:
        yield fake
    assert fake.violations == [], "the fake API saw invalid requests"


@pytest.fixture
def fake_openai():
    from tests.fakes.fake_openai import FakeOpenAI

    fake = FakeOpenAI()
    with fake:
        yield fake
    assert fake.violations == [], "the fake API saw invalid requests"


async def collect(stream: AsyncIterator[Any]) -> list[Any]:
    return [item async for item in stream]


run = turn_events  # all events of one turn (permission prompts are not expected here)


def ended(events: list[Any]) -> ev.TurnEnded:
    last = events[-1]
    assert isinstance(last, ev.TurnEnded), last
    return last


def notices(events: list[Any]) -> list[str]:
    return [e.text for e in events if isinstance(e, ev.Notice)]
