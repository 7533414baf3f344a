"""A journal is never seen without its header: a reader that finds the file (`sessions`, `--continue`, a
test polling the folder while a real process writes) always finds a journal. The file used to be created
empty and given its header just after; `tests/e2e/test_kill_resume.py` polls the folder while the CLI
starts, and failed once under load with "is empty or not a tui-agent session journal"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tui_agent.core.journal import journal_file
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.resume import resume_journaled
from tui_agent.core.journal.writer import JournalFile, start_journal
from tui_agent.core.paths import sessions_dir
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply

from .helpers import run, session_on

ROOT = Path(__file__).resolve().parents[2]
HEADER = {"type": "header", "format": 1, "session_id": "s", "workspace": "/w", "started": "2027-01-01T00:00:00.000Z"}


async def test_the_file_appears_with_its_header_already_in_it(tmp_path: Path, monkeypatch) -> None:
    """Between taking the lock and writing the header (the old gap), the session is not to be found yet."""
    looks: list[str] = []
    real_lock = journal_file.lock_file

    def lock_and_look(fd: int, path: Path) -> None:
        real_lock(fd, path)
        looks.append("locked")
        for journal in sessions_dir().glob("*.jsonl"):
            looks.append(read_journal(journal).session_id)  # an empty file raises JournalError here

    monkeypatch.setattr(journal_file, "lock_file", lock_and_look)
    session = session_on(tmp_path, ScriptedProvider(replies=[text_reply("one"), text_reply("two")]))
    journal = start_journal(session)
    await run(session, "first")
    journal.close()
    resume_journaled(session_on(tmp_path, ScriptedProvider()), read_journal(journal.path))[0].close()
    assert looks == ["locked", "locked", session.session_id]  # created, then found whole when resumed
    assert read_journal(journal.path).history[0]["content"][0]["text"] == "first"
    assert not list(journal.path.parent.glob(".*.part"))  # nothing left beside it
    assert os.stat(journal.path).st_mode & 0o777 == 0o600


WRITER = """
import sys
from pathlib import Path
from tui_agent.core.journal.writer import JournalFile
folder = Path(sys.argv[1])
for line in sys.stdin:  # one journal per line the test sends, so each is read the moment it appears
    number = int(line)
    JournalFile(folder / f"s{number}.jsonl", header={"type": "header", "format": 1, "session_id": f"s{number}",
                "workspace": "/w", "started": "2027-01-01T00:00:00.000Z"}).close()
"""


def test_a_reader_racing_a_real_writer_never_finds_an_empty_journal(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], cwd=ROOT, env=env,
                              stdin=subprocess.PIPE, text=True)
    try:
        for number in range(150):
            path = tmp_path / f"s{number}.jsonl"
            writer.stdin.write(f"{number}\n")
            writer.stdin.flush()
            deadline = time.monotonic() + 30  # a safety net against a hang, not a speed check
            while not path.exists():  # spin: read it in the first microseconds it can be seen
                assert writer.poll() is None and time.monotonic() < deadline, "the writer stopped"
            assert read_journal(path).session_id == f"s{number}"
    finally:
        writer.stdin.close()
        writer.wait(timeout=30)
    assert writer.returncode == 0


def test_an_empty_file_left_by_an_older_version_gets_the_header(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_bytes(b"")
    JournalFile(path, header=HEADER).close()
    assert read_journal(path).session_id == "s"
    JournalFile(path, header=HEADER).close()  # a file with records is appended to, never given a second header
    assert path.read_bytes().count(b'"header"') == 1


def test_a_message_seen_mid_write_is_no_message_of_the_listing(tmp_path: Path) -> None:
    """A large record reaches the file page by page: a listing in between can see it cut just after an
    inner `}`. The fast summary counted that as a message; the full read (rightly) did not."""
    from tui_agent.core.journal.store import SessionInfo, summarize

    path = tmp_path / "live.jsonl"
    first = {"type": "message", "at": "2027-01-01T00:00:01.000Z", "index": 0,
             "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}}
    second = {"type": "message", "at": "2027-01-01T00:00:02.000Z", "index": 1, "message": {"role": "assistant",
              "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}},
                          {"type": "text", "text": "x" * 5000}]}}
    line = json.dumps(second, separators=(",", ":"))
    cut = line[:line.index("}") + 1]  # up to the end of the tool_use's input: ends in "}", is no record
    path.write_text("\n".join(json.dumps(r, separators=(",", ":")) for r in (HEADER, first)) + "\n" + cut)
    assert summarize(path) == SessionInfo.of(read_journal(path))
    assert summarize(path).messages == 1
