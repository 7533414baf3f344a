"""Every change of the next request is journaled (issue 16): three prompts, `/compact`, quit, resume —
the resumed session sends byte for byte the request the old process showed as next. Also after pins and
excludes between turns, and after `/clear` (the new file starts from call 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.resume import resume_journaled
from tui_agent.core.journal.writer import journal_of, start_journal
from tui_agent.core.providers.base import UsageInfo
from tui_agent.core.agent.session import Session

from .helpers import LocalClaude, run, session_on

BIG = "".join(f"line {n}: " + "q" * 90 + "\n" for n in range(200))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return root


def claude() -> LocalClaude:
    # usage the size of each request: a fixed 900 made the three 22k-char reads measure as a few tokens once
    # they were no longer cut on read (issue 17), so no drop would free more than its recap (and since issue
    # 16 item 7 a cut copy is sized at its own measured rate, so a small count no longer seems to free room)
    return LocalClaude(context_window=40_000, max_output_tokens=1_000, usage=UsageInfo(900, 20, 0, 0), sized=True)


async def three_prompts(workspace: Path, provider: LocalClaude | None = None) -> Session:
    (workspace / "big.txt").write_text(BIG)
    session = session_on(workspace, provider or claude())
    start_journal(session)
    for n in range(3):
        session.provider.replies = [
            [{"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {"file_path": "big.txt"}}],
            [{"type": "text", "text": f"answer {n}"}]]
        await run(session, f"question {n}")
    return session


def resumed(session: Session, workspace: Path) -> Session:
    fresh = session_on(workspace, claude())
    resume_journaled(fresh, read_journal(journal_of(session).path))
    return fresh


def body(session: Session) -> dict:
    return session.provider.outbound_body(session.next_request())


async def test_compact_then_quit_then_resume_sends_the_compacted_request(workspace: Path) -> None:
    session = await three_prompts(workspace)
    whole = body(session)
    session.provider.replies = [[{"type": "text", "text": "The user asked three questions about big.txt."}]]
    note = await session.compact_now()
    assert note.startswith("Compacted now"), note
    assert (await session.wait_summary()).state == "attached"  # written in the background, then swapped in
    shown = body(session)  # what the panel showed as next before quitting
    assert len(shown["messages"]) < len(whole["messages"])
    assert "three questions about big.txt" in str(shown["messages"])
    journal_of(session).close()  # quit
    fresh = resumed(session, workspace)
    assert body(fresh) == shown  # was: 12 whole messages, no recap, no summary
    assert fresh.usage_history == session.usage_history  # the summary call's usage, as a summary's
    assert [u.purpose for u in fresh.usage_history][-1] == "summary"


async def test_pins_and_excludes_between_turns_are_resumed(workspace: Path) -> None:
    session = await three_prompts(workspace)
    session.exclude(2)
    session.pin(0)
    shown = body(session)
    journal_of(session).close()
    assert body(resumed(session, workspace)) == shown


async def test_after_clear_the_resumed_session_is_the_new_conversation(workspace: Path) -> None:
    session = await three_prompts(workspace)
    session.clear()
    session.provider.replies = [[{"type": "text", "text": "fresh answer"}]]
    await run(session, "a new question")
    shown = body(session)
    journal_of(session).close()
    fresh = resumed(session, workspace)
    assert fresh.history == session.history and fresh.state.calls == session.state.calls == 1
    assert body(fresh) == shown


async def test_an_asked_compact_that_frees_nothing_says_precisely_why(workspace: Path) -> None:
    """/compact answered "the request holds only the newest round" whenever no drop was made, also when
    there were older messages whose recap would have been larger than they are (as measured)."""
    measured_tiny = LocalClaude(context_window=40_000, max_output_tokens=1_000, usage=UsageInfo(900, 20, 0, 0))
    session = await three_prompts(workspace, measured_tiny)
    note = await session.compact_now()
    assert note.startswith("Nothing to compact: dropping the 11 older messages"), note
    assert "would free less than the recap in their place costs" in note
