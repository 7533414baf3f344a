"""Compaction over ACP with the SDK's client side: the RFD's updates for a client that declares them, and
the meter after `/compact`'s background summary (the next request grew: the client is told at once)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block

from tests.acp.test_acp_client import TIMEOUT, RecordingClient, open_agent, workspace
from tests.e2e.conftest import cli_env  # noqa: F401
from tests.fakes.fake_anthropic import FakeAnthropic, text
from tests.waiting import wait_until
from tui_agent.core.compaction.summary import is_summary_request

pytestmark = pytest.mark.asyncio
SUMMARY = "## Retained context\n\n" + "The user asked about the sample project and its files; we read them. " * 30


class RawClient(RecordingClient):
    """The editor, plus every raw `session/update` it received: the SDK's client side cannot parse an
    update its schema does not know yet (`compaction_update`), so the test reads the wire."""

    def __init__(self) -> None:
        super().__init__()
        self.raw: list[dict[str, Any]] = []

    def observe(self, event: Any) -> None:
        message = event.message
        if event.direction == "incoming" and message.get("method") == "session/update":
            self.raw.append(message["params"]["update"])

    def raw_of(self, kind: str) -> list[dict[str, Any]]:
        return [update for update in self.raw if update.get("sessionUpdate") == kind]


def gated_model(release: threading.Event) -> Any:
    """The fake Claude: long answers (something to drop), and a summary that waits for `release`."""

    def respond(body: dict[str, Any]) -> Any:
        if is_summary_request(body["messages"]):
            release.wait(TIMEOUT)
            return text(SUMMARY)
        return text("Here is a long answer about the project. " * 60)

    return respond


async def test_compact_sends_the_rfds_updates_and_the_meter_follows_the_summary_into_the_next_request(
        tmp_path: Path) -> None:
    root = workspace(tmp_path)
    release = threading.Event()
    server = FakeAnthropic(model=gated_model(release))
    client = RawClient()
    with server:
        async with await open_agent(client, tmp_path, model="claude-sonnet-4-5", server=server,
                                    observers=[client.observe]) as (conn, _p):
            # the SDK's ClientCapabilities cannot carry the RFD's capability yet: initialize on the wire
            capabilities = {"fs": {"readTextFile": False, "writeTextFile": False}, "session": {"compaction": {}}}
            await asyncio.wait_for(conn._conn.send_request("initialize", {
                "protocolVersion": PROTOCOL_VERSION, "clientCapabilities": capabilities}), TIMEOUT)
            sid = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id
            for prompt in ("what is in this repo?", "tell me more", "and more", "what did we do?"):
                await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block(prompt)]), TIMEOUT)
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("/compact")]), TIMEOUT)
            assert "Compacted now" in client.answer_text()
            (update,) = client.raw_of("compaction_update")
            # the drop is done, its summary is being written: in progress until it is
            assert update["status"] == "in_progress" and "summary" not in update
            facts = update["_meta"]["contextCompaction"]
            assert facts["version"] == 1 and facts["trigger"] == "manual"
            assert facts["postTokens"] < facts["preTokens"] and "durationMs" in facts
            assert not [u for u in client.raw_of("tool_call") if "contextCompaction" in (u.get("_meta") or {})]
            after_compact = client.raw_of("usage_update")[-1]["used"]
            mark = len(client.raw)
            release.set()  # the background summary is written now, between the client's requests
            await wait_until(lambda: [u for u in client.raw[mark:] if u["sessionUpdate"] == "usage_update"],
                             what="a usage update once the summary joined the next request", timeout=TIMEOUT)
            patch = [u for u in client.raw[mark:] if u["sessionUpdate"] == "compaction_update"]
            assert len(patch) == 1 and patch[0]["compactionId"] == update["compactionId"]
            assert patch[0]["status"] == "completed"  # the one terminal update, with the summary
            assert patch[0]["summary"] == [{"type": "text", "text": SUMMARY.strip()}]
            told = [u for u in client.raw[mark:] if u["sessionUpdate"] == "usage_update"][-1]["used"]
            assert told > after_compact  # the summary is in the next request, and the meter says so
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("hi")]), TIMEOUT)
    assert server.violations == []
    sent = server.message_requests[-1]["body"]["messages"]
    assert any("The user asked about the sample project" in str(message["content"]) for message in sent)
    first_call = server.usages[-1]
    real = first_call["input_tokens"] + first_call["cache_creation_input_tokens"] + first_call["cache_read_input_tokens"]
    # the meter between turns is the next request (an estimate calibrated on the API's counts) plus "hi"
    assert abs(real - told) <= 0.05 * real, (real, told, after_compact)


class ClientEnd:
    """The client's end of the connection, in process: records updates; while the usage update that ends
    a request is on its way, `meanwhile` runs once (what a background summary landing then does)."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.meanwhile: Any = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        if update.session_update == "usage_update" and self.meanwhile is not None:
            change, self.meanwhile = self.meanwhile, None
            change()
        await asyncio.sleep(0)


async def test_a_change_while_the_last_usage_update_is_on_its_way_is_sent_after_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui_agent.faces.acp.agent import TuiAgent

    for key, value in cli_env(tmp_path, TUI_AGENT_DATA_DIR=str(tmp_path / "data")).items():
        monkeypatch.setenv(key, value)
    root = workspace(tmp_path)
    agent, client = TuiAgent(model="demo"), ClientEnd()
    agent.on_connect(client)
    await agent.initialize(protocol_version=PROTOCOL_VERSION)
    sid = (await agent.new_session(cwd=str(root))).session_id
    await agent.prompt(sid, [text_block("what is in this repo?")])
    full = client.updates[-1].used
    session = agent.sessions[sid].session
    client.meanwhile = session.clear  # the next request changes while /context's update is being sent
    await agent.prompt(sid, [text_block("/context")])
    await wait_until(lambda: not agent.tasks, what="the updates sent after the request")
    usages = [u.used for u in client.updates if u.session_update == "usage_update"]
    assert usages[-2] == full and usages[-1] < full  # the meter ends on the next request: the cleared one
    await agent.aclose()


async def fill_the_demos_window(client: RawClient, tmp_path: Path, rfd: bool) -> None:
    """The demo model (a 24k window) over a workspace whose files fill it: the engine compacts on the way
    to a call (cuts, masks, then drops with a summary)."""
    root = workspace(tmp_path)
    names = [f"module_{n}.py" for n in range(12)]
    for name in names:
        (root / name).write_text(f"# {name}\n" + "VALUE = 'a line of generated source code, long enough to count'\n" * 300)
    async with await open_agent(client, tmp_path, observers=[client.observe]) as (conn, _process):
        if rfd:
            await asyncio.wait_for(conn._conn.send_request("initialize", {
                "protocolVersion": PROTOCOL_VERSION, "clientCapabilities": {"session": {"compaction": {}}}}), TIMEOUT)
        else:
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id
        for name in names:
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block(f"read {name}")]), TIMEOUT)


async def test_an_automatic_compaction_is_the_adapters_tool_call_with_trigger_automatic(tmp_path: Path) -> None:
    client = RawClient()
    await fill_the_demos_window(client, tmp_path, rfd=False)
    automatic = [u for u in client.raw_of("tool_call") if "contextCompaction" in (u.get("_meta") or {})]
    assert automatic and client.raw_of("compaction_update") == []
    assert client.asked == []  # approve-before-compacting is off by default: nobody is asked
    for update in automatic:
        facts, ours = update["_meta"]["contextCompaction"], update["_meta"]["tuiAgent"]
        assert (update["kind"], update["title"], update["status"]) == ("think", "Compact conversation", "in_progress")
        assert facts["version"] == 1 and facts["trigger"] == "automatic" and "durationMs" not in facts
        assert facts["postTokens"] <= facts["preTokens"] and ours["kinds"] and ours["call"] >= 1
    done = {u["toolCallId"]: u["status"] for u in client.raw_of("tool_call_update")}
    assert all(done[u["toolCallId"]] == "completed" for u in automatic)


async def test_an_automatic_drop_reaches_an_rfd_client_as_a_compaction_patched_with_its_summary(
        tmp_path: Path) -> None:
    client = RawClient()
    await fill_the_demos_window(client, tmp_path, rfd=True)
    assert not [u for u in client.raw_of("tool_call") if "contextCompaction" in (u.get("_meta") or {})]
    updates = client.raw_of("compaction_update")
    firsts = {u["compactionId"]: u for u in reversed(updates)}  # the first update of each id
    assert firsts and all(u["_meta"]["contextCompaction"]["trigger"] == "automatic" for u in firsts.values())
    for compaction_id in firsts:  # the RFD's lifecycle: at most one in_progress, then exactly one terminal status
        statuses = [u["status"] for u in updates if u["compactionId"] == compaction_id]
        assert statuses in (["completed"], ["in_progress", "completed"]), (compaction_id, statuses)
    drops = [i for i, u in firsts.items() if "drop" in u["_meta"]["tuiAgent"]["kinds"]]
    assert drops
    summaries = {u["compactionId"]: u["summary"] for u in updates if "summary" in u}
    assert set(summaries) <= set(firsts) and set(drops) & set(summaries)
    assert all(firsts[i]["status"] == "in_progress" for i in summaries)  # a summary came after its drop
    assert all(summary[0]["type"] == "text" and summary[0]["text"] for summary in summaries.values())
