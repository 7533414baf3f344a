"""One call plan and one call counter (issue 16, items 5 and 6): the preview is the call, byte for byte and
by number; `/clear` starts again at call 1 with no compaction event; the session tells every change of the
next request (`NextRequestChanged`) and names the right call in it."""

from __future__ import annotations

from pathlib import Path

from tests.journal.helpers import LocalClaude, run, session_on
from tui_agent.core import events as ev
from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.messages import protocol_errors
from tui_agent.core.agent.session import Session

BIG = "".join(f"line {n}: " + "z" * 90 + "\n" for n in range(300))


def replies(turn: int) -> list[list[dict]]:
    return [[{"type": "tool_use", "id": f"toolu_{turn}", "name": "Read", "input": {"file_path": "big.txt"}}],
            [{"type": "text", "text": f"answer {turn}"}]]


def small_session(tmp_path: Path) -> Session:
    (tmp_path / "big.txt").write_text(BIG)
    provider = LocalClaude(context_window=12_000, max_output_tokens=1_000)
    session = session_on(tmp_path, provider)
    session.compact_policy = CompactPolicy(high_water=0.6, low_water=0.1)  # compaction 4's marks: events often
    session.switch_compaction("v2")  # the compactor is made again with that policy
    return session


async def play(session: Session, turns: range) -> None:
    for turn in turns:
        session.provider.replies = replies(turn)
        await run(session, f"question {turn}")


async def test_the_preview_is_the_call_in_bytes_and_number(tmp_path: Path) -> None:
    """`--print-outbound PROMPT` (the preview with the prompt put on a copy) is what the turn's first call
    POSTs, over turns that make the compactor cut, mask and drop; and the call it names is that call."""
    from tui_agent.core.agent.outbound import next_outbound_body

    session = small_session(tmp_path)
    for turn in range(6):
        expected = next_outbound_body(session, f"question {turn}")
        number = session.next_call
        sent = len(session.provider.bodies)
        session.provider.replies = replies(turn)
        seen = await run(session, f"question {turn}")
        assert session.provider.bodies[sent] == expected
        first = next(e for e in seen if isinstance(e, ev.CompactionReported))
        assert first.call == first.plan.call == number


async def test_the_next_call_after_clear_is_call_one_with_no_compaction_event(tmp_path: Path) -> None:
    session = small_session(tmp_path)
    await play(session, range(5))
    assert session.state.calls == 10
    assert session.plan_call().plan.call == 11
    session.clear()
    session.history.append({"role": "user", "content": [{"type": "text", "text": "a new question"}]})
    preview = session.plan_call()
    assert preview.plan.call == 1  # the preview named "call 6" here (the compactor's own counter)
    assert preview.plan.event is None  # no "history replaced" event for a /clear
    session.history.pop()
    session.provider.replies = [[{"type": "text", "text": "fresh"}]]
    seen = await run(session, "a new question")
    reported = [e for e in seen if isinstance(e, ev.CompactionReported)]
    assert [e.call for e in reported] == [1] and reported[0].plan.call == 1
    assert reported[0].plan.event is None
    assert session.provider.bodies[-1] == session.provider.outbound_body(preview.request)


async def test_the_session_tells_every_change_of_the_next_request(tmp_path: Path) -> None:
    session = small_session(tmp_path)
    told: list[ev.NextRequestChanged] = []
    session.listeners.append(lambda event: told.append(event) if isinstance(event, ev.NextRequestChanged) else None)
    await play(session, range(3))
    assert [t.why for t in told] == ["turn end"] * 3
    session.pin(0)
    session.exclude(2)
    session.expand(2)
    assert [t.why for t in told[3:]] == ["pin", "exclude", "expand"]
    session.provider.replies = [[{"type": "text", "text": "The user asked three questions."}]]
    await session.compact_now()
    assert told[-1].why == "/compact"
    await session.wait_summary()
    assert told[-1].why == "summary ready"  # the background summary joined the recap: told again
    await session.switch_model(LocalClaude(model="claude-other", context_window=12_000, max_output_tokens=1_000))
    assert told[-1].why == "/model"
    for t in told:
        assert protocol_errors(t.plan.request.messages) == []
    last = told[-1].plan
    assert last.call == session.next_call == 7
    assert last.request == session.plan_call().request  # what was told is what the next call sends
    session.clear()
    assert told[-1].why == "/clear" and told[-1].plan.call == 1 and told[-1].plan.request.messages == []


async def test_compact_now_plans_the_next_call_and_that_call_sends_it(tmp_path: Path) -> None:
    session = small_session(tmp_path)
    await play(session, range(3))
    session.provider.replies = [[{"type": "text", "text": "The user asked three questions."}]]
    note = await session.compact_now()
    assert note.startswith("Compacted now")
    await session.wait_summary()  # the summary is written in the background and swapped in when ready
    shown = session.plan_call()
    assert shown.call == 7 and shown.plan.recap_position is not None
    session.provider.replies = [[{"type": "text", "text": "done"}]]
    calls_before = len(session.provider.bodies)
    history = list(session.history)
    session.history.append({"role": "user", "content": [{"type": "text", "text": "next"}]})
    expected = session.provider.outbound_body(session.plan_call().request)
    session.history[:] = history
    await run(session, "next")
    assert session.provider.bodies[calls_before] == expected


async def test_planning_the_next_call_keeps_no_decision(tmp_path: Path) -> None:
    """The panel's next call, `--print-outbound` and every NextRequestChanged plan a preview: it must leave
    the compactor's state exactly as it was."""
    from tui_agent.core.providers.base import UsageInfo

    # the round trip's smallest failing draw: one turn at a 2.5k window, real usage far over the estimate
    session = session_on(tmp_path, LocalClaude(context_window=2_500, max_output_tokens=1_000,
                                               usage=UsageInfo(1_486, 20, 0, 0)))
    for _ in range(2):
        session.provider.replies = [[{"type": "text", "text": "0"}]]
        await run(session, "0")
    before = session.compactor.export_state()
    assert before["drop_reasons"]  # a drop was made: there is a reason to keep
    for _ in range(3):
        session.plan_call()
    assert session.compactor.export_state() == before
