"""The priced idle policy, live (`--idle`, `core/agent/idle_policy.py`), against the strict fake Anthropic server
whose prompt cache keeps prefixes for their time to live on a clock the test moves (`MovingClock`): the
warmer's waits move it, no test sleeps, none asserts on the wall clock. Each mode does what it says; `auto`
takes the cheapest (a case where each of ping / compact / cold wins); a server that caches nothing gets no ping
in any mode; the choice is journaled and a resumed session sends what the old one would have."""

from __future__ import annotations

import asyncio
import math

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic, reader_model, text
from tests.fakes.prompt_cache import MovingClock
from tests.providers.conftest import FAST_RETRY, run
from tests.providers.test_compaction_real_sdk import make_files
from tests.waiting import wait_until
from tui_agent.core import events as ev
from tui_agent.core.agent.idle_policy import IDLE_PING_LINE, IdlePolicy, install_idle_policy
from tui_agent.core.agent.session import Session
from tui_agent.core.cache_clock import keep_warm_for
from tui_agent.core.idle import PRIOR, Returns
from tui_agent.core.messages import protocol_errors
from tui_agent.core.models import for_model
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.tools import builtin_tools
from tui_agent.core.tools.base import ToolRegistry

MODEL = "claude-sonnet-5-5"  # priced, cache reads at 0.05x, 5-minute TTL
GONE = Returns((math.inf,) * 20, (1.0,) * 20)  # nobody ever came back
LATE = Returns((2400.0,) * 20, (1.0,) * 20)  # everyone came back after 40 minutes


class Moves:
    """The warmer's sleep on a moving clock: each wait passes when the test lets it (`release`), and moves the
    clock by what was asked (waits armed mid-turn are cancelled by the next call before they pass)."""

    def __init__(self, clock: MovingClock) -> None:
        self.clock, self.waits = clock, 0
        self.gate: asyncio.Queue[None] = asyncio.Queue()

    async def sleep(self, seconds: float) -> None:
        await self.gate.get()
        self.waits += 1
        self.clock.advance(seconds)

    def release(self, waits: int = 1) -> None:
        for _ in range(waits):
            self.gate.put_nowait(None)


def _session(fake: FakeAnthropic, tmp_path, clock: MovingClock) -> Session:
    provider = AnthropicProvider(api_key="test-key", base_url=fake.base_url, model=MODEL, retry=FAST_RETRY)
    session = Session(provider, ToolRegistry(builtin_tools()), workspace=tmp_path, max_turns=20)
    session.state.clock = clock
    return session


def _idle(session: Session, mode: str, clock: MovingClock, prior: Returns = PRIOR) -> tuple[IdlePolicy, Moves, list]:
    moves = Moves(clock)
    policy = install_idle_policy(session, mode, prior=prior, sleep=moves.sleep)
    seen: list = []
    session.listeners.append(lambda event: seen.append(event) if isinstance(
        event, (ev.CacheKeptWarm, ev.KeepWarmStopped, ev.IdleChosen, ev.NextRequestChanged)) else None)
    return policy, moves, seen


def _of(seen: list, kind: type) -> list:
    return [e for e in seen if isinstance(e, kind)]


def _reading(tmp_path, clock: MovingClock, caching: bool = True) -> FakeAnthropic:
    names = make_files(tmp_path, 4, 6_000)
    return FakeAnthropic(model=reader_model(names), clock=clock, caching=caching)


def _journaled_reading(tmp_path) -> tuple[MovingClock, FakeAnthropic, dict[str, str]]:
    """The moving clock, a reading fake and the data dir a journaled session writes to."""
    clock = MovingClock()
    return clock, _reading(tmp_path, clock), {"TUI_AGENT_DATA_DIR": str(tmp_path / "data")}


async def _compacting_old(fake: FakeAnthropic, tmp_path, clock: MovingClock, environ: dict[str, str]):
    """A journaled session under `--idle compact` that has read the modules (the process that will quit)."""
    from tui_agent.core.journal.writer import start_journal

    old = _session(fake, tmp_path, clock)
    start_journal(old, environ=environ)
    _, moves, seen = _idle(old, "compact", clock)
    await run(old, "Read the modules.")
    return old, moves, seen


async def test_cold_never_pings_and_says_so(tmp_path):
    clock = MovingClock()
    fake = _reading(tmp_path, clock)
    with fake:
        session = _session(fake, tmp_path, clock)
        policy, moves, seen = _idle(session, "cold", clock)
        await run(session, "Read the modules.")
        await asyncio.sleep(0)
        clock.advance(3_600)
        await asyncio.sleep(0)
        calls = len(fake.message_requests)
        await session.aclose()
    assert _of(seen, ev.CacheKeptWarm) == [] and moves.waits == 0 and calls == 5
    (told,) = _of(seen, ev.IdleChosen)  # said when the turn ended, with what the others would cost
    assert told.choice == "cold" and told.ahead and told.news and told.mode == "cold"
    assert told.line.startswith("idle: cold ≈$0.0") and "ping ≈$" in told.line and "compact ≈$" in told.line
    assert ("(cheapest)" if told.cheapest == "cold" else "(--idle cold)") in told.line
    assert session.ledger.idle == told and fake.violations == []


async def test_ping_pings_as_today(tmp_path):
    """`--idle ping` is today's keep-warm: a ping every 0.9 × TTL, as many as the price pays for (12 at 0.05)."""
    clock = MovingClock()
    fake = FakeAnthropic(model=lambda body: text("Hello."), clock=clock)
    with fake:
        session = _session(fake, tmp_path, clock)
        _, moves, seen = _idle(session, "ping", clock, prior=GONE)  # even when nobody comes back: it pings
        await run(session, "hello")
        moves.release(100)
        await wait_until(lambda: _of(seen, ev.KeepWarmStopped), what="the pings to end")
        await session.aclose()
    most = keep_warm_for(for_model(MODEL)).max_pings
    pings = _of(seen, ev.CacheKeptWarm)
    assert most == 12 and len(pings) == most and all(not p.missed for p in pings)
    assert _of(seen, ev.KeepWarmStopped)[0].reason == "limit"
    assert {c.choice for c in _of(seen, ev.IdleChosen)} == {"ping"}
    assert all(r["body"]["max_tokens"] == 0 for r in fake.message_requests[1:]) and fake.violations == []


async def test_compact_makes_the_event_while_idle_and_the_next_call_is_the_smaller_one(tmp_path):
    clock = MovingClock()
    fake = _reading(tmp_path, clock)
    with fake:
        session = _session(fake, tmp_path, clock)
        policy, moves, seen = _idle(session, "compact", clock)
        await run(session, "Read the modules.")
        last_call = fake.usages[-1]
        before = sum(last_call[k] for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
        moves.release()
        await wait_until(lambda: _of(seen, ev.CacheKeptWarm), what="the idle event's ping")
        (changed,) = [e for e in _of(seen, ev.NextRequestChanged) if e.why == "idle compact"]
        event = changed.plan.plan.event
        assert event is not None and "drop" in event.kinds and event.reason.startswith("compacted while idle")
        write = fake.message_requests[-1]["body"]
        assert write["max_tokens"] == 0 and write["messages"][-1]["content"][0]["text"] == IDLE_PING_LINE
        assert protocol_errors(write["messages"]) == []
        (ping,) = _of(seen, ev.CacheKeptWarm)
        assert ping.cache_creation_input_tokens > 0 and not ping.missed  # it wrote the smaller request
        decided = [c for c in _of(seen, ev.IdleChosen) if not c.ahead]
        assert decided[0].choice == "compact" and decided[0].waited == pytest.approx(270)
        session.announce_next("panel shown")  # the next request, told again: still what the write keeps warm
        assert _of(seen, ev.KeepWarmStopped) == [] and policy.warmer.running
        calls = len(fake.usages)
        await run(session, "And now?")  # back within the TTL of that write
        after = fake.usages[calls]  # the first call of the new turn
        await session.aclose()
    sent = sum(after[k] for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
    assert sent < before / 2  # the next request is the smaller one
    assert after["cache_read_input_tokens"] >= ping.cache_creation_input_tokens - 50  # and it reads what was written
    assert fake.violations == []


async def _priced(tmp_path, prior: Returns, files: int = 4, chars: int = 6_000):
    """The first idle decision of `auto` on a session that read `files` files of `chars` (the decision, the
    requests the server had then, what was told)."""
    clock = MovingClock()
    names = make_files(tmp_path, files, chars)
    fake = FakeAnthropic(model=reader_model(names), clock=clock)
    with fake:
        session = _session(fake, tmp_path, clock)
        _, moves, seen = _idle(session, "auto", clock, prior=prior)
        await run(session, "Read the modules.")
        moves.release()
        await wait_until(lambda: [c for c in _of(seen, ev.IdleChosen) if not c.ahead], what="a decision")
        await asyncio.sleep(0.05)
        requests = len(fake.message_requests)
        await session.aclose()
    assert fake.violations == []
    return [c for c in _of(seen, ev.IdleChosen) if not c.ahead][0], requests, seen


async def test_auto_pings_when_the_person_is_likely_back_soon(tmp_path):
    chosen, _, seen = await _priced(tmp_path, PRIOR)
    assert chosen.choice == "ping" and chosen.ping < min(chosen.compact, chosen.cold)
    assert _of(seen, ev.CacheKeptWarm)


async def test_auto_lets_it_go_cold_when_nobody_comes_back(tmp_path):
    chosen, requests, seen = await _priced(tmp_path, GONE)
    assert chosen.choice == "cold" and chosen.cold == 0 and chosen.back == 0
    assert _of(seen, ev.CacheKeptWarm) == [] and requests == 5
    assert _of(seen, ev.KeepWarmStopped)[0].reason == "policy"


async def test_auto_compacts_when_the_person_comes_back_late_to_a_large_request(tmp_path):
    chosen, _, seen = await _priced(tmp_path, LATE, files=6, chars=12_000)
    assert chosen.choice == "compact" and chosen.compact < min(chosen.ping, chosen.cold)
    assert any(e.why == "idle compact" for e in _of(seen, ev.NextRequestChanged))


@pytest.mark.parametrize("mode", ["auto", "ping", "compact", "cold"])
async def test_a_server_that_caches_nothing_gets_no_ping_in_any_mode(tmp_path, mode):
    clock = MovingClock()
    fake = _reading(tmp_path, clock, caching=False)
    with fake:
        session = _session(fake, tmp_path, clock)
        _, moves, seen = _idle(session, mode, clock)
        await run(session, "Read the modules.")
        await asyncio.sleep(0)
        await session.aclose()
    assert len(fake.message_requests) == 5 and moves.waits == 0 and session.ledger.pings == 0
    assert [e for e in seen if not isinstance(e, ev.NextRequestChanged)] == []  # no choice to make, nothing armed
    assert fake.violations == []


async def test_the_own_waits_are_learned_from_the_turns(tmp_path):
    clock = MovingClock()
    fake = FakeAnthropic(model=lambda body: text("Hi."), clock=clock)
    with fake:
        session = _session(fake, tmp_path, clock)
        policy, _, _ = _idle(session, "cold", clock)
        await run(session, "hello")
        clock.advance(42)
        await run(session, "again")
        await session.aclose()
    assert policy.own == [pytest.approx(42)]


async def test_the_choice_is_journaled_and_a_resumed_session_sends_what_the_old_one_would(tmp_path):
    """An idle compaction changed the next request: the journal holds its state and an `idle` record; a new
    process resuming it sends the same request byte for byte, and its meter says the last choice."""
    from tui_agent.core.journal.reader import read_journal
    from tui_agent.core.journal.resume import resume_journaled
    from tui_agent.core.journal.writer import journal_of

    clock, fake, environ = _journaled_reading(tmp_path)
    with fake:
        old, moves, seen = await _compacting_old(fake, tmp_path, clock, environ)
        moves.release(2)
        await wait_until(lambda: len([c for c in _of(seen, ev.IdleChosen) if not c.ahead]) == 2, what="two choices")
        journal_of(old).close()
        load = read_journal(journal_of(old).path)
        fresh = _session(fake, tmp_path, clock)
        resume_journaled(fresh, load, environ)
        bodies = [s.provider.outbound_body(s.next_request()) for s in (old, fresh)]
        for session in (old, fresh):
            await session.aclose()
    assert bodies[0] == bodies[1]
    last = [c for c in _of(seen, ev.IdleChosen) if not c.ahead][-1]
    assert load.idle is not None and (load.idle.choice, load.idle.mode) == (last.choice, "compact")
    assert load.idle.ping == pytest.approx(last.ping) and load.idle.waited == pytest.approx(last.waited, abs=0.1)
    assert fresh.ledger.idle == load.idle
    records = [line for line in journal_of(old).path.read_text().splitlines() if '"type":"idle"' in line]
    assert len(records) == 2 and '"choice":"compact"' in records[0]


async def test_the_organisation_ping_cap_holds_in_every_mode(tmp_path):
    """`pingSpendCapUsd` (the organisation policy): a cap already spent sends no ping, even with `--idle ping`."""
    clock = MovingClock()
    fake = FakeAnthropic(model=lambda body: text("Hello."), clock=clock)
    with fake:
        session = _session(fake, tmp_path, clock)
        moves = Moves(clock)
        install_idle_policy(session, "ping", prior=PRIOR, ping_cap_usd=0.0, sleep=moves.sleep)
        seen: list = []
        session.listeners.append(seen.append)
        await run(session, "hello")
        moves.release()
        await wait_until(lambda: _of(seen, ev.KeepWarmStopped), what="the stop")
        await session.aclose()
    (chosen,) = [c for c in _of(seen, ev.IdleChosen) if not c.ahead]
    assert chosen.choice == "cold" and "ping n/a (no ping allowed now)" in chosen.line
    assert _of(seen, ev.CacheKeptWarm) == [] and len(fake.message_requests) == 1


async def test_the_call_an_idle_event_made_journals_it(tmp_path):
    """The call whose request the idle compaction made names the event in its journal record (the timeline of
    a resumed session and `export` show it there), as a call that compacts itself does."""
    from tui_agent.core.journal.reader import read_journal
    from tui_agent.core.journal.writer import journal_of, start_journal

    clock = MovingClock()
    fake = _reading(tmp_path, clock)
    with fake:
        session = _session(fake, tmp_path, clock)
        start_journal(session, environ={"TUI_AGENT_DATA_DIR": str(tmp_path / "data")})
        _, moves, seen = _idle(session, "compact", clock)
        await run(session, "Read the modules.")
        moves.release()
        await wait_until(lambda: _of(seen, ev.CacheKeptWarm), what="the idle event's write")
        await run(session, "And now?")
        load = read_journal(journal_of(session).path)
        await session.aclose()
    made = [c for c in load.calls if c.event]
    assert len(made) == 1 and made[0].call == 6 and "compacted while idle" in made[0].event


async def test_a_process_that_quits_after_an_idle_event_resumes_with_its_words(tmp_path):
    """The idle compaction's words wait in the journal for the call whose request it made: a process that quits
    before that call used to resume with the same request but without the event on its timeline, and the next
    call's record named none. Now the resumed ledger lists it (counted once) and that call's record names it."""
    from tui_agent.core.journal.reader import read_journal
    from tui_agent.core.journal.resume import resume_journaled
    from tui_agent.core.journal.writer import journal_of

    clock, fake, environ = _journaled_reading(tmp_path)
    with fake:
        old, moves, seen = await _compacting_old(fake, tmp_path, clock, environ)
        moves.release()
        await wait_until(lambda: _of(seen, ev.CacheKeptWarm), what="the idle event's write")
        journal_of(old).close()
        await old.aclose()  # the process quits before its next call
        load = read_journal(journal_of(old).path)
        fresh = _session(fake, tmp_path, clock)
        resume_journaled(fresh, load, environ)
        fresh.ledger.resumed(fresh.usage_history, fresh.resumed_calls)  # what the TUI's panel does on resume
        listed = list(fresh.ledger.earlier_events)
        calls_before = dict(fresh.ledger.calls)
        await run(fresh, "And now?")
        after = read_journal(journal_of(fresh).path)
        await fresh.aclose()
    assert load.idle_event is not None and "compacted while idle" in load.idle_event
    assert listed[-1] == (load.calls_made + 1, load.idle_event) and fresh.ledger.event_count >= 1
    assert load.calls_made + 1 not in calls_before, "the next call has no size before it is made"
    made = [c for c in after.calls if c.event and "compacted while idle" in c.event]
    assert [c.call for c in made] == [load.calls_made + 1] and after.idle_event is None


async def test_with_thinking_the_idle_write_is_a_valid_request_and_the_next_call_reads_it(tmp_path):
    """Thinking on: the write of an idle compaction's request does not end with the answer (no prefill), keeps
    the thinking settings (they key the cached messages) and sends `max_tokens: 0`."""
    clock = MovingClock()
    fake = _reading(tmp_path, clock)
    with fake:
        provider = AnthropicProvider(api_key="test-key", base_url=fake.base_url, model=MODEL, retry=FAST_RETRY,
                                     thinking_budget=2_048, max_output_tokens=4_096)
        session = Session(provider, ToolRegistry(builtin_tools()), workspace=tmp_path, max_turns=20)
        session.state.clock = clock
        _, moves, seen = _idle(session, "compact", clock)
        await run(session, "Read the modules.")
        moves.release()
        await wait_until(lambda: _of(seen, ev.CacheKeptWarm), what="the idle event's write")
        write = fake.message_requests[-1]["body"]
        calls = len(fake.usages)
        await run(session, "And now?")
        after = fake.usages[calls]
        await session.aclose()
    assert write["max_tokens"] == 0 and write["thinking"]["type"] == "enabled"
    assert write["messages"][-1]["role"] == "user" and protocol_errors(write["messages"]) == []
    assert after["cache_read_input_tokens"] >= _of(seen, ev.CacheKeptWarm)[0].cache_creation_input_tokens - 50
    assert fake.violations == []


async def test_a_policy_that_fails_stops_the_warming_in_one_line(tmp_path):
    clock = MovingClock()
    fake = FakeAnthropic(model=lambda body: text("Hello."), clock=clock)
    with fake:
        session = _session(fake, tmp_path, clock)
        policy, moves, seen = _idle(session, "auto", clock)

        def broken(*args):
            raise RuntimeError("no sizes")

        policy._sizes = broken  # type: ignore[method-assign]
        await run(session, "hello")
        moves.release()
        await wait_until(lambda: _of(seen, ev.KeepWarmStopped), what="the stop")
        await session.aclose()
    (stopped,) = _of(seen, ev.KeepWarmStopped)
    assert stopped.reason == "failed" and "the idle policy failed: no sizes" in stopped.line
    assert len(fake.message_requests) == 1
