"""`/resume` in the TUI: the picker lists this workspace's saved sessions (first prompt, last activity,
messages, tokens, model), typing filters it, Enter resumes into the running app (chat, panel, title and
journal follow); Esc leaves everything as it was. `/export` writes the session as Markdown or JSONL."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, OptionList

from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.writer import journal_of, start_journal
from tui_agent.core.providers.scripted import text_reply, tool_reply
from tui_agent.ui.screens.main import MainScreen
from tui_agent.ui.screens.resume_picker import ResumePicker
from tui_agent.ui.widgets.assistant_reply import AssistantReply
from tui_agent.ui.widgets.history_rows import HistoryRows
from tui_agent.ui.widgets.user_message import UserMessage

from .support import make_app, make_repo, scripted_session, send


async def saved_session(workspace: Path, prompt: str, replies: list) -> str:
    session = scripted_session(workspace, replies)
    start_journal(session)
    async for _ in session.run_turn(prompt):
        pass
    return session.session_id


async def test_resume_picker_filters_and_resumes_into_the_app(tmp_path) -> None:
    repo = make_repo(tmp_path)
    elsewhere = make_repo(tmp_path, "elsewhere")
    parser_id = await saved_session(repo, "fix the parser bug", [
        tool_reply("Read", {"file_path": "src/app.py"}, "toolu_r1", "Reading the parser."), text_reply("Fixed it.")])
    await saved_session(repo, "write the README", [text_reply("Done.")])
    await saved_session(elsewhere, "not this workspace", [text_reply("No.")])

    session = scripted_session(repo, [text_reply("Still fixed.")])
    start_journal(session)
    app = make_app(session)
    async with app.run_test(size=(130, 40)) as pilot:
        await send(pilot, "/resume")
        picker = app.screen
        assert isinstance(picker, ResumePicker)
        options = picker.query_one(OptionList)
        assert options.option_count == 2
        rows = [str(options.get_option_at_index(i).prompt) for i in range(2)]
        assert "write the README" in rows[0] and "fix the parser bug" in rows[1]  # newest first
        assert "4 msgs" in rows[1] and "scripted" in rows[1] and " tok" in rows[1]
        await pilot.press(*"parser")
        assert options.option_count == 1
        await pilot.press("x", "y", "z")
        assert not options.display  # nothing matches: a line says so instead
        for _ in range(3):
            await pilot.press("backspace")
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        main = app.screen
        assert isinstance(main, MainScreen)
        assert session.session_id == parser_id
        assert session.history == read_journal(journal_of(session).path).history and len(session.history) == 4
        assert [m.text for m in main.query(UserMessage)] == ["fix the parser bug"]
        assert [r.text for r in main.query(AssistantReply)] == ["Reading the parser.", "Fixed it."]
        assert len(main.query_one(HistoryRows).index.rows) == 4  # the panel shows the resumed history at once
        assert parser_id in main.sub_title
        await send(pilot, "is it still fixed?")
        load = read_journal(journal_of(session).path)
        assert [m["content"][0]["text"] for m in load.history[-2:]] == ["is it still fixed?", "Still fixed."]


async def test_escape_leaves_the_session_alone(tmp_path) -> None:
    repo = make_repo(tmp_path)
    await saved_session(repo, "an old conversation", [text_reply("Old.")])
    session = scripted_session(repo, [text_reply("New.")])
    start_journal(session)
    app = make_app(session)
    async with app.run_test(size=(130, 40)) as pilot:
        await send(pilot, "a new conversation")
        before = list(session.history)
        await send(pilot, "/resume")
        assert isinstance(app.screen, ResumePicker)
        assert app.screen.query_one(Input).has_focus
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen) and session.history == before


async def test_export_writes_markdown_and_jsonl(tmp_path) -> None:
    repo = make_repo(tmp_path)
    session = scripted_session(repo, [tool_reply("Read", {"file_path": "README.md"}, "toolu_1"), text_reply("A demo.")])
    journal = start_journal(session)
    app = make_app(session)
    async with app.run_test(size=(130, 40)) as pilot:
        await send(pilot, "/export")
        assert "Nothing to export" in list(app.screen.query("NoticeLine"))[-1].text
        await send(pilot, "what is this repo?")
        await send(pilot, "/export session.md")
        text = (repo / "session.md").read_text()
        assert "## 1. user\n\nwhat is this repo?" in text and "<summary>tool call: Read (toolu_1)</summary>" in text
        assert "A demo." in text and text.count("> ▶ **call ") == 2
        await send(pilot, f"/export {tmp_path / 'copy.jsonl'}")
        assert (tmp_path / "copy.jsonl").read_text() == journal.path.read_text()
        await send(pilot, "/export /nonexistent-dir/x.md")
        assert "Cannot write" in list(app.screen.query("NoticeLine"))[-1].text


async def test_a_session_resumed_at_start_is_drawn_at_once(tmp_path) -> None:
    """`tui-agent --continue`: chat, panel (the next call's plan) and cost are there on the first frame."""
    from tui_agent.core.journal.resume import resume_journaled
    from tui_agent.core.providers.base import UsageInfo
    from tui_agent.core.providers.scripted import ScriptedProvider

    repo = make_repo(tmp_path)
    provider = ScriptedProvider(replies=[text_reply("Here it is.")], usage=UsageInfo(1000, 50, 0, 0),
                                model="claude-sonnet-5")
    first = scripted_session(repo, [], provider=provider)
    start_journal(first)
    async for _ in first.run_turn("show me the app"):
        pass
    journal_of(first).close()  # the old process is gone, and its journal lock with it
    fresh = scripted_session(repo, [], provider=ScriptedProvider(model="claude-sonnet-5"))
    _, notices = resume_journaled(fresh, read_journal(journal_of(first).path))
    app = make_app(fresh, startup_notices=notices, resumed=True)
    async with app.run_test(size=(130, 40)) as pilot:
        await pilot.pause()
        main = app.screen
        assert [m.text for m in main.query(UserMessage)] == ["show me the app"]
        assert any("Resumed session" in n.text for n in main.query("NoticeLine"))
        assert main.panel.meter.meter is not None and main.panel.meter.meter.label == "Next call"
        assert main.panel.cost_text.startswith("$")  # the resumed usage is priced again


async def test_bare_resume_opens_the_picker_at_start(tmp_path) -> None:
    repo = make_repo(tmp_path)
    await saved_session(repo, "pick me", [text_reply("Picked.")])
    app = make_app(scripted_session(repo, []), pick_session=True)
    async with app.run_test(size=(130, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ResumePicker)
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        assert app.screen.session.history[0]["content"][0]["text"] == "pick me"
