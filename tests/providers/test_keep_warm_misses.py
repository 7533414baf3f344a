"""Keep-warm's word with the server (issue 39): `max_tokens: 0` and an endpoint that refuses it, a call that
missed the cache although pings kept it warm (`cache_miss_reason` on the timeline), and what the pings
after the last call cost, in the ledger and the journal. Against the fake Anthropic servers through the
real SDK; the pings' waits are opened by the test."""

from __future__ import annotations

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic, text
from tests.fakes.fake_context import FakeContextAnthropic
from tests.providers.conftest import ended, run
from tests.providers.test_keep_warm import _heard, _session, _warming
from tests.waiting import wait_until
from tui_agent.core import events as ev
from tui_agent.core.cache_clock import KeepWarm


def _of(seen: list, kind: type) -> list:
    return [e for e in seen if isinstance(e, kind)]


@pytest.mark.parametrize("thinking", [0, 2048])
async def test_an_endpoint_that_refuses_max_tokens_zero_gets_the_smallest_form_once_said(tmp_path, thinking):
    """The first ping's `max_tokens: 0` is refused (400): the same ping goes once more in the smallest form
    the endpoint takes (1, or one above the thinking budget, which stays as the call sent it: it keys the
    cache), one quiet line says so, and the session remembers: the next ping goes in that form at once."""
    fake = FakeAnthropic(model=lambda body: text("Hello."), max_tokens_zero=False)
    with fake:
        session = _session(fake, tmp_path, thinking=thinking)
        ticks, warmer = _warming(session, KeepWarm(270, 2))
        seen = _heard(session)
        await run(session, "hello")
        ticks.tick()
        await wait_until(lambda: _of(seen, ev.CacheKeptWarm), what="the first ping")
        ticks.tick()
        await wait_until(lambda: _of(seen, ev.KeepWarmStopped), what="the second ping")
        await session.aclose()
    call, refused, first, second = [r["body"] for r in fake.message_requests]
    smallest = thinking + 1 if thinking else 1
    assert refused == {**call, "max_tokens": 0} and fake.refused_zero == 1
    assert first == second == {**call, "max_tokens": smallest} and call["max_tokens"] == 4096
    assert first.get("thinking") == call.get("thinking")
    one, two = _of(seen, ev.CacheKeptWarm)
    assert "refused max_tokens 0" in one.note and f"max_tokens {smallest} from now on" in one.note
    assert two.note == "" and (one.max_tokens, two.max_tokens) == (smallest, smallest) and not warmer.zero
    assert not one.missed and not two.missed  # read it all: the cache key is the call's
    assert fake.violations == []


async def test_with_thinking_the_ping_sends_max_tokens_zero_not_the_calls_own(tmp_path):
    fake = FakeAnthropic(model=lambda body: text("Hello."))
    with fake:
        session = _session(fake, tmp_path, thinking=2048)
        ticks, _ = _warming(session, KeepWarm(270, 1))
        seen = _heard(session)
        await run(session, "hello")
        ticks.tick()
        await wait_until(lambda: _of(seen, ev.KeepWarmStopped), what="one ping")
        await session.aclose()
    call, ping = [r["body"] for r in fake.message_requests]
    assert ping["max_tokens"] == 0 and call["max_tokens"] == 4096 and ping["thinking"] == call["thinking"]
    (pinged,) = _of(seen, ev.CacheKeptWarm)
    assert (pinged.max_tokens, pinged.output_tokens, pinged.missed) == (0, 0, False) and fake.violations == []


async def test_kept_warm_missed_anyway_is_told_and_counted_with_the_apis_reason(tmp_path):
    """Pings read the prefix, then the server lets it go early: the next call writes it again. That miss is
    told on the timeline (the API's `cache_miss_reason` beside ours, "kept warm, missed anyway") and counted."""
    fake = FakeContextAnthropic(model=lambda body: text("Hello."))
    with fake:
        session = _session(fake, tmp_path)
        session.provider.diagnose = True
        ticks, _ = _warming(session, KeepWarm(270, 5))
        await run(session, "hello")
        ticks.tick()
        await wait_until(lambda: session.ledger.pings == 1, what="a ping")
        fake.prompt_cache.evict()
        events = await run(session, "still there?")
        await session.aclose()
    assert ended(events).reason == "completed" and fake.violations == []
    (missed,) = _of(events, ev.CacheMissed)
    assert missed.after_pings == 1 and missed.kept_warm and missed.source == "api"
    assert missed.reason == "unavailable" and missed.our_reason == "kept_warm_missed"
    assert "after 1 keep-warm ping" in missed.line() and "kept warm, missed anyway" in missed.line()
    assert session.ledger.timeline()[-1] == missed and session.ledger.kept_warm_missed == 1
    assert fake.message_requests[1]["body"]["diagnostics"]["previous_message_id"] == "msg_fake_001"  # the ping


async def test_without_the_apis_word_kept_warm_missed_anyway_is_ours_and_still_told(tmp_path):
    """Before, a miss neither the API nor we could explain was not told; after pings we can: the server let go."""
    fake = FakeAnthropic(model=lambda body: text("Hello."))
    with fake:
        session = _session(fake, tmp_path)
        ticks, _ = _warming(session, KeepWarm(270, 5))
        await run(session, "hello")
        ticks.tick()
        await wait_until(lambda: session.ledger.pings == 1, what="a ping")
        fake.prompt_cache.evict()
        events = await run(session, "still there?")
        plain = await run(session, "and once more")  # no ping in between, read as usual: nothing to tell
        await session.aclose()
    (missed,) = _of(events, ev.CacheMissed)
    assert (missed.reason, missed.source, missed.after_pings) == ("kept_warm_missed", "ours", 1)
    assert missed.read == 0 and missed.missed > 0 and _of(plain, ev.CacheMissed) == []


async def test_pings_after_the_last_call_are_priced_in_the_ledger_and_the_journal(tmp_path):
    """A session left open after its last call pings until the limit: each ping is journaled with its price
    and the call it kept warm; a resumed meter counts their cost, and says it in its standing line."""
    from tui_agent.core.agent.keep_warm import pings_line
    from tui_agent.core.journal.reader import read_journal
    from tui_agent.core.journal.resume import resume_journaled
    from tui_agent.core.journal.writer import journal_of, start_journal

    fake = FakeAnthropic(model=lambda body: text("Hello."))
    environ = {"TUI_AGENT_DATA_DIR": str(tmp_path / "data")}
    with fake:
        session = _session(fake, tmp_path)
        start_journal(session, environ=environ)
        ticks, _ = _warming(session, KeepWarm(270, 3))
        await run(session, "hello")
        await run(session, "the last prompt")
        for _ in range(3):
            ticks.tick()
        await wait_until(lambda: session.ledger.pings == 3, what="three pings after the last call")
        journal_of(session).close()
        load = read_journal(journal_of(session).path)
        fresh = _session(fake, tmp_path)
        resume_journaled(fresh, load, environ)
        await session.aclose()
        await fresh.aclose()
    assert [(p.after_call, p.max_tokens, p.expected > 0) for p in load.pings] == [(2, 0, True)] * 3
    priced = session.ledger.ping_cost
    assert priced > 0 and fresh.ledger.ping_cost == pytest.approx(priced) and fresh.ledger.pings == 3
    line = pings_line(fresh.ledger.pings, fresh.ledger.ping_cost, fresh.ledger.kept_warm_missed)
    assert line == f"keep-warm pings: 3 so far ≈${priced:.4f} (in the session cost)"
