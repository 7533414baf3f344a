"""The permission modal with the real Write, Edit and Bash tools in a real workspace.

Each test walks one tool through the three answers in one app run: allow once (runs, and the same
call asks again), allow for the session (runs, and the same call no longer asks), deny (nothing
happens, the turn ends "denied", the chat says so and the history stays valid for the API).
"""

from __future__ import annotations

import asyncio

from tests.waiting import wait_until
from tui_agent.core.access.gate import REJECT_MESSAGE
from tui_agent.core.messages import protocol_errors
from tui_agent.core.providers.scripted import text_reply, tool_reply
from tui_agent.ui.screens.permission import PermissionScreen, permission_body, styled_preview

from .support import McpStyleTool, acting_tools, make_app, make_repo, scripted_session

SIZE = (120, 40)


async def turn(pilot, prompt: str, answer: str | None) -> str:
    """Send `prompt`; answer the modal with `answer` (None: there must be no modal). Returns the body."""
    app = pilot.app
    app.screen.query_one("PromptArea").load_text(prompt)
    await pilot.press("enter")
    body = ""
    if answer is not None:
        await wait_until(lambda: isinstance(app.screen, PermissionScreen), what="the permission modal")
        await pilot.pause()
        body = str(app.screen.query_one("#perm-body Static").render())
        rule = app.screen.query("#perm-rule")
        body += "\n" + (str(rule.first().render()) if rule else "")
        await pilot.press(answer)
    try:
        await asyncio.wait_for(app.workers.wait_for_complete(), 10)
    except asyncio.TimeoutError:
        raise AssertionError(f"the turn did not finish (a modal waiting? {app.screen!r})") from None
    await pilot.pause()
    return body


def assert_denied(app, session) -> None:
    """After a deny: the turn ended "denied", the chat says so, and the history is valid."""
    assert app.screen.turn.result == "denied"
    result = session.history[-1]["content"][0]
    assert result["type"] == "tool_result" and result.get("is_error")
    assert REJECT_MESSAGE in str(result["content"])  # the model reads that the user said no
    assert protocol_errors(session.history) == []
    notices = [str(n.text) for n in app.screen.query("NoticeLine")]
    assert any("denied" in text for text in notices)


def write(path: str, content: str, i: int) -> list:
    return [tool_reply("Write", {"file_path": path, "content": content}, f"toolu_w{i}"), text_reply("Written.")]


async def test_write_allow_once_session_and_deny(tmp_path) -> None:
    repo = make_repo(tmp_path)
    replies = [*write("notes/todo.md", "- one\n", 1), *write("notes/todo.md", "- two\n", 2),
               *write("notes/todo.md", "- three\n", 3), *write("notes/other.md", "no\n", 4)]
    session = scripted_session(repo, replies, extra_tools=acting_tools())
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        body = await turn(pilot, "write the todo", "y")
        assert "Create notes/todo.md (1 line," in body and "- one" in body and str(tmp_path) not in body
        assert (repo / "notes/todo.md").read_text() == "- one\n"
        body = await turn(pilot, "again", "a")  # once means once: asked again
        assert "Overwrite notes/todo.md" in body and "-- one" in body and "+- two" in body  # a diff
        assert "Write(notes/todo.md)" in body  # the rule "allow for this session" adds
        assert (repo / "notes/todo.md").read_text() == "- two\n"
        await turn(pilot, "and again", None)  # the same file: not asked again
        assert (repo / "notes/todo.md").read_text() == "- three\n"
        await turn(pilot, "another file", "n")
        assert not (repo / "notes/other.md").exists()
        assert_denied(app, session)


def edit(old: str, new: str, i: int, path: str = "src/app.py") -> list:
    return [tool_reply("Edit", {"file_path": path, "old_string": old, "new_string": new}, f"toolu_e{i}"),
            text_reply("Edited.")]


async def test_edit_shows_the_diff_allow_once_session_and_deny(tmp_path) -> None:
    repo = make_repo(tmp_path)
    app_py, models_py = repo / "src/app.py", repo / "src/models.py"
    models_before = models_py.read_text()
    read = [tool_reply("Read", {"file_path": "src/app.py"}, "toolu_r1"),
            tool_reply("Read", {"file_path": "src/models.py"}, "toolu_r2")]
    replies = [read[0], *edit("return {'status': 1}\n", "return {'status': 101}\n", 1),
               *edit("return {'status': 2}\n", "return {'status': 102}\n", 2),
               *edit("return {'status': 3}\n", "return {'status': 103}\n", 3),
               read[1], *edit("field_5: int = 5", "field_5: str = '5'", 4, "src/models.py")]
    session = scripted_session(repo, replies, extra_tools=acting_tools())
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        body = await turn(pilot, "fix handler 1", "y")
        assert "Edit src/app.py" in body and "--- a/src/app.py" in body and "@@ " in body
        assert "-    return {'status': 1}" in body and "+    return {'status': 101}" in body
        assert "not been read" not in body
        assert "return {'status': 101}" in app_py.read_text()
        await turn(pilot, "fix handler 2", "a")
        assert "return {'status': 102}" in app_py.read_text()
        await turn(pilot, "fix handler 3", None)
        assert "return {'status': 103}" in app_py.read_text()
        body = await turn(pilot, "change a model", "n")
        assert "-    field_5: int = 5" in body and "+    field_5: str = '5'" in body
        assert models_py.read_text() == models_before
        assert_denied(app, session)


def bash(command: str, i: int) -> list:
    return [tool_reply("Bash", {"command": command, "description": "append to the log"}, f"toolu_b{i}"),
            text_reply("Ran it.")]


async def test_bash_allow_once_session_and_deny(tmp_path) -> None:
    repo = make_repo(tmp_path)
    log = repo / "log.txt"
    replies = [*bash("echo once >> log.txt", 1), *bash("echo session >> log.txt", 2),
               *bash("echo session >> log.txt", 3), *bash("echo denied >> log.txt", 4)]
    session = scripted_session(repo, replies, extra_tools=acting_tools())
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        body = await turn(pilot, "log once", "y")
        assert "$ echo once >> log.txt" in body and "# append to the log" in body and "runs in" in body
        assert log.read_text() == "once\n"
        body = await turn(pilot, "log for the session", "a")
        assert "Bash(echo session >> log.txt)" in body  # a redirect is remembered exactly, not as a prefix
        await turn(pilot, "log again", None)
        assert log.read_text() == "once\nsession\nsession\n"
        await turn(pilot, "log denied", "n")
        assert log.read_text() == "once\nsession\nsession\n"
        assert_denied(app, session)


async def test_mcp_style_tool_input_is_readable(tmp_path) -> None:
    tool = McpStyleTool()
    issue = {"title": "Panel [b]flickers[/b]", "labels": ["bug", "ui"], "body": "Steps:\n1. open\n2. resize"}
    session = scripted_session(make_repo(tmp_path), [tool_reply(tool.name, issue, "toolu_m")],
                               extra_tools=[tool])
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        body = await turn(pilot, "file an issue", "n")
        assert "title: Panel [b]flickers[/b]" in body  # untrusted text shown as it is, no markup
        assert 'labels: ["bug", "ui"]' in body
        assert "body:\n  Steps:\n  1. open\n  2. resize" in body and "\\n" not in body
        assert "mcp__tracker__create_issue" in body  # the session rule names the tool
        assert tool.calls == []
        assert_denied(app, session)


def test_diff_colours_only_inside_the_diff() -> None:
    preview = "Create notes.md (2 lines, 14 bytes)\n\n- a list\n+ not added"
    assert all(span.style == "bold" for span in styled_preview(preview).spans)
    diff = "Edit a.py\n\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-old\n+new"
    styles = {str(span.style) for span in styled_preview(diff).spans}
    assert {"$text-success", "$text-error", "$text-accent"} <= styles
    assert "(no input)" in str(permission_body("mcp__x__y", {}))

