"""Trace lines from several sessions share one log file: each says when and which session wrote it."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime, timezone
from pathlib import Path

from tui_agent.core import trace
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply
from tui_agent.core.agent.session import Session
from tests.core.helpers import EchoTool, registry

LINE = re.compile(r"^\[trace\] (\S+)(?: .*)? ts=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) session=(\S+)$")


def test_a_line_keeps_the_seed_fields_then_adds_time_and_session():
    when = datetime(2026, 12, 1, 9, 11, 5, 123456, tzinfo=timezone.utc)
    line = trace.format_line("compact.run", {"before": 5, "after": 3}, when=when, session="ab12cd")
    assert line == "[trace] compact.run before=5 after=3 ts=2026-12-01T09:11:05.123Z session=ab12cd"


def test_two_sessions_stamp_their_own_ids_and_clear_starts_a_new_one(monkeypatch):
    monkeypatch.setenv("TRACE", "1")
    lines: list[str] = []
    trace.set_sink(lines.append)
    try:
        async def turn(session: Session) -> None:
            async for _ in session.run_turn("go"):
                pass

        async def main() -> tuple[Session, Session, str]:
            one = Session(ScriptedProvider(replies=[text_reply("a"), text_reply("c")]), registry(EchoTool()), Path("."))
            two = Session(ScriptedProvider(replies=[text_reply("b")]), registry(EchoTool()), Path("."))
            await asyncio.gather(asyncio.create_task(turn(one)), asyncio.create_task(turn(two)))
            first_id = one.trace_id
            one.clear()
            await asyncio.create_task(turn(one))
            return one, two, first_id

        one, two, first_id = asyncio.run(main())
    finally:
        trace.set_sink(None)
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), [line for line, match in zip(lines, parsed) if match is None]
    by_session: dict[str, list[str]] = {}
    for match in parsed:
        by_session.setdefault(match.group(3), []).append(match.group(1))
    assert one.trace_id != first_id
    assert set(by_session) == {first_id, two.trace_id, one.trace_id}
    for stages in by_session.values():
        assert stages[0] == "query.turn_start" and stages[-1] == "query.turn_end"
