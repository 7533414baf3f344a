"""The 1-hour prompt cache (ENABLE_PROMPT_CACHING_1H=1, `--cache-1h`): every breakpoint asks for it, the
price model writes at 2x, and the cache clock counts an hour."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.fakes.fake_anthropic import text
from tests.providers.conftest import FAST_RETRY, collect
from tui_agent.core.cache_clock import cache_outlook
from tui_agent.core.messages import user_text
from tui_agent.core.prices import WRITE_1H, WRITE_5M, for_provider
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.providers.base import ModelRequest
from tui_agent.core.providers.config import provider_from_env


def _marks(body: dict) -> list[dict]:
    found: list[dict] = []

    def walk(value):
        if isinstance(value, dict):
            if "cache_control" in value:
                found.append(value["cache_control"])
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(body)
    return found


async def test_every_breakpoint_asks_for_an_hour(fake_anthropic):
    fake_anthropic.replies = [text("ok")]
    provider = AnthropicProvider(api_key="test-key", base_url=fake_anthropic.base_url, model="claude-fake-1",
                                 retry=FAST_RETRY, cache_ttl="1h")
    tools = [{"name": "Read", "description": "read", "input_schema": {"type": "object", "properties": {}}}]
    await collect(provider.stream(ModelRequest(model="claude-fake-1", system="s", tools=tools, max_tokens=64,
                                               messages=[user_text("a")])))
    await provider.aclose()
    marks = _marks(fake_anthropic.message_requests[0]["body"])
    assert len(marks) == 3 and all(m == {"type": "ephemeral", "ttl": "1h"} for m in marks)


def test_the_env_and_the_price_model():
    five = provider_from_env({"ANTHROPIC_API_KEY": "k"})
    hour = provider_from_env({"ANTHROPIC_API_KEY": "k", "ENABLE_PROMPT_CACHING_1H": "1"})
    assert (five.cache_ttl, hour.cache_ttl) == ("5m", "1h")
    assert for_provider(five).write == WRITE_5M and for_provider(hour).write == WRITE_1H == 2.0
    assert for_provider(hour).ttl_seconds == 3600
    # Ten idle minutes: the 5-minute cache is cold, the 1-hour one still warm (and the clock says an hour).
    assert cache_outlook(600, for_provider(five), 40_000, 0).cold
    warm = cache_outlook(600, for_provider(hour), 40_000, 0)
    assert not warm.cold and warm.seconds_left == 3000 and warm.cold_units == 40_000 * 2.0


def test_the_flag_reaches_the_wire_body(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "k", "HOME": str(tmp_path),
           "TUI_AGENT_CONFIG_DIR": str(tmp_path / "config"), "TUI_AGENT_DATA_DIR": str(tmp_path / "data")}
    out = subprocess.run([sys.executable, "-m", "tui_agent", "--cache-1h", "--print-outbound", "-p", "hello",
                          "-C", str(tmp_path)], env=env, capture_output=True, text=True, timeout=90,
                         stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    assert _marks(body) and all(m.get("ttl") == "1h" for m in _marks(body))
