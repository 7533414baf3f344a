"""Taking a compaction event back (issue 30 item 4): `/undo-compaction` restores the decisions before the
last event, holds them (no event by the marks until the request grows a tenth of the budget past it, or
/compact), says what it costs, and is journaled so a resumed session sends byte for byte the same."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.core.agent.test_call_plan import play, replies, small_session
from tests.journal.helpers import LocalClaude, run, session_on
from tui_agent.core import events as ev
from tui_agent.core.agent.compaction_control import NOTHING_TO_UNDO, ONLY_THE_NEWEST, undo_compaction, undo_cost
from tui_agent.core.agent.session import Session
from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.resume import resume_journaled
from tui_agent.core.journal.writer import journal_of, start_journal
from tui_agent.core.messages import protocol_errors


def majors(seen: list) -> list[ev.CompactionReported]:
    return [e for e in seen if isinstance(e, ev.CompactionReported) and e.plan.event and e.plan.event.major]


MEDIUM = "".join(f"line {n}: " + "z" * 90 + "\n" for n in range(170))  # ≈4.4k tokens: two fit the 11k budget


def medium_session(tmp_path: Path) -> Session:
    """The 12k-window session of test_call_plan, reading a file half its size, results never cut on read:
    the second read is over the 7.2k mark and an event masks the first; taking it back still fits."""
    session = small_session(tmp_path)
    (tmp_path / "big.txt").write_text(MEDIUM)
    session.compactor.policy = replace(session.compactor.policy, cut_on_read=False)
    return session


async def evented(tmp_path: Path) -> Session:
    """Two turns of reads: call 4 is an event that masked the first read's result."""
    session = medium_session(tmp_path)
    await play(session, range(2))
    assert session.compactor.undoable is not None and session.compactor.undoable.call == 4
    return session


async def test_undo_brings_the_state_before_back_and_holds_it(tmp_path: Path) -> None:
    session = await evented(tmp_path)
    masked_before = set(session.plan_call().plan.masks)
    said = undo_compaction(session)
    assert said.startswith("Took back the compaction event of call #4"), said
    assert "written to the cache again in full" in said and "$" in said and "/compact" in said
    after = session.plan_call()
    assert protocol_errors(after.request.messages) == []
    assert set(after.plan.masks) < masked_before  # what the event masked is sent whole again
    assert after.plan.event is None and after.plan.estimated_tokens > after.plan.high_tokens  # held over the mark
    session.provider.replies = [[{"type": "text", "text": "a short answer"}]]
    assert majors(await run(session, "one more")) == []  # no immediate re-fire
    assert undo_compaction(session) == NOTHING_TO_UNDO


async def test_the_hold_ends_when_the_request_grows_past_it_or_at_compact(tmp_path: Path) -> None:
    session = await evented(tmp_path)
    undo_compaction(session)
    hold = session.compactor.state.hold_until
    assert hold is not None
    session.provider.replies = replies(7)  # another big read: well past a tenth of the budget
    seen = await run(session, "question 7")
    assert majors(seen), "the request grew past the hold: the marks apply again"
    assert session.compactor.state.hold_until is None
    (tmp_path / "again").mkdir()
    other = await evented(tmp_path / "again")
    undo_compaction(other)
    other.provider.replies = [[{"type": "text", "text": "The user asked questions."}]]
    assert (await other.compact_now()).startswith("Compacted now")  # /compact ends the hold


async def test_an_undo_that_would_not_fit_the_window_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    session = await evented(tmp_path)
    undo_compaction(session)
    session.provider.replies = replies(9)
    await run(session, "question 9")  # another read: past the hold, compacted again
    body = session.provider.outbound_body(session.next_request())
    said = undo_compaction(session)
    assert said.startswith("The last compaction event cannot be taken back:") and "over the" in said, said
    assert session.provider.outbound_body(session.next_request()) == body


async def test_undo_is_journaled_and_the_resumed_twin_sends_the_same(tmp_path: Path) -> None:
    session = medium_session(tmp_path)
    start_journal(session)
    await play(session, range(2))
    undo_compaction(session)
    shown = session.provider.outbound_body(session.next_request())
    journal_of(session).close()
    assert '"action":"undo-event"' in journal_of(session).path.read_text()  # the undo itself is on record
    fresh = session_on(tmp_path, LocalClaude(context_window=12_000, max_output_tokens=1_000))
    fresh.compact_policy = CompactPolicy()
    fresh.compactor.policy = replace(fresh.compactor.policy, cut_on_read=False)
    resume_journaled(fresh, read_journal(journal_of(session).path))
    assert fresh.provider.outbound_body(fresh.next_request()) == shown
    assert fresh.compactor.state.hold_until == session.compactor.state.hold_until
    for twin in (session, fresh):
        twin.provider.replies = [[{"type": "text", "text": "same"}]]
        assert majors(await run(twin, "after the undo")) == []
    assert fresh.provider.bodies[-1] == session.provider.bodies[-1]


def test_the_price_of_an_undo_is_the_restored_request_written_again() -> None:
    cost = undo_cost("claude-sonnet-4-5", 20_000, 100_000, 120_000)
    assert cost.write_units == 125_000  # 1.25 × 100k at the 5-minute write price
    assert cost.dollars is not None and abs(cost.dollars - 0.375) < 1e-9  # $3 / M input
    assert "grows ≈20.0k → ≈100k tok" in cost.words() and "$0.3750" in cost.words()


async def test_an_asked_compact_is_taken_back_with_its_summary(tmp_path: Path) -> None:
    session = small_session(tmp_path)
    await play(session, range(2))
    decided = session.compactor.state.blocks  # the decisions the calls made (a preview's cut on read is none)
    session.provider.replies = [[{"type": "text", "text": "The user asked two questions."}]]
    assert (await session.compact_now()).startswith("Compacted now")
    assert session.plan_call().plan.recap is not None
    said = undo_compaction(session)
    assert said.startswith("Took back the compaction event"), said
    assert session.summary_draft() is None, "the summary of what is sent again is dropped"
    assert session.plan_call().plan.recap is None
    # the decisions before /compact, held: not even the cut on read the next call would have made (the undo
    # says "no event until ≈N", and a cut is an event on every list)
    assert session.compactor.state.blocks == decided and session.plan_call().plan.event is None


async def test_after_a_cut_on_read_alone_undo_does_not_deny_the_event(tmp_path: Path) -> None:
    """The only event so far cut a read result (not undoable: a cut on read stays); the line said "no
    compaction event happened since the session started", which the panel's list of events contradicted."""
    session = small_session(tmp_path)
    (tmp_path / "big.txt").write_text("".join(f"line {n}: " + "z" * 90 + "\n" for n in range(170)))
    seen = []
    for turn in range(2):
        session.provider.replies = replies(turn)
        seen += await run(session, f"question {turn}")
    events = [e.plan.event for e in seen if isinstance(e, ev.CompactionReported) and e.plan.event is not None]
    assert events and all(e.kinds == ("cut",) for e in events) and session.compactor.undoable is None
    said = undo_compaction(session)
    assert said == NOTHING_TO_UNDO and "a cut on read stays" in said and "happened" not in said


async def test_a_second_undo_says_only_the_newest_event_is_taken_back(tmp_path: Path) -> None:
    """Events at calls 4, 10 and 12; undo takes back 12; the one before it (10) is not undoable, and the line
    says so rather than that no event happened."""
    session = medium_session(tmp_path)
    await play(session, range(6))
    assert undo_compaction(session).startswith("Took back the compaction event of call #12")
    assert session.compactor.last_event is not None and session.compactor.last_event.call == 10
    assert undo_compaction(session) == ONLY_THE_NEWEST
