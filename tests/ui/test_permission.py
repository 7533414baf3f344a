"""The permission modal: allow once, allow for the session, deny; keyboard first; what it shows."""

from __future__ import annotations


from tests.waiting import wait_until
from tui_agent.core.messages import protocol_errors
from tui_agent.core.providers.scripted import text_reply, tool_reply
from tui_agent.ui.screens.permission import PermissionScreen, permission_body

from .support import FakeEdit, FakeWrite, make_app, make_repo, scripted_session


def write_call(i: int) -> list:
    return tool_reply("Write", {"file_path": f"out{i}.txt", "content": "hello\nworld\n"}, f"toolu_{i}", "Writing.")


async def start_and_wait_for_modal(pilot, text: str) -> PermissionScreen:
    app = pilot.app
    prompt = app.screen.query_one("PromptArea")
    prompt.load_text(text)
    await pilot.press("enter")
    await wait_until(lambda: isinstance(app.screen, PermissionScreen), what="the permission modal")
    return app.screen


async def test_allow_once_runs_the_tool_and_asks_again(tmp_path) -> None:
    tool = FakeWrite()
    replies = [write_call(1), text_reply("Written."), write_call(2), text_reply("Again.")]
    session = scripted_session(make_repo(tmp_path), replies, extra_tools=[tool])
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        modal = await start_and_wait_for_modal(pilot, "write it")
        body = str(modal.query_one("#perm-body Static").render())
        assert "out1.txt" in body and "hello" in body
        await pilot.press("y")
        await app.workers.wait_for_complete()
        assert len(tool.calls) == 1
        await start_and_wait_for_modal(pilot, "write again")  # once means once
        await pilot.press("y")
        await app.workers.wait_for_complete()
        assert len(tool.calls) == 2 and protocol_errors(session.history) == []


async def test_allow_for_session_stops_asking(tmp_path) -> None:
    tool = FakeWrite()
    replies = [write_call(1), text_reply("Written."), tool_reply("Write", {"file_path": "out1.txt", "content": "x"},
                                                                   "toolu_9"), text_reply("Again.")]
    session = scripted_session(make_repo(tmp_path), replies, extra_tools=[tool])
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await start_and_wait_for_modal(pilot, "write it")
        await pilot.press("a")
        await app.workers.wait_for_complete()
        prompt = app.screen.query_one("PromptArea")
        prompt.load_text("write the same file again")
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        assert not isinstance(app.screen, PermissionScreen)
        assert len(tool.calls) == 2


async def test_deny_with_escape_refuses_and_stops_the_turn(tmp_path) -> None:
    tool = FakeWrite()
    session = scripted_session(make_repo(tmp_path), [write_call(1), text_reply("never")], extra_tools=[tool])
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await start_and_wait_for_modal(pilot, "write it")
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert tool.calls == []
        result = session.history[-1]["content"][0]
        assert result["type"] == "tool_result" and result.get("is_error")
        assert protocol_errors(session.history) == []
        texts = [str(n.text) for n in app.screen.query("NoticeLine")]
        assert any("denied" in t for t in texts)


async def test_deny_with_n(tmp_path) -> None:
    tool = FakeEdit()
    edit = tool_reply("Edit", {"file_path": "src/app.py", "old_string": "a = 1\nb = 2", "new_string": "a = 1\nb = 3"},
                      "toolu_e")
    session = scripted_session(make_repo(tmp_path), [edit, text_reply("never")], extra_tools=[tool])
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        modal = await start_and_wait_for_modal(pilot, "edit it")
        body = str(modal.query_one("#perm-body Static").render())
        assert "-b = 2" in body and "+b = 3" in body and "a/src/app.py" in body
        await pilot.press("n")
        await app.workers.wait_for_complete()
        assert tool.calls == []


def test_permission_body_shapes() -> None:
    assert "$ rm -rf build" in str(permission_body("Bash", {"command": "rm -rf build", "description": "clean"}))
    write = str(permission_body("Write", {"file_path": "a.txt", "content": "\n".join(map(str, range(50)))}))
    assert "a.txt  (50 lines)" in write and "30 more lines" in write
    assert "[/x]" in str(permission_body("Mcp", {"query": "[/x]"}))
