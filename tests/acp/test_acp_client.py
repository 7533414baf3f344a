"""`tui-agent acp` driven by the ACP Python SDK's own client side, over stdio, as an editor would.

The agent is a real subprocess; the model is the offline demo model, or the fake Claude over real HTTP
where a test needs a tool that asks for permission or exact usage.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    RequestPermissionResponse,
)

from tests.e2e.conftest import cli_env, fake  # noqa: F401  (the fixture)
from tests.fakes.fake_anthropic import FakeAnthropic, text, tool_use
from tui_agent.core.messages import protocol_errors

pytestmark = pytest.mark.asyncio
TIMEOUT = 60


class RecordingClient:
    """The editor: records every session update; answers permission prompts with `answer` (an option
    id), or waits on `hold` until the test cancels the turn."""

    def __init__(self, answer: str | None = "allow_once") -> None:
        self.updates: list[Any] = []
        self.answer = answer
        self.asked: list[Any] = []
        self.asked_event = asyncio.Event()
        self.hold = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any,
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.asked.append((options, tool_call))
        self.asked_event.set()
        if self.answer is None:  # the turn is cancelled meanwhile: the spec's answer is "cancelled"
            await self.hold.wait()
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answer))

    def kinds(self) -> list[str]:
        return [update.session_update for update in self.updates]

    def of(self, kind: str) -> list[Any]:
        return [update for update in self.updates if update.session_update == kind]

    def answer_text(self) -> str:
        return "".join(update.content.text for update in self.of("agent_message_chunk"))


def agent_env(tmp_path: Path, server: FakeAnthropic | None = None) -> dict[str, str]:
    return cli_env(tmp_path, server, TUI_AGENT_DATA_DIR=str(tmp_path / "data"))


def agent_args(model: str | None) -> list[str]:
    return ["-m", "tui_agent", "acp"] + (["--model", model] if model else [])


async def open_agent(client: RecordingClient, tmp_path: Path, model: str | None = "demo",
                     server: FakeAnthropic | None = None, **connection: Any):
    tmp_path.mkdir(parents=True, exist_ok=True)
    return spawn_agent_process(client, sys.executable, *agent_args(model), env=agent_env(tmp_path, server),
                               cwd=str(tmp_path), **connection)


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "README.md").write_text("# Sample\n\nA tiny project for the ACP test.\n")
    (root / "app.py").write_text("def main():\n    return 42\n")
    return root


async def test_a_prompt_streams_text_tool_calls_usage_and_ends_the_turn(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    client = RecordingClient()
    async with await open_agent(client, tmp_path) as (conn, _process):
        init = await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION,
                                                      client_capabilities=ClientCapabilities()), TIMEOUT)
        assert init.agent_capabilities.load_session is True
        session = await asyncio.wait_for(conn.new_session(cwd=str(root), mcp_servers=[]), TIMEOUT)
        commands = client.of("available_commands_update")[0].available_commands
        assert {"compact", "context", "clear"} <= {command.name for command in commands}
        response = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                      prompt=[text_block("what is in this repo?")]), TIMEOUT)
    assert response.stop_reason == "end_turn"
    assert "README" in client.answer_text()
    started = client.of("tool_call")
    assert started and all(call.kind in ("read", "search") for call in started)
    assert any(call.title.startswith("Read ") and call.locations for call in started)
    finished = {update.tool_call_id: update.status for update in client.of("tool_call_update")}
    assert {call.tool_call_id for call in started} <= set(finished)
    assert set(finished.values()) == {"completed"}
    # a usage update after every model call (the tool rounds and the answer), the window the demo's
    usages = client.of("usage_update")
    calls = len({call.tool_call_id for call in started})
    assert len(usages) >= 2 and all(usage.size == 24_000 and 0 < usage.used < usage.size for usage in usages)
    assert calls >= 1


async def test_usage_updates_equal_the_panels_meter_of_the_same_session(tmp_path: Path) -> None:
    """The same prompt in-process through the door: the ledger's figures after each call (the panel's
    meter) are what the ACP client was told."""
    from tui_agent.core import events as ev
    from tui_agent.core.agent.door import SessionOptions, open_session

    root = workspace(tmp_path)
    client = RecordingClient()
    async with await open_agent(client, tmp_path) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(root), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                           prompt=[text_block("what is in this repo?")]), TIMEOUT)
    told = [(u.used, u.size) for u in client.of("usage_update")]
    local = open_session(SessionOptions(workspace=root, face="acp", model="demo", env=agent_env(tmp_path))).session
    meters = [(local.ledger.current.shown_total, local.ledger.window)] if local.ledger.current else []
    local.announce_next("opened")
    async for event in local.run_turn("what is in this repo?"):
        if isinstance(event, ev.AssistantMessage):
            meters.append((local.ledger.current.shown_total, local.ledger.window))
    assert told[1:-1] == meters  # [0]: the empty session's next request; [-1]: the next request after the turn


async def test_a_permission_request_reaches_the_client_and_its_answer_is_obeyed(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    for answer, written in (("allow_once", True), ("deny", False)):
        target = root / f"{answer}.txt"
        server = FakeAnthropic([tool_use("Write", {"file_path": str(target), "content": "hi\n"}, "toolu_w1"),
                                text("done")])
        client = RecordingClient(answer)
        with server:
            async with await open_agent(client, tmp_path / answer, model="claude-sonnet-4-5", server=server) \
                    as (conn, _process):
                await conn.initialize(protocol_version=PROTOCOL_VERSION)
                session = await conn.new_session(cwd=str(root), mcp_servers=[])
                await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                   prompt=[text_block("write it")]), TIMEOUT)
        assert server.violations == []
        assert len(client.asked) == 1 and client.asked[0][1].title.startswith("Write ")
        assert target.exists() is written
        status = client.of("tool_call_update")[-1].status
        assert status == ("completed" if written else "failed")
        # exact usage from the API: the meter is the call's real context tokens
        usage = client.of("usage_update")
        assert usage and usage[-2].field_meta["tuiAgent"]["exact"] is True


async def test_cancel_stops_a_running_turn_and_leaves_the_history_valid(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    target = root / "never.txt"
    server = FakeAnthropic([tool_use("Write", {"file_path": str(target), "content": "x"}, "toolu_c1"),
                            text("after the cancel")])
    client = RecordingClient(answer=None)
    with server:
        async with await open_agent(client, tmp_path, model="claude-sonnet-4-5", server=server) as (conn, _p):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = await conn.new_session(cwd=str(root), mcp_servers=[])
            turn = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=[text_block("go")]))
            await asyncio.wait_for(client.asked_event.wait(), TIMEOUT)
            await conn.cancel(session_id=session.session_id)
            client.hold.set()
            response = await asyncio.wait_for(turn, TIMEOUT)
            assert response.stop_reason == "cancelled"
            again = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                       prompt=[text_block("and now?")]), TIMEOUT)
    assert again.stop_reason == "end_turn"
    assert not target.exists()
    assert server.violations == []
    last = server.message_requests[-1]["body"]["messages"]
    assert protocol_errors(last) == []
    assert "after the cancel" in client.answer_text()


async def test_clear_and_compact_act_on_the_engine_and_report_the_next_request(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    (root / "README.md").write_text("# Sample\n\n" + "A line of the project's long introduction.\n" * 150)
    (root / "app.py").write_text("def main():\n    return 42\n" * 120)
    client = RecordingClient()
    async with await open_agent(client, tmp_path) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(root), mcp_servers=[])
        sid = session.session_id
        for prompt in ("what is in this repo?", "read app.py", "grep for main", "what did we do so far?"):
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block(prompt)]), TIMEOUT)
        before = client.of("usage_update")[-1].used
        mark = len(client.updates)
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("/compact")]), TIMEOUT)
        after_compact = [u for u in client.updates[mark:] if u.session_update == "usage_update"][-1]
        compactions = [u for u in client.updates[mark:] if u.session_update == "tool_call"
                       and u.field_meta and "contextCompaction" in u.field_meta]
        assert compactions, "a /compact that drops reports the adapters' synthetic tool call"
        meta = compactions[0].field_meta["contextCompaction"]
        assert meta["trigger"] == "manual" and meta["postTokens"] < meta["preTokens"]
        assert after_compact.used < before
        # what was reported is what the next request holds: its first call sends that plus the new prompt
        mark = len(client.updates)
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("hi")]), TIMEOUT)
        next_call = next(u for u in client.updates[mark:] if u.session_update == "usage_update")
        assert 0 <= next_call.used - after_compact.used < 40
        mark = len(client.updates)
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("/clear")]), TIMEOUT)
        after_clear = [u for u in client.updates[mark:] if u.session_update == "usage_update"][-1]
        assert after_clear.used < after_compact.used
        mark = len(client.updates)
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("hello")]), TIMEOUT)
        first_call = next(u for u in client.updates[mark:] if u.session_update == "usage_update")
        assert 0 <= first_call.used - after_clear.used < 40


async def test_load_resumes_a_journaled_session_and_sends_the_request_the_old_process_would(tmp_path: Path) -> None:
    """One process answers "one" and "two"; another answers "one", exits, and a third loads its session
    and answers "two": the third's request for "two" is the first process's, message for message."""
    root = workspace(tmp_path)

    def replies() -> list[Any]:
        return [tool_use("Read", {"file_path": str(root / "app.py")}, "toolu_r1"), text("read it"), text("two!")]

    async def run(where: Path, server: FakeAnthropic, prompts: list[str], load: str | None = None) -> str:
        client = RecordingClient()
        async with await open_agent(client, where, model="claude-sonnet-4-5", server=server) as (conn, _p):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            if load is None:
                sid = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id
            else:
                await asyncio.wait_for(conn.load_session(cwd=str(root), session_id=load, mcp_servers=[]), TIMEOUT)
                sid = load
                assert "one" in [u.content.text for u in client.of("user_message_chunk")]
            for prompt in prompts:
                await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block(prompt)]), TIMEOUT)
        return sid

    straight = FakeAnthropic(replies())
    with straight:
        await run(tmp_path / "straight", straight, ["one", "two"])
    first, second = FakeAnthropic(replies()[:2]), FakeAnthropic(replies()[2:])
    with first:
        sid = await run(tmp_path / "split", first, ["one"])
    with second:
        await run(tmp_path / "split", second, ["two"], load=sid)
    assert straight.violations == first.violations == second.violations == []
    resumed = second.message_requests[-1]["body"]
    expected = straight.message_requests[-1]["body"]
    assert resumed["messages"] == expected["messages"]
    assert resumed["system"] == expected["system"]


async def test_mcp_servers_given_by_the_client_are_started_and_their_tools_offered(tmp_path: Path) -> None:
    """`session/new` with a stdio MCP server (the published `mcp-server-time`): its tools are in the
    model's request, and a call to one runs through our MCP code."""
    from acp.schema import McpServerStdio

    root = workspace(tmp_path)
    server = FakeAnthropic([tool_use("mcp__time__get_current_time", {"timezone": "UTC"}, "toolu_t1"), text("ok")])
    client = RecordingClient()
    time_server = McpServerStdio(name="time", command=sys.executable,
                                 args=["-m", "mcp_server_time", "--local-timezone", "UTC"], env=[])
    with server:
        async with await open_agent(client, tmp_path, model="claude-sonnet-4-5", server=server) as (conn, _p):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            session = await asyncio.wait_for(conn.new_session(cwd=str(root), mcp_servers=[time_server]), TIMEOUT)
            await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                               prompt=[text_block("time?")]), TIMEOUT)
    assert server.violations == []
    offered = {tool["name"] for tool in server.message_requests[0]["body"]["tools"]}
    assert "mcp__time__get_current_time" in offered
    done = [u for u in client.of("tool_call_update") if u.tool_call_id == "toolu_t1"]
    assert done and done[-1].status == "completed" and "UTC" in done[-1].content[0].content.text


class TerminalClient(RecordingClient):
    """An editor that offers its terminal: runs each command itself and records what it ran."""

    def __init__(self) -> None:
        super().__init__("allow_once")
        self.ran: list[tuple[str, list[str], str | None]] = []
        self.outputs: dict[str, tuple[str, int]] = {}
        self.released: list[str] = []

    async def create_terminal(self, command: str, session_id: str, args: list[str] | None = None,
                              cwd: str | None = None, **kwargs: Any) -> Any:
        from acp.schema import CreateTerminalResponse

        self.ran.append((command, list(args or []), cwd))
        proc = await asyncio.create_subprocess_exec(command, *(args or []), cwd=cwd,
                                                    stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.STDOUT)
        out, _ = await proc.communicate()
        terminal_id = f"term-{len(self.ran)}"
        self.outputs[terminal_id] = (out.decode(), proc.returncode or 0)
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        from acp.schema import WaitForTerminalExitResponse

        return WaitForTerminalExitResponse(exit_code=self.outputs[terminal_id][1])

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        from acp.schema import TerminalExitStatus, TerminalOutputResponse

        output, code = self.outputs[terminal_id]
        return TerminalOutputResponse(output=output, truncated=False, exit_status=TerminalExitStatus(exit_code=code))

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self.released.append(terminal_id)


async def test_bash_runs_in_the_clients_terminal_when_it_offers_one(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    server = FakeAnthropic([tool_use("Bash", {"command": "echo from-the-editor; exit 3"}, "toolu_b1"),
                            text("seen")])
    client = TerminalClient()
    with server:
        async with await open_agent(client, tmp_path, model="claude-sonnet-4-5", server=server) as (conn, _p):
            await conn.initialize(protocol_version=PROTOCOL_VERSION,
                                  client_capabilities=ClientCapabilities(terminal=True))
            session = await conn.new_session(cwd=str(root), mcp_servers=[])
            await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=[text_block("run")]), TIMEOUT)
    assert server.violations == []
    assert client.ran == [("bash", ["-c", "echo from-the-editor; exit 3"], str(root))]
    assert client.released == ["term-1"]
    result = server.message_requests[-1]["body"]["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result.get("is_error") is True
    assert "from-the-editor" in str(result["content"]) and "Exit code 3" in str(result["content"])
    tools = [tool["name"] for tool in server.message_requests[0]["body"]["tools"]]
    assert tools.count("Bash") == 1
