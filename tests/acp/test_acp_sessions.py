"""`session/new` and `session/load` over ACP: a bad `cwd` is refused with an error that says why, and every
session the agent created loads, prompted or not, from another process (the Python SDK's client and the
real `acpx` CLI's ordinary workflow: `sessions new`, then `prompt -s`), after a `/clear` too."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block

from tests.acp.test_acp_client import TIMEOUT, RecordingClient, agent_env, open_agent, workspace
from tests.npm_agents import npm_agent
from tests.waiting import wait_until_sync

ACPX_VERSION = "0.1.15"  # the version the issue was found with


@pytest.mark.asyncio
async def test_a_relative_missing_empty_or_absent_cwd_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    (root / "a-file.txt").write_text("x")
    client = RecordingClient()
    async with await open_agent(client, tmp_path) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        for cwd, said in (("ws", "is a relative path"), ("", "cwd is empty"), ("   ", "cwd is empty"),
                          (str(tmp_path / "nowhere"), "does not exist"), (str(root / "a-file.txt"), "is not a folder")):
            with pytest.raises(RequestError) as refused:
                await asyncio.wait_for(conn.new_session(cwd=cwd, mcp_servers=[]), TIMEOUT)
            assert refused.value.code == -32602 and said in str(refused.value), (cwd, str(refused.value))
            assert str(refused.value).startswith("Invalid params: ")
        with pytest.raises(RequestError) as absent:  # the SDK's client always sends one: on the wire
            await conn._conn.send_request("session/new", {"mcpServers": []})
        assert absent.value.code == -32602 and str(absent.value) == "Invalid params: cwd: Field required"
        with pytest.raises(RequestError) as load:
            await conn.load_session(cwd="ws", session_id="whatever", mcp_servers=[])
        assert load.value.code == -32602 and "relative path" in str(load.value)
        session = await asyncio.wait_for(conn.new_session(cwd=str(root), mcp_servers=[]), TIMEOUT)
        assert session.session_id  # the agent went on serving


@pytest.mark.asyncio
async def test_a_session_that_said_nothing_loads_in_another_process_and_takes_its_prompt(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    async with await open_agent(RecordingClient(), tmp_path) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await asyncio.wait_for(conn.new_session(cwd=str(root), mcp_servers=[]), TIMEOUT)).session_id
    client = RecordingClient()
    async with await open_agent(client, tmp_path) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await asyncio.wait_for(conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[]), TIMEOUT)
        assert client.of("user_message_chunk") == []  # nothing to replay
        answer = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("what is in this repo?")]),
                                        TIMEOUT)
        assert answer.stop_reason == "end_turn" and "README" in client.answer_text()
    client = RecordingClient()
    async with await open_agent(client, tmp_path) as (conn, _process):  # and loads again, with its prompt now
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await asyncio.wait_for(conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[]), TIMEOUT)
        assert [u.content.text for u in client.of("user_message_chunk")] == ["what is in this repo?"]
        # the same id again in the same process: told again, not opened twice (its journal is locked by us)
        await asyncio.wait_for(conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[]), TIMEOUT)
        assert len(client.of("user_message_chunk")) == 2
        with pytest.raises(RequestError) as unknown:
            await conn.load_session(cwd=str(root), session_id="no-such-session", mcp_servers=[])
        assert unknown.value.code == -32602 and "'no-such-session' cannot be loaded" in str(unknown.value)


@pytest.mark.asyncio
async def test_after_clear_the_clients_id_loads_the_new_conversation(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    async with await open_agent(RecordingClient(), tmp_path) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await asyncio.wait_for(conn.new_session(cwd=str(root), mcp_servers=[]), TIMEOUT)).session_id
        for prompt in ("before the clear", "/clear"):
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block(prompt)]), TIMEOUT)
    client = RecordingClient()
    async with await open_agent(client, tmp_path) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await asyncio.wait_for(conn.load_session(cwd=str(root), session_id=sid, mcp_servers=[]), TIMEOUT)
        assert client.of("user_message_chunk") == []  # the cleared conversation, not the one before it
        answer = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("after it")]), TIMEOUT)
    assert answer.stop_reason == "end_turn"


def acpx(exe: Path, home: Path, root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """One acpx command, as a user types it. acpx runs a prompt through a "queue owner" (a node process
    that starts our agent) which stays `--ttl` seconds after it; the next command starts once it is gone
    (its lease file in ~/.acpx/queues), as commands typed by a person would, and none is left running."""
    agent = f"{sys.executable} -m tui_agent acp --model demo"
    done = subprocess.run([str(exe), "--ttl", "1", "--format", "json", "--agent", agent, *args], cwd=root,
                          env={**env, "HOME": str(home)}, capture_output=True, text=True, timeout=120)
    queues = home / ".acpx" / "queues"
    wait_until_sync(lambda: not queues.is_dir() or not list(queues.glob("*.lock")), what="acpx's queue owner to exit",
                    timeout=60)
    return done


def test_acpx_sessions_new_then_prompt_dash_s_works(tmp_path: Path) -> None:
    """The issue's workflow with the real acpx CLI: it failed `-32602 … no session` (no journal to load)."""
    exe = npm_agent("acpx")
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    assert version == ACPX_VERSION
    root, env = workspace(tmp_path), agent_env(tmp_path)
    # acpx's queue socket lives in ~/.acpx/queues: under pytest's long tmp_path it passes the 107 bytes a Unix
    # socket path may hold, and acpx fails "queue owner failed to start". A short HOME of this test's own.
    home = Path(tempfile.mkdtemp(prefix=f"acpx{os.getpid()}-", dir="/tmp"))
    try:
        created = acpx(exe, home, root, env, "sessions", "new", "--name", "work")
        assert created.returncode == 0, created.stderr[-2000:]
        answered = acpx(exe, home, root, env, "prompt", "-s", "work", "what is in this repo?")
        assert answered.returncode == 0 and '"error"' not in answered.stdout, (answered.stdout[-2000:],
                                                                              answered.stderr[-2000:])
        assert '"stopReason":"end_turn"' in answered.stdout and "README" in answered.stdout
        again = acpx(exe, home, root, env, "prompt", "-s", "work", "and app.py?")  # loads again, with its prompt
        assert '"stopReason":"end_turn"' in again.stdout, (again.stdout[-3000:], again.stderr[-3000:])
    finally:
        shutil.rmtree(home, ignore_errors=True)
