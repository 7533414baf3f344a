"""The journal on disk: what is written, when, with which permissions, and how a damaged or newer file
is read back."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tui_agent.core import events as ev
from tui_agent.core.journal import FORMAT_VERSION, JournalError
from tui_agent.core.paths import sessions_dir
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.resume import resume_journaled
from tui_agent.core.journal.writer import REDACTED, journal_of, start_journal
from tui_agent.core.messages import protocol_errors
from tui_agent.core.access.gate import PermissionDecision
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply

from .helpers import run, session_on


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "notes.txt").write_text("the answer is 42\n")
    return root


async def test_every_message_call_and_usage_is_on_disk_as_it_happens(workspace) -> None:
    from tui_agent.core.providers.base import UsageInfo

    provider = ScriptedProvider(replies=[tool_reply("Read", {"file_path": "notes.txt"}, "t1", "Reading."),
                                         text_reply("It says 42.")],
                                usage=UsageInfo(120, 8, 0, 0))
    session = session_on(workspace, provider)
    journal = start_journal(session)
    assert not journal.path.exists()  # nothing said yet: no empty file left behind
    seen_on_disk = []
    session.listeners.append(lambda event: seen_on_disk.append((type(event).__name__, len(records(journal.path)))))
    await run(session, "what do the notes say?")
    # the journal writes before any later listener (the faces) sees the event: a kill loses nothing shown
    kinds = [r["type"] for r in records(journal.path)]
    assert kinds[0] == "header"
    assert kinds.count("message") == len(session.history) == 4
    assert kinds.count("call") == 2 and kinds.count("usage") == 2
    assert dict(seen_on_disk)["AssistantMessage"] >= 4  # header, prompt, call, reply
    header = records(journal.path)[0]
    assert header["format"] == FORMAT_VERSION and header["session_id"] == session.session_id
    assert header["workspace"] == str(workspace) and header["model"] == "scripted"
    assert header["tui_agent_version"] and header["started"]
    assert stat.S_IMODE(journal.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(sessions_dir().stat().st_mode) == 0o700
    usage = [r for r in records(journal.path) if r["type"] == "usage"][0]
    assert usage["input_tokens"] == 120 and usage["calls"] == 1 and "calibration" in usage


async def test_secrets_never_reach_the_file(workspace, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value-123")
    session = session_on(workspace, ScriptedProvider(replies=[text_reply("Your key is sk-ant-secret-value-123.")]))
    journal = start_journal(session)
    await run(session, "my key is sk-ant-secret-value-123, remember it")
    text = journal.path.read_text()
    assert "sk-ant-secret-value-123" not in text and REDACTED in text
    assert "authorization" not in text.lower() and "x-api-key" not in text.lower()


async def test_permission_answers_are_recorded_by_request_id(workspace) -> None:
    session = session_on(workspace, ScriptedProvider(replies=[
        tool_reply("Touch", {"file_path": "a"}, "toolu_a"), tool_reply("Touch", {"file_path": "b"}, "toolu_b"),
        text_reply("done")]))
    journal = start_journal(session)
    events = await run(session, "touch a", {"Touch": PermissionDecision.ALLOW_ONCE})
    requested = [e for e in events if isinstance(e, ev.PermissionRequested)]
    answered = [e for e in events if isinstance(e, ev.PermissionAnswered)]
    assert [e.id for e in requested] == [e.id for e in answered] == ["toolu_a", "toolu_b"]
    on_disk = [r for r in records(journal.path) if r["type"] == "permission"]
    assert [(r["id"], r["tool"], r["decision"]) for r in on_disk] == [
        ("toolu_a", "Touch", "allow_once"), ("toolu_b", "Touch", "allow_once")]
    assert read_journal(journal.path).permissions[0]["id"] == "toolu_a"


async def test_switch_model_emits_an_event_and_resume_uses_the_last_model(workspace) -> None:
    session = session_on(workspace, ScriptedProvider(replies=[text_reply("one")]))
    journal = start_journal(session)
    events: list = []
    session.listeners.append(events.append)
    await run(session, "hi")
    new = ScriptedProvider(replies=[text_reply("two")], model="scripted-large")
    switched = await session.switch_model(new)
    assert switched == ev.ModelSwitched("scripted", "scripted-large", "scripted")
    assert switched in events and session.provider is new
    await run(session, "again")
    load = read_journal(journal.path)
    assert load.model == "scripted-large"
    assert [c.model for c in load.calls] == ["scripted", "scripted-large"]


async def test_clear_starts_a_new_file_that_links_back(workspace) -> None:
    session = session_on(workspace, ScriptedProvider(replies=[text_reply("one"), text_reply("two")]))
    first = start_journal(session)
    await run(session, "first conversation")
    first_id, first_path = session.session_id, first.path
    session.clear()
    assert session.session_id != first_id
    await run(session, "second conversation")
    old, new = read_journal(first_path), read_journal(journal_of(session).path)
    assert old.cleared_to == session.session_id and new.header.parent == first_id
    assert [m["content"][0]["text"] for m in new.history] == ["second conversation", "two"]
    assert len(old.history) == 2


async def test_a_corrupt_or_truncated_line_is_skipped_with_its_line_number(workspace) -> None:
    session = session_on(workspace, ScriptedProvider(replies=[text_reply("one"), text_reply("two")]))
    journal = start_journal(session)
    await run(session, "first")
    lines = journal.path.read_text().splitlines()
    lines.insert(2, "{not json")
    journal.path.write_text("\n".join(lines) + "\n" + '{"type":"message","index":2,"mess')  # cut by a kill
    load = read_journal(journal.path)
    assert len(load.history) == 2
    assert any("line 3" in w and "skipped" in w for w in load.warnings), load.warnings
    assert any(f"line {len(lines) + 1}" in w for w in load.warnings), load.warnings
    # resuming appends on a fresh line after the cut one, so the next read sees every new record
    journal.close()  # the old process is gone, and its journal lock with it
    fresh = session_on(workspace, ScriptedProvider(replies=[text_reply("three")]))
    resume_journaled(fresh, load)
    await run(fresh, "second")
    again = read_journal(journal.path)
    assert [m["content"][0]["text"] for m in again.history] == ["first", "one", "second", "three"]
    assert len(again.warnings) == 2


def test_a_newer_format_is_refused_with_a_clear_message(tmp_path) -> None:
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps({"type": "header", "format": FORMAT_VERSION + 1, "session_id": "x",
                                "workspace": "/w"}) + "\n")
    with pytest.raises(JournalError, match=r"newer tui-agent .*format 2.*Upgrade"):
        read_journal(path)


def test_files_that_are_not_journals_are_refused(tmp_path) -> None:
    empty, other = tmp_path / "empty.jsonl", tmp_path / "cc.jsonl"
    empty.write_text("")
    other.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}) + "\n")
    with pytest.raises(JournalError, match="empty or not"):
        read_journal(empty)
    with pytest.raises(JournalError, match="no header"):
        read_journal(other)
    with pytest.raises(JournalError, match="cannot read"):
        read_journal(tmp_path / "missing.jsonl")


async def test_a_tool_cut_off_by_a_kill_is_answered_on_resume(workspace) -> None:
    session = session_on(workspace, ScriptedProvider(replies=[tool_reply("Read", {"file_path": "notes.txt"}, "t1")]))
    journal = start_journal(session)
    # what a kill -9 while the tool runs leaves: the prompt and the tool_use are on disk, the result is not
    session.history.append({"role": "user", "content": [{"type": "text", "text": "read it"}]})
    session.history.append({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "notes.txt"}}]})
    journal.sync_messages()
    journal.close()  # the old process is gone, and its journal lock with it
    fresh = session_on(workspace, ScriptedProvider(replies=[text_reply("ok")]))
    _, notices = resume_journaled(fresh, read_journal(journal.path))
    assert len(fresh.history) == 3 and fresh.history[2]["content"][0]["is_error"] is True
    assert any("cut off" in n.text for n in notices)
    await run(fresh, "go on")
    assert protocol_errors(fresh.history) == []
    assert read_journal(journal.path).history == fresh.history  # the repair is journaled too


async def test_damage_in_the_middle_continues_in_a_new_file(workspace) -> None:
    session = session_on(workspace, ScriptedProvider(replies=[
        tool_reply("Read", {"file_path": "notes.txt"}, "t1"), text_reply("42"), text_reply("again")]))
    journal = start_journal(session)
    await run(session, "read")
    await run(session, "more")
    lines = journal.path.read_text().splitlines()
    results = next(i for i, line in enumerate(lines) if '"tool_result"' in line)
    del lines[results]  # the tool_result message is lost: the history after it is not valid
    journal.path.write_text("\n".join(lines) + "\n")
    load = read_journal(journal.path)
    assert any("missing" in w for w in load.warnings)
    fresh = session_on(workspace, ScriptedProvider())
    new_journal, notices = resume_journaled(fresh, load)
    assert new_journal.path != journal.path and protocol_errors(fresh.history) == []
    assert fresh.history[:2] == session.history[:2] and len(fresh.history) == 3  # + the synthetic result
    assert any("new session file" in n.text for n in notices)
    assert read_journal(new_journal.path).header.source == f"session {load.session_id}"


async def test_cancelled_turn_repairs_are_journaled(workspace) -> None:
    import asyncio

    from tests.core.helpers import SlowTool
    from tui_agent.core.tools import ToolRegistry

    session = session_on(workspace, ScriptedProvider(replies=[tool_reply("Slow", {"seconds": 30}, "s1")]))
    session.tools = ToolRegistry([SlowTool()])
    journal = start_journal(session)

    async def turn() -> None:
        async for event in session.run_turn("wait"):
            if isinstance(event, ev.ToolStarted):
                task.cancel()

    task = asyncio.ensure_future(turn())
    with pytest.raises(asyncio.CancelledError):
        await task
    load = read_journal(journal.path)
    assert load.history == session.history and len(load.history) == 3  # prompt, tool_use, cancelled result
    assert protocol_errors(load.history) == []


async def test_unwritable_journal_stops_quietly_and_says_why(workspace) -> None:
    session = session_on(workspace, ScriptedProvider(replies=[text_reply("one")]))
    journal = start_journal(session)
    os.makedirs(journal.path)  # a folder where the file should be: every open fails
    await run(session, "hello")
    assert journal.problem and "could not be written" in journal.problem
    assert session.history[-1]["content"][0]["text"] == "one"  # the turn itself was not disturbed


def test_headless_says_when_the_journal_could_not_be_written(tmp_path, monkeypatch) -> None:
    import io

    from tui_agent.faces.headless import run_headless
    from tui_agent.faces.sessions import journal_hook

    data = tmp_path / "data"
    data.mkdir()
    (data / "sessions").write_text("a file where the folder should be")
    monkeypatch.setenv("TUI_AGENT_DATA_DIR", str(data))
    workspace = tmp_path / "repo"
    workspace.mkdir()
    out, err = io.StringIO(), io.StringIO()
    code = run_headless("hello", workspace=workspace, model="demo", out=out, err=err, prepare=journal_hook(None))
    assert code == 0 and out.getvalue()  # the answer still comes
    assert "could not be written" in err.getvalue() and "journaling stopped" in err.getvalue()


async def test_compaction_state_is_journaled_and_restored(workspace) -> None:
    session = session_on(workspace, ScriptedProvider(replies=[
        tool_reply("Read", {"file_path": "notes.txt"}, "t1"), text_reply("one"), text_reply("two")]))
    journal = start_journal(session)
    await run(session, "first")
    session.pin(2)
    session.exclude(1, True)
    session.exclude(1, False)
    await run(session, "second")
    kinds = [r["type"] for r in records(journal.path) if r["type"].startswith("compaction")]
    assert kinds.count("compaction_change") == 3 and "compaction_state" in kinds
    changes = [(r["action"], r["index"], r["on"]) for r in records(journal.path) if r["type"] == "compaction_change"]
    assert changes == [("pin", 2, True), ("exclude", 1, True), ("exclude", 1, False)]
    journal.close()  # the old process is gone, and its journal lock with it
    fresh = session_on(workspace, ScriptedProvider())
    resume_journaled(fresh, read_journal(journal.path))
    assert fresh.compactor.export_state() == session.compactor.export_state()
    assert 2 in fresh.compactor.pins
    assert fresh.next_request() == session.next_request()


async def test_a_journal_whose_compaction_state_cannot_be_restored_resumes_the_history(workspace) -> None:
    """(Was: a session without a compactor. Every session has one now, typed by CompactorProtocol; what can
    still happen is a saved state of a strategy this version does not know.)"""
    session = session_on(workspace, ScriptedProvider(replies=[text_reply("one")]))
    journal = start_journal(session)
    await run(session, "first")
    load = read_journal(journal.path)
    assert load.compaction_state is not None
    load.compaction_mode = "v9"
    journal.close()  # the old process is gone, and its journal lock with it
    fresh = session_on(workspace, ScriptedProvider())
    _, notices = resume_journaled(fresh, load)
    assert fresh.history == session.history
    assert any("'v9' is not available" in n.text for n in notices)
    assert fresh.next_request().messages == session.next_request().messages  # planned from the history


async def test_markdown_export_marks_each_call_and_its_compaction_event(workspace) -> None:
    from tui_agent.core.journal.export import markdown_of

    (workspace / "big.txt").write_text("".join(f"line {n}: " + "y" * 80 + "\n" for n in range(400)))
    replies = []
    for n in range(6):
        replies += [tool_reply("Read", {"file_path": "big.txt"}, f"toolu_{n}", f"Reading again ({n})."),
                    text_reply(f"Answer {n}.")]
    provider = ScriptedProvider(replies=replies)
    provider.context_window, provider.max_output_tokens = 20_000, 1_000
    session = session_on(workspace, provider)
    journal = start_journal(session)
    for n in range(6):
        await run(session, f"question {n}")
    load = read_journal(journal.path)
    events = [c for c in load.calls if c.event]
    assert events, "the small window should have made the compactor act"
    text = markdown_of(load)
    assert text.count("> ▶ **call ") == len(load.calls) == 12
    assert text.count("> ⟲ **compaction** · ") == len(events)
    assert f"> ⟲ **compaction** · {events[0].event}" in text
    first = events[0]
    assert f"{first.sent} of {first.history_len} messages" in text
    # in place: the marker sits just before the reply of the call that compacted
    marker = text.index(f"> ▶ **call {first.call}**")
    assert text.index(f"## {first.history_len + 1}. assistant") > marker > text.index(f"## {first.history_len}. ")


async def test_the_fast_session_summary_agrees_with_a_full_read(workspace) -> None:
    from tui_agent.core.journal.store import SessionInfo, list_sessions, summarize

    session = session_on(workspace, ScriptedProvider(replies=[
        tool_reply("Read", {"file_path": "notes.txt"}, "t1"), text_reply("one"), text_reply("two"),
        text_reply("three")]))
    first = start_journal(session)
    await run(session, "   ")  # a blank prompt is not the session's "first prompt"
    await run(session, "the real question")
    await session.switch_model(ScriptedProvider(replies=[text_reply("four")], model="scripted-2"))
    await run(session, "after the switch")
    first_path = first.path
    session.clear()
    await run(session, "after the clear")
    with first_path.open("a") as handle:
        handle.write('{"type":"message","at":"2027-01-01T00:00:00.000Z","index":9,"mess')  # cut by a kill
    paths = sorted(sessions_dir().glob("*.jsonl"))
    assert len(paths) == 2
    for path in paths:
        assert summarize(path) == SessionInfo.of(read_journal(path))
    infos = list_sessions(workspace)
    assert [i.first_prompt for i in infos] == ["after the clear", "the real question"]
    assert infos[1].model == "scripted-2" and infos[1].cleared_to == infos[0].session_id


async def test_the_compaction_strategy_comes_back_with_its_state(workspace) -> None:
    session = session_on(workspace, ScriptedProvider(replies=[text_reply("one"), text_reply("two")]))
    journal = start_journal(session)
    await run(session, "first")
    session.switch_compaction("v1")
    await run(session, "second")
    load = read_journal(journal.path)
    assert load.compaction_mode == "v1"
    journal.close()  # the old process is gone, and its journal lock with it
    fresh = session_on(workspace, ScriptedProvider())
    assert fresh.compact_mode == "v2"
    _, notices = resume_journaled(fresh, load)
    assert fresh.compact_mode == "v1" and type(fresh.compactor) is type(session.compactor)
    assert fresh.compactor.export_state() == session.compactor.export_state()
    assert not [n for n in notices if n.level == "warning"]
