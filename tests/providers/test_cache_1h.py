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
from tui_agent.core.models import WRITE_1H, WRITE_5M, for_provider
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


async def test_hour_writes_are_read_from_the_usage_and_priced_twice_the_input(fake_anthropic):
    """The API splits the writes by TTL (`usage.cache_creation`); an hour's write costs 2x the input, so the
    dollar line must not price it as a 5-minute write (1.25x)."""
    from tui_agent.core.providers.base import StreamDone, UsageInfo
    from tui_agent.core.models import cost_usd

    fake_anthropic.replies = [text("ok")]
    provider = AnthropicProvider(api_key="test-key", base_url=fake_anthropic.base_url, model="claude-sonnet-4-5",
                                 retry=FAST_RETRY, cache_ttl="1h")
    items = await collect(provider.stream(ModelRequest(model="claude-sonnet-4-5", system="s " * 600, tools=[], max_tokens=64,
                                                       messages=[user_text("a")])))
    await provider.aclose()
    usage = next(i for i in items if isinstance(i, StreamDone)).usage
    assert usage.cache_creation_input_tokens > 0 and usage.cache_write_1h == usage.cache_creation_input_tokens
    five = UsageInfo(0, 0, 1_000_000, 0)
    hour = UsageInfo(0, 0, 1_000_000, 0, cache_write_1h=1_000_000)
    assert cost_usd("claude-sonnet-4-5", five) == 3.0 * 1.25 and cost_usd("claude-sonnet-4-5", hour) == 3.0 * 2


def test_a_session_on_the_hour_cache_prices_and_journals_its_writes(tmp_path):
    """-p on the 1-hour cache against the fake: the journal keeps the hour writes and the dollar figure
    prices them at 2x; a resume reads them back."""
    from tests.fakes.fake_anthropic import FakeAnthropic
    from tests.e2e.conftest import cli_env
    from tui_agent.core.journal.reader import read_journal
    from tui_agent.core.providers.base import UsageInfo
    from tui_agent.core.models import cost_usd

    workspace = tmp_path / "ws"
    workspace.mkdir()
    with FakeAnthropic([text("Done.")]) as fake:
        env = cli_env(tmp_path, fake, ENABLE_PROMPT_CACHING_1H="1", ANTHROPIC_MODEL="claude-sonnet-4-5",
                      TUI_AGENT_DATA_DIR=str(tmp_path / "data"))
        done = subprocess.run([sys.executable, "-m", "tui_agent", "-p", "hello"], cwd=workspace, env=env,
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr
        assert fake.violations == []
    journal = next((tmp_path / "data").rglob("*.jsonl"))
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    usage = next(r for r in records if r.get("type") == "usage")
    assert usage["cache_write_1h"] == usage["cache_creation_input_tokens"] > 0
    info = UsageInfo(usage["input_tokens"], usage["output_tokens"], usage["cache_creation_input_tokens"],
                     usage["cache_read_input_tokens"], usage["cache_write_1h"])
    assert usage["cost_usd"] == cost_usd("claude-sonnet-4-5", info)
    assert usage["cost_usd"] > cost_usd("claude-sonnet-4-5", UsageInfo(*[info.input_tokens, info.output_tokens,
                                                                          info.cache_creation_input_tokens, 0]))
    load = read_journal(journal)
    assert load.usage[-1].cache_write_1h == usage["cache_write_1h"]
