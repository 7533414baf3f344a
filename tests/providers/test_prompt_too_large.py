"""A prompt that cannot fit never locks the session (issue 40), against the strict fake Claude (real SDK, real
HTTP; it validates every request and refuses one over its limit as the API does).

- A prompt the engine's own estimate knows cannot fit is refused before it is sent: no request, nothing added
  to the history, one line that says how large it is, what fits and what to do.
- A history that already holds such a prompt (a journal written before the refusal, or a prompt whose
  estimate fitted and real size did not) goes on: the prompt is sent clipped (its beginning and end, a note
  between them), decided once and repeated byte for byte, the history keeps it whole.
"""

from __future__ import annotations

from tests.fakes.fake_anthropic import FakeAnthropic, text
from tests.providers.conftest import ended, run
from tests.providers.test_compaction_real_sdk import session_on
from tui_agent.core import events as ev
from tests.core.helpers import assistant_text
from tui_agent.core.messages import protocol_errors, user_text

WINDOW = 20_000
HUGE = "BEGINNING of a pasted log\n" + "line of the log 0123456789\n" * 6_000 + "THE QUESTION AT THE END?"


def sent_texts(request: dict) -> list[str]:
    return [b["text"] for m in request["body"]["messages"] for b in m["content"] if b.get("type") == "text"]


async def test_a_prompt_larger_than_the_window_is_refused_before_it_is_sent(tmp_path):
    fake = FakeAnthropic(model=lambda body: text("fine"), token_limit=WINDOW)
    with fake:
        session = session_on(fake, tmp_path, WINDOW, 5)
        events = await run(session, HUGE)
        refused = ended(events)
        assert refused.reason == "error" and refused.turn_calls == 0
        assert "Not sent" in refused.error and "Shorten it by at least" in refused.error
        assert f"{WINDOW:,}-token window" in refused.error
        assert not any(isinstance(e, (ev.TurnStarted, ev.ModelCallStarted)) for e in events)
        assert fake.message_requests == [] and session.history == []
        assert ended(await run(session, "a short one")).reason == "completed"  # the session goes on
        await session.aclose()
    assert fake.violations == [] and fake.rejected == []


async def test_a_history_holding_a_prompt_over_the_window_goes_on(tmp_path):
    """The old journal of issue 40: its over-window prompt failed, and every later call was too long."""
    fake = FakeAnthropic(model=lambda body: text("fine"), token_limit=WINDOW)
    with fake:
        session = session_on(fake, tmp_path, WINDOW, 5)
        session.history += [user_text("hello"), assistant_text("hi"), user_text(HUGE)]  # as the journal holds it
        first = await run(session, "and now?")
        assert ended(first).reason == "completed", ended(first)
        assert ended(await run(session, "more")).reason == "completed"
        await session.aclose()
    assert fake.violations == [] and fake.rejected == []
    clipped = [t for t in sent_texts(fake.message_requests[0]) if t.startswith("BEGINNING")]
    assert len(clipped) == 1 and clipped[0].endswith("THE QUESTION AT THE END?")  # its beginning and end
    assert "characters are not sent here" in clipped[0] and len(clipped[0]) < len(HUGE) // 4
    assert clipped == [t for t in sent_texts(fake.message_requests[1]) if t.startswith("BEGINNING")]  # sticky
    assert session.history[2] == user_text(HUGE)  # outbound only: the history keeps it whole
    assert protocol_errors(session.history) == []
    notices = [e.text for e in first if isinstance(e, ev.Notice)]
    assert any("clipped a prompt larger than the window" in n for n in notices), notices  # never silently


async def test_a_prompt_the_estimate_fitted_is_clipped_when_the_api_refuses_it(tmp_path):
    """The app is told a 100k window, the server enforces 20k: the prompt passes the engine's check, the API
    says "prompt is too long", and the retry (the same call) sends it clipped to the window it revealed."""
    fake = FakeAnthropic(model=lambda body: text("fine"), token_limit=WINDOW)
    with fake:
        session = session_on(fake, tmp_path, 100_000, 5)
        events = await run(session, HUGE)
        await session.aclose()
    assert ended(events).reason == "completed", ended(events)
    assert len(fake.rejected) == 1 and fake.violations == []
    assert any(t.startswith("BEGINNING") and "not sent here" in t for t in sent_texts(fake.message_requests[-1]))


async def test_compact_on_such_a_history_says_what_it_did(tmp_path):
    fake = FakeAnthropic(model=lambda body: text("fine"), token_limit=WINDOW)
    with fake:
        session = session_on(fake, tmp_path, WINDOW, 5)
        session.history.append(user_text(HUGE))
        said = await session.compact_now()
        assert "Nothing to compact" not in said and "clipped a prompt larger than the window" in said, said
        assert ended(await run(session, "go on")).reason == "completed"
        await session.aclose()
    assert fake.violations == [] and fake.rejected == []


def test_the_clip_decision_is_saved_and_restored_with_the_same_request(tmp_path):
    from tui_agent.core.compaction import CompactPolicy, Compactor

    history = [user_text("hello"), assistant_text("hi"), user_text(HUGE), user_text("and now?")]
    policy = CompactPolicy(context_window=WINDOW, max_output_tokens=4_000)
    compactor = Compactor(policy, 1_000)
    sent = compactor.compact(history, 1).messages
    assert "characters are not sent here" in str(sent[2])
    restored = Compactor(policy, 1_000)
    assert restored.import_state(history, compactor.export_state()) is None
    assert restored.compact(history + [assistant_text("ok"), user_text("more")], 2).messages[:4] == sent
