"""When the journal reaches the disk: every record is handed to the OS at once (a kill loses nothing), and
the file is fsynced once per turn and on close, not once per record (an fsync per record was the biggest
cost per model call of a long turn: bench/bench_turn.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tui_agent.core.journal.writer import start_journal
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply

from .helpers import run, session_on


def test_records_are_flushed_at_once_and_fsynced_once_per_turn(tmp_path: Path, monkeypatch) -> None:
    import asyncio

    workspace = tmp_path / "repo"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the answer is 42\n")
    reads = [tool_reply("Read", {"file_path": "notes.txt"}, f"t{i}", "Reading.") for i in range(8)]
    session = session_on(workspace, ScriptedProvider(replies=[*reads, text_reply("It says 42.")]))
    journal = start_journal(session)
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    lines_seen: list[int] = []
    session.listeners.append(lambda event: lines_seen.append(len(journal.path.read_text().splitlines())))

    asyncio.run(run(session, "read the notes eight times"))

    records = [json.loads(line) for line in journal.path.read_text().splitlines()]
    assert sum(r["type"] == "message" for r in records) == len(session.history) == 18
    assert lines_seen == sorted(lines_seen) and lines_seen[-1] == len(records)  # on disk before the next listener
    assert len(synced) == 1  # once, when the turn closed (it was four or more per model call)
    journal.close()
    assert len(synced) == 2  # and on close
