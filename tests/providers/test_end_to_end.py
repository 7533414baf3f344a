"""A headless run against the fake Claude that reads many large files in one turn.

Compaction runs on real requests: 40 Reads of 12,000-character files with a 100k-token window, and a fake
that rejects any prompt over 100k tokens (JSON body chars / 4). The turn must complete with no rejected
request and every request valid.
"""

from __future__ import annotations

import json

from tests.fakes.fake_anthropic import FakeAnthropic, reader_model
from tests.providers.conftest import ended, notices, run
from tui_agent.core import events as ev
from tui_agent.core.messages import protocol_errors
from tui_agent.core.providers.config import provider_from_env
from tui_agent.core.agent.session import Session
from tui_agent.core.tools import builtin_tools
from tui_agent.core.tools.base import ToolRegistry

FILES = 40
CHARS = 12_000
LIMIT = 100_000


async def test_forty_large_reads_in_one_turn_stay_under_the_window(tmp_path):
    names = []
    for i in range(FILES):
        line = f"# file {i:02d} " + "abcdefghij" * 7 + "\n"  # 84 chars a line
        body = (line * (CHARS // len(line) + 1))[:CHARS]
        name = f"file_{i:02d}.py"
        (tmp_path / name).write_text(body)
        names.append(name)
    fake = FakeAnthropic(model=reader_model(names), token_limit=LIMIT)
    with fake:
        env = {
            "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": fake.base_url,
            "ANTHROPIC_MODEL": "claude-fake-1",
            "CONTEXT_WINDOW_TOKENS": str(LIMIT),
        }
        provider = provider_from_env(env, model=None, provider=None)
        assert provider is not None and provider.context_window == LIMIT
        session = Session(provider, ToolRegistry(builtin_tools()), workspace=tmp_path, max_turns=FILES + 5)
        events = await run(session, f"Read all {FILES} files, one at a time.")
        await session.aclose()
    assert ended(events).reason == "completed", ended(events)
    assert fake.violations == []
    assert fake.rejected == []
    assert not any("too long" in n for n in notices(events))
    requests = fake.message_requests
    assert len(requests) == FILES + 1
    for sent in requests:
        assert protocol_errors(sent["body"]["messages"]) == []
        assert len(json.dumps(sent["body"])) // 4 <= LIMIT
    reads = [e for e in events if isinstance(e, ev.ToolFinished)]
    assert len(reads) == FILES and not any(r.is_error for r in reads)
    assert sum(r.chars for r in reads) >= FILES * CHARS  # the files really were that large
    assert protocol_errors(session.history) == []
    # Every call reported usage; the cache breakpoints let late calls read most of their prompt from the
    # cache even though compaction rewrites the previous round on every call.
    usages = [e for e in events if isinstance(e, ev.Usage)]
    assert len(usages) == FILES + 1
    last = usages[-1]
    prompt = last.input_tokens + last.cache_creation_input_tokens + last.cache_read_input_tokens
    assert last.cache_read_input_tokens > 0.7 * prompt
