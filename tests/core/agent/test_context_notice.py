"""The "N tokens left" notice: told only when it matters, outbound only, after the last cache breakpoint."""

from __future__ import annotations

from tui_agent.core.compaction.summary import is_summary_request

from dataclasses import replace

from tests.core.tools.test_context_tool import EXPLORING
from tests.faces.test_demo_and_headless import make_repo, run
from tui_agent.core import events as ev
from tui_agent.core.compaction.plan import CompactPlan
from tui_agent.core.agent.context_notice import NOTICE_MARK, context_notice
from tui_agent.core.agent.factory import build_session
from tui_agent.core.messages import user_text
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.providers.base import ModelRequest, with_notice


def plan(**kwargs) -> CompactPlan:
    return CompactPlan(mode="v2", enabled=True, call=3, history_len=4, budget_tokens=10_000, **kwargs)


def test_told_only_when_the_budget_is_short_or_an_event_took_something_out():
    assert context_notice(plan(estimated_tokens=2_000)) == ""
    short = context_notice(plan(estimated_tokens=8_000))
    assert short.startswith(NOTICE_MARK) and "≈2.0k tokens left of 10.0k" in short
    assert context_notice(plan(estimated_tokens=10_500)).startswith(f"{NOTICE_MARK} ≈0 tokens left")


async def test_a_demo_session_tells_at_its_events_and_keeps_it_out_of_history_and_messages(tmp_path):
    session, _ = build_session(make_repo(tmp_path), model="demo", headless=True, context_window=16_000)
    seen: list[ModelRequest] = []
    stream = session.provider.stream

    def spy(request):
        if not is_summary_request(request.messages):  # the background summary's own call is no turn's call
            seen.append(request)
        return stream(request)

    session.provider.stream = spy  # type: ignore[method-assign]
    reported = []
    for prompt in [*EXPLORING, "what does docs/guide.md say?", "what does tests/test_core.py test?"]:
        reported += [e.plan for e in await run(session, prompt) if isinstance(e, ev.CompactionReported)]
    assert len(seen) == len(reported)
    told = [k for k, request in enumerate(seen) if request.notice]
    assert told, "the demo's window makes events, and each is told"
    for k, (request, p) in enumerate(zip(seen, reported)):
        assert bool(request.notice) == bool(context_notice(p)) and request.notice == context_notice(p)
        assert NOTICE_MARK not in str(request.messages), "outbound only: not in the planned messages"
        if request.notice:
            assert request.sent_messages[-1]["content"][-1] == {"type": "text", "text": request.notice}
            assert request.sent_messages[:-1] == request.messages[:-1]
    assert any(reported[k].event is not None and "drop" in reported[k].event.kinds for k in told)
    assert NOTICE_MARK not in str(session.history)


def test_the_anthropic_body_puts_it_after_the_last_breakpoint():
    messages = [user_text("first"), {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
                user_text("second")]
    request = ModelRequest("claude-x", "system", messages, [], 100, stable_prefix=1, notice="N left")
    body = AnthropicProvider(api_key="k").build_params(request)
    last = body["messages"][-1]["content"]
    assert last[-1] == {"type": "text", "text": "N left"}
    assert last[0]["cache_control"] == {"type": "ephemeral"}
    without = AnthropicProvider(api_key="k").build_params(replace(request, notice=""))
    assert body["messages"][:-1] == without["messages"][:-1] and last[:-1] == without["messages"][-1]["content"]
    assert request.messages[-1] == user_text("second"), "the request is never mutated"
    assert with_notice(messages, "") is messages
