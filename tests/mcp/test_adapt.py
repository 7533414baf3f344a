"""Tool names, result mapping and timeouts: the pieces between the SDK's objects and our tool_results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tui_agent.core.mcp.client import RemoteTool, ServerConnection
from tui_agent.core.mcp.config import ServerConfig
from tui_agent.core.mcp.manager import call_timeout_from_env
from tui_agent.core.mcp.names import normalize_name, public_tool_name
from tui_agent.core.mcp.results import NO_CONTENT, format_result
from tui_agent.core.mcp.tool import McpTool


@dataclass
class Block:
    type: str
    text: str = ""
    data: str = ""
    mime_type: str | None = None


@dataclass
class Result:
    content: list[Any] = field(default_factory=list)
    structured_content: dict | None = None
    is_error: bool = False


def test_public_names_are_normalised_like_claude_code():  # AC-MC4, §15.8
    assert public_tool_name("demo", "foo") == "mcp__demo__foo"
    assert normalize_name("my.server v2") == "my_server_v2"
    assert public_tool_name("a.b", "get time/now") == "mcp__a_b__get_time_now"
    assert len(public_tool_name("s", "x" * 300)) == 128


def test_text_blocks_join_into_one_string():
    out = format_result(Result([Block("text", "one"), Block("text", "two")]))
    assert (out.content, out.is_error) == ("one\ntwo", False)


def test_is_error_is_propagated():  # AC-MC5
    assert format_result(Result([Block("text", "bad")], is_error=True)).is_error is True


def test_images_become_image_blocks():  # AC-MC5, with real image blocks instead of a placeholder
    out = format_result(Result([Block("text", "see below"), Block("image", data="AAAA", mime_type="image/png")]))
    assert out.content == [
        {"type": "text", "text": "see below"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
    ]


def test_image_types_the_model_cannot_read_become_a_note():
    out = format_result(Result([Block("image", data="PHN2Zz4=", mime_type="image/svg+xml")]))
    assert out.content == "[image: image/svg+xml, a type the model cannot read; omitted]"


def test_structured_content_without_text_is_json_text():
    out = format_result(Result([], structured_content={"word": "abc", "length": 3}))
    assert out.content == '{\n  "word": "abc",\n  "length": 3\n}'


def test_structured_content_is_not_repeated_when_text_mirrors_it():
    out = format_result(Result([Block("text", "5")], structured_content={"result": 5}))
    assert out.content == "5"


def test_empty_result():
    assert format_result(Result()).content == NO_CONTENT


def test_tool_adaptation_passes_the_schema_through(tmp_path):  # AC-MC4, AC-MC5
    schema = {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"],
              "title": "echoArguments"}
    conn = ServerConnection(ServerConfig("demo", command="x"), tmp_path / "demo.log", tmp_path)
    writer = McpTool(conn, RemoteTool("echo", "", schema, read_only=False), 30)
    reader = McpTool(conn, RemoteTool("look", " Looks. ", schema, read_only=True), 30)
    assert writer.schema() == {"name": "mcp__demo__echo", "description": "MCP tool echo (demo)", "input_schema": schema}
    assert writer.input_schema is schema
    assert writer.is_read_only({}) is False and reader.is_read_only({}) is True
    assert reader.description == "Looks."
    assert writer.paths({"path": "/etc/passwd"}) == []  # the server's paths are its own business


def test_call_timeout_from_env():
    assert call_timeout_from_env({}) == 30
    assert call_timeout_from_env({"MCP_TOOL_TIMEOUT": "90"}) == 90
    assert call_timeout_from_env({"MCP_TOOL_TIMEOUT": "120000"}) == 120  # Claude Code's milliseconds
    assert call_timeout_from_env({"MCP_TOOL_TIMEOUT": "soon"}) == 30
