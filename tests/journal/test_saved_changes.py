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
from tui_agent.core.session import Session

from .helpers import LocalClaude, run, session_on

BIG = "".join(f"line {n}: " + "q" * 90 + "\n" for n in range(200))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return root


def claude() -> LocalClaude:
    # every call counted at 3,000 tokens: enough that /compact has something worth dropping (at 900 the
    # drop that /compact made here only seemed to free room: a cut copy was sized as new, issue 16 item 7)
    return LocalClaude(context_window=40_000, max_output_tokens=1_000, usage=UsageInfo(3000, 20, 0, 0))


async def three_prompts(workspace: Path) -> Session:
    (workspace / "big.txt").write_text(BIG)
    session = session_on(workspace, claude())
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
