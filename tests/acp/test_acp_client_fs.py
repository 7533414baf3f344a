"""Read, Write and Edit through the client's file system, driven by the SDK's client side: an editor whose
buffers differ from the disk (unsaved changes) and that keeps what it is asked to write in memory."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import ClientCapabilities, FileSystemCapabilities, ReadTextFileResponse

from tests.acp.test_acp_client import TIMEOUT, RecordingClient, open_agent, workspace
from tests.e2e.conftest import cli_env  # noqa: F401
from tests.fakes.fake_anthropic import FakeAnthropic, text, tool_use

pytestmark = pytest.mark.asyncio
UNSAVED = "def main():\n    return 43  # unsaved in the editor\n"


class EditorClient(RecordingClient):
    """An editor with open buffers: reads answer from them (else from the disk), writes go into them."""

    def __init__(self, buffers: dict[str, str]) -> None:
        super().__init__("allow_once")
        self.buffers = dict(buffers)
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []

    async def read_text_file(self, path: str, session_id: str, **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        return ReadTextFileResponse(content=self.buffers.get(path) or Path(path).read_text())

    async def write_text_file(self, content: str, path: str, session_id: str, **kwargs: Any) -> None:
        self.writes.append((path, content))
        self.buffers[path] = content


def tool_results(server: FakeAnthropic) -> dict[str, Any]:
    """Every tool_result the model was sent, by tool_use id."""
    results = {}
    for message in server.message_requests[-1]["body"]["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                results[block["tool_use_id"]] = block
    return results


async def run(client: RecordingClient, tmp_path: Path, root: Path, replies: list[Any],
              capabilities: ClientCapabilities) -> FakeAnthropic:
    server = FakeAnthropic(replies)
    with server:
        async with await open_agent(client, tmp_path, model="claude-sonnet-4-5", server=server) as (conn, _p):
            await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
            session = await conn.new_session(cwd=str(root), mcp_servers=[])
            await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=[text_block("go")]), TIMEOUT)
    assert server.violations == []
    return server


async def test_read_write_and_edit_go_through_the_editors_buffers_when_it_offers_them(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    app, new = root / "app.py", root / "notes" / "new.txt"
    client = EditorClient({str(app): UNSAVED})
    replies = [tool_use("Read", {"file_path": str(app)}, "toolu_r"),
               tool_use("Edit", {"file_path": str(app), "old_string": "return 43", "new_string": "return 44"},
                        "toolu_e"),
               tool_use("Write", {"file_path": str(new), "content": "hello\n"}, "toolu_w"),
               tool_use("Read", {"file_path": str(root / "README.md")}, "toolu_r2"),
               text("done")]
    fs = FileSystemCapabilities(read_text_file=True, write_text_file=True)
    server = await run(client, tmp_path, root, replies, ClientCapabilities(fs=fs))
    results = tool_results(server)
    assert "43  # unsaved in the editor" in str(results["toolu_r"]["content"])  # the buffer, not the disk
    assert "     2\t    return 43" in str(results["toolu_r"]["content"])  # numbered as Read numbers the disk
    assert not results["toolu_e"].get("is_error") and "return 44" in str(results["toolu_e"]["content"])
    assert client.writes[0] == (str(app), UNSAVED.replace("return 43", "return 44"))  # the buffer, edited
    assert client.writes[1] == (str(new), "hello\n")
    assert "Sample" in str(results["toolu_r2"]["content"])  # a file with no open buffer: the editor's disk
    assert client.reads.count(str(app)) == 2 and str(root / "README.md") in client.reads
    assert app.read_text() == "def main():\n    return 42\n" and not new.exists()  # the editor saves, not we


async def test_without_the_clients_file_system_the_tools_use_the_disk(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    app = root / "app.py"
    client = EditorClient({str(app): UNSAVED})
    replies = [tool_use("Read", {"file_path": str(app)}, "toolu_r"),
               tool_use("Edit", {"file_path": str(app), "old_string": "return 42", "new_string": "return 7"},
                        "toolu_e"),
               text("done")]
    server = await run(client, tmp_path, root, replies, ClientCapabilities())
    results = tool_results(server)
    assert "return 42" in str(results["toolu_r"]["content"]) and not results["toolu_e"].get("is_error")
    assert client.reads == client.writes == [] and app.read_text() == "def main():\n    return 7\n"


async def test_a_buffer_is_numbered_as_read_numbers_the_same_file_on_disk(tmp_path: Path) -> None:
    """CRLF, a BOM, a long file: the editor's text and the disk's read the same to the model."""
    from types import SimpleNamespace

    from tui_agent.core.tools.base import ToolContext
    from tui_agent.core.tools.read import ReadTool
    from tui_agent.faces.acp.client_fs import ClientFiles, ClientRead

    path = tmp_path / "crlf.txt"
    path.write_bytes(b"\xef\xbb\xbf" + b"".join(b"line %d\r\n" % n for n in range(2500)))

    class Editor:
        async def read_text_file(self, path: str, session_id: str, **kwargs: Any) -> Any:
            return SimpleNamespace(content=Path(path).read_bytes().decode("utf-8"))

    for tool_input in ({"file_path": str(path)}, {"file_path": str(path), "offset": 2400, "limit": 50}):
        disk = await ReadTool().call(tool_input, ToolContext(workspace=tmp_path))
        ctx = ToolContext(workspace=tmp_path)
        editor = await ClientRead(ClientFiles(Editor(), "s")).call(tool_input, ctx)
        same = editor.content == disk.content  # (not compared in the assert: a diff of 2,500 lines is slow)
        assert same and "\r" not in str(editor.content), str(editor.content)[:300]
        assert ctx.read_files[str(path)] == path.stat().st_mtime  # Edit's read-first rule is satisfied
