"""Issue 18: looking at a transcript (`--transcript`) is not a session. Its messages are saved only once
the user sends something; a view opened and closed leaves no file and no `sessions` entry."""

from __future__ import annotations

from pathlib import Path

from tui_agent.core.paths import sessions_dir
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.store import list_sessions
from tui_agent.core.messages import user_text
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply
from tui_agent.faces.sessions import journal_hook

from .helpers import run, session_on

SOURCE = "transcript /tmp/some-claude-log.jsonl"


def loaded(workspace: Path, replies: list | None = None):
    session = session_on(workspace, ScriptedProvider(replies=replies or []))
    session.history.extend([user_text("an old question"),
                            {"role": "assistant", "content": [{"type": "text", "text": "an old answer"}]}])
    return session


def saved() -> list[Path]:
    folder = sessions_dir()
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


async def test_a_transcript_only_looked_at_leaves_no_session(tmp_path) -> None:
    session = loaded(tmp_path)
    assert journal_hook(None, SOURCE, view=True)(session) == []
    session.pin(0)  # looking around the panel is not sending anything either
    await session.aclose()
    assert saved() == [] and list_sessions(tmp_path) == []


async def test_a_transcript_is_saved_once_the_user_sends_something(tmp_path) -> None:
    session = loaded(tmp_path, [text_reply("A new answer.")])
    journal_hook(None, SOURCE, view=True)(session)
    await run(session, "a new question")
    [path] = saved()
    load = read_journal(path)
    assert load.header.source == SOURCE
    assert [m["content"][0]["text"] for m in load.history] == [
        "an old question", "an old answer", "a new question", "A new answer."]
    [info] = list_sessions(tmp_path)
    assert info.session_id == session.session_id


async def test_a_new_session_is_still_saved_as_before(tmp_path) -> None:
    session = session_on(tmp_path, ScriptedProvider(replies=[text_reply("Hi.")]))
    journal_hook(None)(session)
    await run(session, "hello")
    assert len(saved()) == 1
