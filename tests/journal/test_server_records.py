"""The journal keeps what the server did and why the cache missed: a resumed session shows both where
they happened, and its next request names the last answer's id (the cache diagnosis goes on)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, AsyncIterator

from tui_agent.core import events as ev
from tui_agent.core.journal.export import markdown_of
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.resume import resume_journaled
from tui_agent.core.journal.writer import journal_of, start_journal
from tui_agent.core.recordings.replay import open_replay
from tui_agent.core.providers.base import ModelRequest, ProviderEvent, StreamDone, UsageInfo
from tui_agent.core.providers.server_report import AppliedEdit, CacheMissReason, CompactionUsage, ServerReport

from .helpers import LocalClaude, run, session_on

REPORTS = [
    ServerReport("msg_a"),
    ServerReport("msg_b", edits=(AppliedEdit("clear_tool_uses_20250919", 3, 9_000),),
                 compaction_usage=CompactionUsage(150_000, 2_000), compacted=True, compaction_summary="sum",
                 cache_miss=CacheMissReason("system_changed", 4_000)),
]


class ServerClaude(LocalClaude):
    """LocalClaude whose answers carry what a server reported (edits, a compaction, a cache miss)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(usage=UsageInfo(100, 10, 4_000, 0), diagnose=True, **kwargs)
        self.reports = list(REPORTS)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        async for item in super().stream(request):
            if isinstance(item, StreamDone):
                item = dataclasses.replace(item, server=self.reports.pop(0) if self.reports else None)
            yield item


async def test_server_events_and_the_last_message_id_survive_a_resume(tmp_path: Path) -> None:
    session = session_on(tmp_path, ServerClaude())
    environ = {"TUI_AGENT_DATA_DIR": str(tmp_path / "data")}
    start_journal(session, environ=environ)
    await run(session, "first")
    events = await run(session, "second")
    told = [e for e in events if isinstance(e, (ev.ServerEdited, ev.CacheMissed))]
    assert [type(e) for e in told] == [ev.ServerEdited, ev.CacheMissed]
    path = journal_of(session).path
    journal_of(session).close()
    load = read_journal(path)
    assert load.server_events == told and load.warnings == []
    assert (load.last_message_id, load.cached) == ("msg_b", 4_000)
    assert load.calls[1].server == [told[0].line().split(" · ", 1)[1], told[1].line().split(" · ", 1)[1]]
    exported = markdown_of(load)  # the call's row in `export` says what the server did and why the cache missed
    assert "> ⟲ **server** · server cleared 3 tool uses" in exported
    assert "> ⟲ **cache** · cache missed 4,000 tok (the API says: the system prompt changed" in exported
    server = [c for c in open_replay(path).agent_compactions if c.kind == "server"]  # `replay` shows it too
    assert [(c.index, c.call, c.text) for c in server] == [(3, 2, told[0].line())]
    fresh_provider = ServerClaude()
    fresh = session_on(tmp_path, fresh_provider)
    resume_journaled(fresh, load, environ)
    assert fresh.ledger.server_events == told  # the panel's events list has them where they happened
    await run(fresh, "third")
    assert fresh_provider.bodies[-1]["diagnostics"] == {"previous_message_id": "msg_b"}


async def test_a_resumed_server_strategy_session_keeps_its_strategy(tmp_path: Path) -> None:
    from tui_agent.core.agent.session import Session

    from .helpers import tools

    def make(provider: ServerClaude) -> Session:
        return Session(provider, tools(), tmp_path, compact_mode="server-clear",
                       system_prompt_builder=lambda s: "You are a test agent.")

    session = make(ServerClaude())
    environ = {"TUI_AGENT_DATA_DIR": str(tmp_path / "data")}
    start_journal(session, environ=environ)
    await run(session, "first")
    path = journal_of(session).path
    journal_of(session).close()
    fresh_provider = ServerClaude()
    fresh = session_on(tmp_path, fresh_provider)  # started with the default strategy
    resume_journaled(fresh, read_journal(path), environ)
    assert fresh.compactor.mode == "server-clear"
    await run(fresh, "second")
    assert fresh_provider.bodies[-1]["context_management"]["edits"][0]["type"] == "clear_tool_uses_20250919"
