"""Keep-warm that knows the cache (issue 39, section 1), against the fake Anthropic server whose prompt cache
is modelled as the API documents it (`tests/fakes/prompt_cache.py`: prefixes with a time to live on the
server's clock, reads and writes reported in usage, a switch for "caching off", `max_tokens: 0` validated),
through the real SDK over real HTTP. Waits are opened by the test (`Ticks`) or moved on a shared clock
(`MovingClock`): no test waits minutes, none asserts on the wall clock."""

from __future__ import annotations

import asyncio

from tests.fakes.fake_anthropic import FakeAnthropic, reader_model, text
from tests.fakes.prompt_cache import MovingClock
from tests.providers.conftest import FAST_RETRY, ended, run
from tests.providers.test_compaction_real_sdk import make_files
from tests.providers.test_keep_warm import MODEL, _heard, _session, _warming
from tests.waiting import wait_until
from tui_agent.core import events as ev
from tui_agent.core.agent.keep_warm import install_keep_warm
from tui_agent.core.agent.session import Session
from tui_agent.core.cache_clock import KeepWarm
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.tools import builtin_tools
from tui_agent.core.tools.base import ToolRegistry


def _stops(seen: list) -> list[ev.KeepWarmStopped]:
    return [e for e in seen if isinstance(e, ev.KeepWarmStopped)]


def _pings(seen: list) -> list[ev.CacheKeptWarm]:
    return [e for e in seen if isinstance(e, ev.CacheKeptWarm)]


async def test_a_server_that_caches_nothing_gets_no_ping(tmp_path):
    """Every ping to it would be a full-price request: nothing is armed, for any call."""
    fake = FakeAnthropic(model=lambda body: text("Hello."), caching=False)
    with fake:
        session = _session(fake, tmp_path)
        ticks, warmer = _warming(session, KeepWarm(270, 5))
        seen = _heard(session)
        for prompt in ("hello", "and again"):
            assert ended(await run(session, prompt)).reason == "completed"
            assert not warmer.running and session.ledger.keep_warm is None
        ticks.tick()
        await asyncio.sleep(0)
        await session.aclose()
    assert [u["cache_read_input_tokens"] + u["cache_creation_input_tokens"] for u in fake.usages] == [0, 0]
    assert len(fake.message_requests) == 2 and ticks.waits == 0 and seen == [] and session.ledger.pings == 0
    assert fake.violations == []


async def test_a_ping_that_reads_nothing_stops_warming_and_says_why(tmp_path):
    fake = FakeAnthropic(model=lambda body: text("Hello."))
    with fake:
        session = _session(fake, tmp_path)
        ticks, warmer = _warming(session, KeepWarm(270, 5))
        seen = _heard(session)
        await run(session, "hello")
        whole = fake.usages[0]["cache_creation_input_tokens"]
        fake.prompt_cache.evict()  # the server lets the prefix go before its time to live
        ticks.tick()
        await wait_until(lambda: _stops(seen), what="the stop")
        await asyncio.sleep(0)
        assert not warmer.running and ticks.waits == 1  # no second wait, no second ping
        await session.aclose()
    (ping,), (stopped,) = _pings(seen), _stops(seen)
    assert ping.cache_read_input_tokens == 0 and ping.cache_creation_input_tokens == whole and ping.missed
    assert stopped.reason == "missed" and stopped.pings == 1
    assert f"read nothing of the {whole:,} cached tokens (wrote {whole:,} again)" in stopped.line
    assert session.ledger.pings == 1 and session.ledger.keep_warm is None  # paid for, and nothing planned
    assert len(fake.message_requests) == 2 and fake.violations == []


async def test_a_ping_that_reads_only_part_stops_warming(tmp_path):
    fake = FakeAnthropic(model=lambda body: text("Hello."))
    with fake:
        session = _session(fake, tmp_path)
        ticks, _ = _warming(session, KeepWarm(270, 5))
        seen = _heard(session)
        await run(session, "hello")
        ticks.tick()
        await wait_until(lambda: _pings(seen), what="a ping that reads it all")
        fake.prompt_cache.evict_longest()  # the messages' prefix goes, tools and system stay
        ticks.tick()
        await wait_until(lambda: _stops(seen), what="the stop")
        await session.aclose()
    first, second = _pings(seen)
    assert not first.missed and first.cache_read_input_tokens == first.expected
    assert 0 < second.cache_read_input_tokens < second.expected and second.cache_creation_input_tokens > 0
    (stopped,) = _stops(seen)
    assert stopped.reason == "missed" and stopped.pings == 2
    assert f"read {second.cache_read_input_tokens:,} of the {second.expected:,} cached tokens" in stopped.line


def _moving(fake: FakeAnthropic, clock: MovingClock, tmp_path) -> tuple[Session, list[float], list]:
    """A session on `clock` whose warmer's waits move it (and are recorded)."""
    session = _session(fake, tmp_path)
    session.state.clock = clock
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock.advance(seconds)
        await asyncio.sleep(0)

    install_keep_warm(session, keep=KeepWarm(270, 2), sleep=sleep)
    return session, waits, _heard(session)


async def test_the_clock_runs_from_when_the_request_was_sent(tmp_path):
    """A 5-minute TTL on the server's clock, an answer that takes 40 s: counted from the answer's end the first
    ping came at 310 s and wrote the whole prefix again; counted from the request it comes at 270 s and reads."""
    clock = MovingClock()

    def slow(body):
        clock.advance(40)  # the model answers for 40 s after the prefix was read and written
        return text("A long answer.")

    fake = FakeAnthropic(replies=[slow], model=lambda body: text("x"), clock=clock, cache_ttl=300)
    with fake:
        session, waits, seen = _moving(fake, clock, tmp_path)
        sent = clock()
        await run(session, "think hard")
        assert session.state.warm_since == sent  # not the answer's end, 40 s later
        await wait_until(lambda: _stops(seen), what="two pings")
        await session.aclose()
    first, second = _pings(seen)
    whole = fake.usages[0]["cache_creation_input_tokens"]
    assert waits == [230, 270]  # 270 s after the request was sent, then 270 s after the first ping was
    assert (first.cache_read_input_tokens, first.cache_creation_input_tokens) == (whole, 0)
    assert (second.cache_read_input_tokens, second.cache_creation_input_tokens) == (whole, 0)
    assert _stops(seen)[0].reason == "limit" and fake.violations == []


async def test_a_call_after_a_long_tool_finds_the_cache_warm_by_the_sent_clock(tmp_path):
    """The loop's cold check runs on the same clock: 290 s after the last ping was sent the cache is warm (the
    compactor is not told it went cold), 310 s after it is cold."""
    from tui_agent.core.cache_clock import went_cold

    clock = MovingClock()
    fake = FakeAnthropic(model=lambda body: text("Hi."), clock=clock)
    with fake:
        session, _, seen = _moving(fake, clock, tmp_path)
        await run(session, "hello")
        await wait_until(lambda: _pings(seen), what="the first ping")
        since = session.state.warm_since
        assert not went_cold(since, MODEL, since + 290) and went_cold(since, MODEL, since + 310)
        await session.aclose()


def _reading_session(fake: FakeAnthropic, tmp_path, model: str = MODEL) -> Session:
    provider = AnthropicProvider(api_key="test-key", base_url=fake.base_url, model=model, retry=FAST_RETRY)
    return Session(provider, ToolRegistry(builtin_tools()), workspace=tmp_path, max_turns=20)


async def test_after_compact_the_old_request_is_not_pinged(tmp_path):
    """`/compact` replaces the next request: the pings of the old one stop at once with one quiet line, and the
    next call's answer arms them again for the new request."""
    names = make_files(tmp_path, 4, 6_000)
    fake = FakeAnthropic(model=reader_model(names))
    with fake:
        session = _reading_session(fake, tmp_path)
        ticks, warmer = _warming(session, KeepWarm(270, 5))
        seen = _heard(session)
        await run(session, "Read the modules.")
        ticks.tick()
        await wait_until(lambda: _pings(seen), what="a ping of the last request")
        said = await session.compact_now()
        assert said.startswith("Compacted now")
        (stopped,) = _stops(seen)
        assert stopped.reason == "changed" and "/compact replaced the next request" in stopped.line
        assert not warmer.running and session.ledger.keep_warm is None
        ticks.tick()
        await asyncio.sleep(0)
        assert len(_pings(seen)) == 1  # the old, replaced request is never sent again
        await session.wait_summary()
        await run(session, "And now?")
        new_call = fake.message_requests[-1]["body"]
        ticks.tick()
        await wait_until(lambda: len(_pings(seen)) == 2, what="a ping of the new request")
        ping = fake.message_requests[-1]["body"]
        await session.aclose()
    assert ping == {**new_call, "max_tokens": 0} and not _pings(seen)[1].missed
    assert fake.violations == []


async def test_a_change_that_keeps_the_prefix_keeps_warming_and_one_that_does_not_stops(tmp_path):
    """Pinning the newest message (sent as it is anyway) leaves the next request starting with the cached one:
    the pings go on. Excluding an older one changes it: warming stops; including it again, while the prefix is
    still warm, arms it again."""
    names = make_files(tmp_path, 3, 3_000)
    fake = FakeAnthropic(model=reader_model(names))
    with fake:
        session = _reading_session(fake, tmp_path)
        ticks, warmer = _warming(session, KeepWarm(270, 5))
        seen = _heard(session)
        await run(session, "Read the modules.")
        last_call = fake.message_requests[-1]["body"]
        session.pin(len(session.history) - 1)
        assert warmer.running and _stops(seen) == []
        session.exclude(1)
        (stopped,) = _stops(seen)
        assert stopped.reason == "changed" and "an exclude changed the next request" in stopped.line
        assert not warmer.running
        session.exclude(1, on=False)
        assert warmer.running and session.ledger.keep_warm is not None  # back to the cached prefix
        ticks.tick()
        await wait_until(lambda: _pings(seen), what="a ping")
        ping = fake.message_requests[-1]["body"]
        await session.aclose()
    assert ping == {**last_call, "max_tokens": 0} and not _pings(seen)[0].missed
    assert fake.violations == []


async def test_model_and_clear_stop_warming_with_a_line(tmp_path):
    fake = FakeAnthropic(model=lambda body: text("Hello."))
    with fake:
        session = _session(fake, tmp_path)
        ticks, warmer = _warming(session, KeepWarm(270, 5))
        seen = _heard(session)
        await run(session, "hello")
        await session.switch_model(AnthropicProvider(api_key="test-key", base_url=fake.base_url,
                                                     model="claude-haiku-4-5", retry=FAST_RETRY))
        (stopped,) = _stops(seen)
        assert "the next call goes to claude-haiku-4-5" in stopped.line and not warmer.running
        await run(session, "hello again")
        assert warmer.running
        session.clear()
        assert _stops(seen)[-1].reason == "changed" and "/clear left no request" in _stops(seen)[-1].line
        assert not warmer.running
        ticks.tick()
        await asyncio.sleep(0)
        await session.aclose()
    assert len(fake.message_requests) == 2 and fake.violations == []  # two calls, not one ping


async def test_the_idle_choice_is_asked_before_each_ping(tmp_path):
    """One function says ping now or stop (a priced idle policy plugs in there): asked before each ping with
    what the session knows; its "stop" ends warming with one line, before any request."""
    from tui_agent.core.cache_clock import IdleMoment

    clock = MovingClock()
    asked: list[IdleMoment] = []

    def once(moment: IdleMoment) -> str:
        asked.append(moment)
        return "ping" if moment.pings_sent < 1 else "stop"

    fake = FakeAnthropic(model=lambda body: text("Hi."), clock=clock)
    with fake:
        session = _session(fake, tmp_path)
        session.state.clock = clock

        async def sleep(seconds: float) -> None:
            clock.advance(seconds)
            await asyncio.sleep(0)

        install_keep_warm(session, keep=KeepWarm(270, 5), sleep=sleep, choose=once)
        seen = _heard(session)
        await run(session, "hello")
        await wait_until(lambda: _stops(seen), what="the policy's stop")
        await session.aclose()
    whole = fake.usages[0]["cache_creation_input_tokens"]
    assert [(m.pings_sent, m.cached_tokens, m.idle_seconds, m.model) for m in asked] == [
        (0, whole, 270, MODEL), (1, whole, 540, MODEL)]  # idle since the call was sent
    (stopped,) = _stops(seen)
    assert stopped.reason == "policy" and stopped.pings == 1 and len(fake.message_requests) == 2
