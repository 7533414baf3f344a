"""The compaction events agree everywhere (issue 40): `/compact`'s event is in the journal's event field and the
panel's list, an undone event is listed but not counted (the ledger, `-p`'s line, a resumed meter, the
export), the export names the events, and `/undo-compaction`'s "no event until ≈N" holds at the next call."""

from __future__ import annotations

import re
from pathlib import Path

from tests.core.agent.test_call_plan import play, small_session
from tests.journal.helpers import run
from tui_agent.core import events as ev
from tui_agent.core.agent.compaction_control import undo_compaction
from tui_agent.core.journal.export import markdown_of
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.writer import journal_of, start_journal

MEDIUM = "".join(f"line {n}: " + "z" * 90 + "\n" for n in range(170))  # ≈4.4k tokens: two fit the 11k budget


async def test_undo_keeps_its_promise_at_the_next_call(tmp_path: Path) -> None:
    """Results cut on read as usual (the default): the hold was computed from a preview that cut them, so
    "no event until ≈2.3k" stood beside a 9.4k request and the next call was an event."""
    session = small_session(tmp_path)
    (tmp_path / "big.txt").write_text(MEDIUM)
    await play(session, range(3))  # the third turn's event masks an older result: an event to undo
    said = undo_compaction(session)
    hold = int(float(re.search(r"no event until it passes ≈([\d.]+)k", said).group(1)) * 1000)
    session.provider.replies = [[{"type": "text", "text": "a short answer"}]]
    seen = await run(session, "one more")
    planned = [e.plan for e in seen if isinstance(e, ev.CompactionReported)]
    assert [p.event for p in planned] == [None], said  # no event of any kind, not even a cut
    assert planned[0].estimated_tokens <= hold + 100, (planned[0].estimated_tokens, said)


async def test_compact_and_undo_are_counted_alike_everywhere(tmp_path: Path) -> None:
    session = small_session(tmp_path)
    start_journal(session)
    await play(session, range(2))
    before = session.ledger.event_count
    session.provider.replies = [[{"type": "text", "text": "The user asked two questions."}]]
    assert (await session.compact_now()).startswith("Compacted now")
    await session.wait_summary()
    session.provider.replies = [[{"type": "text", "text": "after the compaction"}]]
    seen = await run(session, "question 2")
    asked = [e.plan.event for e in seen if isinstance(e, ev.CompactionReported) and e.plan.event is not None]
    assert len(asked) == 1 and "you asked" in asked[0].reason  # the call that sends /compact's event reports it
    assert session.ledger.event_count == before + 1
    assert session.ledger.timeline()[-1].event.call == asked[0].call  # the panel's list
    assert sum("compaction event" in n.text for n in seen if isinstance(n, ev.Notice)) == 0  # (said at /compact)
    journal = journal_of(session)
    calls = read_journal(journal.path).calls
    assert [c.call for c in calls if c.event and "you asked" in c.event] == [asked[0].call]  # its event field

    assert undo_compaction(session).startswith("Took back the compaction event")
    assert session.ledger.event_count == before  # listed, no longer counted
    assert session.ledger.timeline()[-1].line.endswith("· undone")
    assert f"{before} compaction event" in session.ledger.summary_line()
    journal.close()
    load = read_journal(journal.path)
    assert [c.call for c in load.calls if c.undone] == [asked[0].call]
    made = [c.call for c in load.calls if c.event and not c.undone]
    exported = markdown_of(load)
    assert f"**compaction events:** {len(made)} (" in exported and f"1 undone: call {asked[0].call}" in exported
    assert len(made) == before
