"""Keeping the prompt cache warm in a live session (`core/agent/keep_warm.py`), against the fake Anthropic
server over real HTTP with the real SDK. The wait between pings is a gate the test opens (`Ticks`): no
test waits minutes, none asserts on the wall clock."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic, error_reply, message_events, rate_limited, text
from tests.fakes.http import Reply
from tests.providers.conftest import FAST_RETRY, ended, run
from tests.waiting import wait_until
from tui_agent.core import events as ev
from tui_agent.core.access.gate import PermissionDecision
from tui_agent.core.agent.door import SessionOptions, SessionRefused, open_session
from tui_agent.core.agent.keep_warm import Warmer, install_keep_warm, keep_warm_of, minutes_from, warm_line
from tui_agent.core.agent.session import Session
from tui_agent.core.cache_clock import NEVER_WARM, KeepWarm, keep_warm_for
from tui_agent.core.models import cost_usd, for_model
from tui_agent.core.messages import UsageInfo
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.providers.openai_provider import OpenAIProvider
from tui_agent.core.providers.demo import DemoProvider
from tui_agent.core.tools import builtin_tools
from tui_agent.core.tools.base import ToolRegistry

MODEL = "claude-sonnet-5-5"  # priced, cache reads at 0.05x, 5-minute TTL


class Ticks:
    """The warmer's `sleep`: each wait returns when the test says `tick()` (or never)."""

    def __init__(self) -> None:
        self.gate: asyncio.Queue[None] = asyncio.Queue()
        self.waits = 0

    async def sleep(self, seconds: float) -> None:
        self.waits += 1
        await self.gate.get()

    def tick(self) -> None:
        self.gate.put_nowait(None)


def _session(fake: FakeAnthropic, tmp_path, thinking: int = 0) -> Session:
    provider = AnthropicProvider(api_key="test-key", base_url=fake.base_url, model=MODEL, retry=FAST_RETRY,
                                 thinking_budget=thinking, max_output_tokens=4096)
    return Session(provider, ToolRegistry(builtin_tools()), workspace=tmp_path)


def _warming(session: Session, keep: KeepWarm) -> tuple[Ticks, Warmer]:
    """The session's warmer, its waits opened by the test (`Ticks.tick`)."""
    ticks = Ticks()
    return ticks, install_keep_warm(session, keep=keep, sleep=ticks.sleep)


def _heard(session: Session) -> list:
    seen: list = []
    session.listeners.append(lambda event: seen.append(event)
                             if isinstance(event, (ev.CacheKeptWarm, ev.KeepWarmStopped)) else None)
    return seen


async def test_a_ping_repeats_the_last_request_and_stops_at_max_pings(tmp_path):
    fake = FakeAnthropic(model=lambda body: text("Hello."))
    with fake:
        session = _session(fake, tmp_path)
        ticks, warmer = _warming(session, KeepWarm(interval_seconds=270, max_pings=2))
        seen = _heard(session)
        assert ended(await run(session, "hello")).reason == "completed"
        call_cost, answered = session.ledger.cost, session.state.warm_since
        await wait_until(lambda: ticks.waits == 1, what="the first wait")
        assert warmer.running and len(fake.message_requests) == 1
        whole = fake.usages[0]["cache_creation_input_tokens"]  # the call wrote its prefix: pings keep that
        assert session.ledger.keep_warm == ev.KeepWarmArmed(2, 270, whole)  # told with the call's usage
        ticks.tick()
        await wait_until(lambda: len(seen) == 1, what="the first ping")
        ticks.tick()
        await wait_until(lambda: not warmer.running, what="warming to stop after two pings")
        requests = [r["body"] for r in fake.message_requests]
        await session.aclose()
    assert fake.violations == []
    assert len(requests) == 3 and ticks.waits == 2  # two pings, then no third wait
    call, *pings = requests
    for ping in pings:  # the very request, breakpoints and all; only max_tokens differs (not in the cache key)
        assert {k: v for k, v in ping.items() if k != "max_tokens"} == {k: v for k, v in call.items()
                                                                          if k != "max_tokens"}
        assert ping["max_tokens"] == 0 and call["max_tokens"] == 4096  # "populate the prompt cache" only
        assert ping["system"][0]["cache_control"] and ping["tools"][-1]["cache_control"]
    first, second, stopped = seen
    assert (first.ping, second.ping, first.max_pings) == (1, 2, 2)
    assert stopped == ev.KeepWarmStopped("limit", 2)
    # what a ping costs on the fake's usage: the whole prefix read back, nothing written
    assert whole > 0 and first.cache_read_input_tokens == whole and first.cache_creation_input_tokens == 0
    ping_usd = cost_usd(MODEL, UsageInfo.of(first))
    assert ping_usd is not None and ping_usd < cost_usd(MODEL, UsageInfo(cache_creation_input_tokens=whole))
    # the ledger (the meter's money) counts the pings; the cache clock restarted with them
    assert session.ledger.pings == 2 and session.ledger.ping_read_tokens == 2 * whole
    assert session.ledger.cost == pytest.approx(call_cost + 2 * ping_usd)
    assert session.ledger.warm == second and session.ledger.keep_warm is None  # stopped: nothing planned
    assert session.state.warm_since is not None and answered is not None and session.state.warm_since > answered
    assert len(session.usage_history) == 1  # a ping is no call of the conversation


async def test_with_thinking_the_ping_body_is_the_request_byte_for_byte(tmp_path):
    fake = FakeAnthropic(model=lambda body: text("Hello."))
    with fake:
        session = _session(fake, tmp_path, thinking=2048)
        ticks, _ = _warming(session, KeepWarm(270, 1))
        seen = _heard(session)
        await run(session, "hello")
        ticks.tick()
        await wait_until(lambda: any(isinstance(e, ev.KeepWarmStopped) for e in seen), what="one ping")
        await session.aclose()
    call, ping = [r["body"] for r in fake.message_requests]
    assert "thinking" in call and ping == {**call, "max_tokens": 0}  # thinking as sent: it keys the cache
    assert call["max_tokens"] == 4096 and ping["thinking"] == call["thinking"]


async def test_a_new_prompt_cancels_the_pending_ping(tmp_path):
    fake = FakeAnthropic(model=lambda body: text("Hello."))
    with fake:
        session = _session(fake, tmp_path)
        ticks, warmer = _warming(session, KeepWarm(270, 5))
        await run(session, "hello")
        pending = warmer.task
        assert pending is not None and not pending.done()
        assert ended(await run(session, "and again")).reason == "completed"
        await asyncio.sleep(0)
        assert pending.cancelled()  # the ping that was waiting never went out
        assert warmer.running and warmer.task is not pending  # armed again after the new answer
        ticks.tick()  # the old task's gate is gone: this opens the new one's
        await wait_until(lambda: session.ledger.pings == 1, what="the new stretch's first ping")
        requests = [r["body"] for r in fake.message_requests]
        await session.aclose()
    assert len(requests) == 3  # two calls, then one ping that repeats the second call
    assert requests[2]["messages"] == requests[1]["messages"]


@pytest.mark.parametrize("failure", ["500", "429", "dropped"])
async def test_a_failed_ping_stops_warming_quietly_and_the_next_call_works(tmp_path, failure):
    broken = {"500": error_reply(500, "api_error", "Internal server error"), "429": rate_limited(10),
              "dropped": Reply(chunks=message_events(text("x")), drop_after=0)}[failure]
    fake = FakeAnthropic(replies=[text("Hello."), broken], model=lambda body: text("Again."))
    with fake:
        session = _session(fake, tmp_path)
        ticks, warmer = _warming(session, KeepWarm(270, 5))
        seen = _heard(session)
        await run(session, "hello")
        ticks.tick()
        await wait_until(lambda: seen, what="the failed ping's word")
        assert not warmer.running and ticks.waits == 1  # no retry, no second wait
        stopped = seen[0]
        assert isinstance(stopped, ev.KeepWarmStopped) and stopped.reason == "failed" and stopped.pings == 0
        assert (failure in stopped.detail) if failure != "dropped" else stopped.detail
        assert "a ping failed" in stopped.line
        assert session.ledger.pings == 0
        events = await run(session, "still there?")
        await session.aclose()
    assert ended(events).reason == "completed"
    assert not [e for e in events if isinstance(e, ev.Notice) and e.level != "info"]
    assert len(fake.message_requests) == 3
    assert fake.violations == []


async def test_quitting_cancels_the_waiting_ping(tmp_path):
    fake = FakeAnthropic(model=lambda body: text("Hello."))
    with fake:
        session = _session(fake, tmp_path)
        warmer = install_keep_warm(session, keep=KeepWarm(270, 5), sleep=Ticks().sleep)
        await run(session, "hello")
        pending = warmer.task
        await session.aclose()
    assert pending is not None and pending.cancelled() and warmer.task is None
    assert len(fake.message_requests) == 1


def test_who_gets_pings():
    cached = AnthropicProvider(api_key="k", model=MODEL)
    assert keep_warm_of(cached) == keep_warm_for(for_model(MODEL)) == KeepWarm(270.0, 12)
    assert keep_warm_of(cached, minutes=10) == KeepWarm(270.0, 2)
    assert keep_warm_of(cached, minutes=0) == KeepWarm(270.0, 0)
    assert keep_warm_of(AnthropicProvider(api_key="k", model=MODEL, prompt_caching=False)) == NEVER_WARM
    assert keep_warm_of(DemoProvider()) == NEVER_WARM
    assert keep_warm_of(OpenAIProvider(api_key="k", model="gpt-4o")) == NEVER_WARM


def test_the_setting():
    assert minutes_from({}) is None
    assert minutes_from({"TUI_AGENT_KEEP_WARM": "0"}) == 0
    assert minutes_from({"TUI_AGENT_KEEP_WARM": "30"}, flag=5) == 5
    for bad in ("soon", "-1", "nan"):
        with pytest.raises(ValueError, match="takes minutes"):
            minutes_from({"TUI_AGENT_KEEP_WARM": bad})


def _warmers(session: Session) -> list[Warmer]:
    return [getattr(listener, "__self__") for listener in session.listeners
            if isinstance(getattr(listener, "__self__", None), Warmer)]


def test_the_door_keeps_live_faces_warm_and_never_headless(tmp_path):
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_MODEL": MODEL}
    live = open_session(SessionOptions(workspace=tmp_path, face="tui", env=env)).session
    (warmer,) = _warmers(live)
    # --idle auto (the default): every slot within the hour, each decided by the priced policy (idle_policy.py)
    assert warmer.settings() == KeepWarm(270.0, 13) and warmer.aclose in live.closers
    pinging = open_session(SessionOptions(workspace=tmp_path, face="tui", env={**env, "TUI_AGENT_IDLE": "ping"}))
    assert _warmers(pinging.session)[0].settings() == KeepWarm(270.0, 12) and pinging.idle == "ping"  # as before
    cold = open_session(SessionOptions(workspace=tmp_path, face="tui", idle="cold", env=env))
    assert _warmers(cold.session)[0].settings() == NEVER_WARM and cold.idle == "cold"
    with pytest.raises(SessionRefused, match="TUI_AGENT_IDLE takes auto, ping, compact, cold"):
        open_session(SessionOptions(workspace=tmp_path, face="tui", env={**env, "TUI_AGENT_IDLE": "sometimes"}))
    acp = open_session(SessionOptions(workspace=tmp_path, face="acp", env={**env, "TUI_AGENT_KEEP_WARM": "9"}))
    assert _warmers(acp.session)[0].settings() == KeepWarm(270.0, 2)
    headless = open_session(SessionOptions(workspace=tmp_path, face="headless", headless=True, env=env)).session
    assert _warmers(headless) == []  # -p exits after its turn: it never pings
    with pytest.raises(SessionRefused, match="takes minutes"):
        open_session(SessionOptions(workspace=tmp_path, face="tui", env={**env, "TUI_AGENT_KEEP_WARM": "x"}))


def test_the_meter_line():
    assert warm_line(3, 12, 252.4, 0.004) == "kept warm: ping 3 of 12, next in 4:12 · pings so far ≈$0.0040"
    assert warm_line(12, 12, 0, None) == "kept warm: ping 12 of 12, the last"
    assert warm_line(0, 12, 269.9, None) == "keeps warm while idle: first ping in 4:29 (up to 12)"
    # `--idle auto` prices each ping when it is due: the slots are a ceiling, and the line says so
    assert warm_line(0, 13, 269.9, None, decided=True) == \
        "keeps warm while idle: first ping in 4:29 (up to 13, each only if the cheapest)"
    assert warm_line(3, 13, 252.4, None, decided=True) == "kept warm: ping 3 of up to 13, next in 4:12"


async def test_a_call_after_a_warm_gap_is_not_told_the_cache_went_cold(tmp_path):
    """The loop's cold check (`went_cold`) and the miss reading both use `warm_since`: a ping moves it."""
    from tui_agent.core.cache_clock import went_cold

    fake = FakeAnthropic(model=lambda body: text("Hello."))
    with fake:
        session = _session(fake, tmp_path)
        ticks, _ = _warming(session, KeepWarm(270, 1))
        await run(session, "hello")
        session.state.warm_since = time.monotonic() - 280  # the call was sent 280 s ago, the ping is due
        ticks.tick()
        await wait_until(lambda: session.ledger.pings == 1, what="the ping")
        assert not went_cold(session.state.warm_since, MODEL, now=time.monotonic() + 100)  # 380 s after the call
        await session.aclose()


async def test_pings_change_nothing_a_resumed_session_sends(tmp_path):
    """Journal a session whose idle gaps were kept warm, resume it in a new session: the next request is the
    one the old session would send, byte for byte as posted, and the same as a session that never pinged."""
    from tui_agent.core.journal.reader import read_journal
    from tui_agent.core.journal.resume import resume_journaled
    from tui_agent.core.journal.writer import journal_of, start_journal

    async def play(ping: bool, data: str) -> Session:
        session = _session(fake, tmp_path)
        environ = {"TUI_AGENT_DATA_DIR": str(tmp_path / data)}
        start_journal(session, environ=environ)
        ticks, _ = _warming(session, KeepWarm(270, 3) if ping else NEVER_WARM)
        for prompt in ("hello", "and then?", "one more"):
            await run(session, prompt)
            if ping:
                ticks.tick()
                await wait_until(lambda: session.ledger.warm is not None, what="a ping in the gap")
        return session

    fake = FakeAnthropic(model=lambda body: text(f"Answer {len(body['messages'])}."))
    with fake:
        warmed, plain = await play(True, "a"), await play(False, "b")
        assert warmed.ledger.pings == 3 and plain.ledger.pings == 0
        journal_of(warmed).close()
        fresh = _session(fake, tmp_path)
        resume_journaled(fresh, read_journal(journal_of(warmed).path), {"TUI_AGENT_DATA_DIR": str(tmp_path / "a")})
        bodies = [s.provider.outbound_body(s.next_request()) for s in (warmed, fresh, plain)]
        for session in (warmed, fresh, plain):
            await session.aclose()
    assert bodies[0] == bodies[1] == bodies[2]
    assert fresh.history == warmed.history and fresh.usage_history == warmed.usage_history
    # what the pings cost is journaled: the resumed meter's money is the quit session's (no call of it, and no
    # "kept warm" line until this process pings)
    assert (fresh.ledger.pings, fresh.ledger.ping_read_tokens) == (3, warmed.ledger.ping_read_tokens)
    assert fresh.ledger.ping_cost == pytest.approx(warmed.ledger.ping_cost) and warmed.ledger.ping_cost > 0
    assert fresh.ledger.warm is None and plain.ledger.ping_cost == 0


async def test_a_long_tool_is_kept_warm_and_the_next_call_goes_on(tmp_path):
    """Idle is also the agent waiting for a tool: the ping goes out while the tool runs, and the call after
    the tool cancels whatever is left."""
    from tests.fakes.fake_anthropic import tool_use
    from tui_agent.core.tools import ToolOutput
    from tui_agent.core.tools.base import Tool, ToolContext

    release = asyncio.Event()

    class Slow(Tool):
        name = "Slow"
        description = "Waits until released."
        input_schema = {"type": "object", "properties": {}}

        async def call(self, tool_input, ctx: ToolContext) -> ToolOutput:
            await release.wait()
            return ToolOutput("done")

    fake = FakeAnthropic(replies=[tool_use("Slow", {}, "toolu_slow")], model=lambda body: text("Finished."))
    with fake:
        provider = AnthropicProvider(api_key="test-key", base_url=fake.base_url, model=MODEL, retry=FAST_RETRY)
        session = Session(provider, ToolRegistry([Slow()]), workspace=tmp_path)
        ticks, warmer = _warming(session, KeepWarm(270, 5))
        turn = asyncio.create_task(run(session, "wait for it", {"Slow": PermissionDecision.ALLOW_ONCE}))
        await wait_until(lambda: ticks.waits == 1, what="the tool to be running", task=turn)
        ticks.tick()
        await wait_until(lambda: session.ledger.pings == 1, what="a ping during the tool", task=turn)
        pending = warmer.task
        release.set()
        assert ended(await turn).reason == "completed"
        requests = [r["body"] for r in fake.message_requests]
        await session.aclose()
    assert pending is not None and pending.cancelled()
    assert len(requests) == 3 and requests[1] == {**requests[0], "max_tokens": 0}


def test_the_flag_is_the_variable(monkeypatch):
    from tui_agent.faces.arguments import build_parser
    from tui_agent.faces.cli import _flags_to_env

    monkeypatch.setenv("TUI_AGENT_KEEP_WARM", "")  # recorded: the test leaves the variable as it found it
    _flags_to_env(build_parser().parse_args(["--keep-warm", "10"]))
    import os

    assert os.environ["TUI_AGENT_KEEP_WARM"] == "10" and minutes_from(os.environ) == 10
    _flags_to_env(build_parser().parse_args(["serve", "--keep-warm", "0"]))  # serve's tabs inherit it
    assert os.environ["TUI_AGENT_KEEP_WARM"] == "0"
    monkeypatch.setenv("TUI_AGENT_IDLE", "")
    _flags_to_env(build_parser().parse_args(["--idle", "compact"]))  # the TUI, -p, serve's tabs: one variable
    assert os.environ["TUI_AGENT_IDLE"] == "compact"


async def test_a_ping_in_flight_is_cancelled_by_a_new_prompt(tmp_path):
    """The server holds the ping's stream open (no `message_start` yet) when the person sends a prompt: the
    ping is cancelled (its response closed), the call goes out and is answered, nothing is told of the ping."""
    stalled = Reply(chunks=message_events(text("x")), stall_after=0)
    fake = FakeAnthropic(replies=[text("Hello."), stalled], model=lambda body: text("Answered."))
    with fake:
        session = _session(fake, tmp_path)
        ticks, warmer = _warming(session, KeepWarm(270, 5))
        seen = _heard(session)
        await run(session, "hello")
        pending = warmer.task
        ticks.tick()
        await asyncio.to_thread(fake.stalled.wait, 10)  # the ping's request reached the server
        events = await run(session, "are you there?")
        await asyncio.sleep(0)
        assert pending is not None and pending.cancelled()
        await session.aclose()
    assert ended(events).reason == "completed" and seen == []
    assert len(fake.message_requests) == 3 and session.ledger.pings == 0
