"""Two processes continuing one session never both append to it (issue 19 item 6): the journal is
locked (`flock`, non-blocking) while a process writes it; a second process continues in a new file
linked to it as its parent, and says so. The lock dies with its process: after `kill -9` the session
continues in its own file again. Real processes, no timing: the holder says when it holds the lock."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.resume import resume_journaled
from tui_agent.core.journal.writer import JournalFile, JournalLocked, start_journal
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply

from .helpers import run, session_on

ROOT = Path(__file__).resolve().parents[2]
HOLDER = """
import sys
from pathlib import Path
from tests.journal.helpers import session_on
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.resume import resume_journaled
session = session_on(Path(sys.argv[2]))
resume_journaled(session, read_journal(Path(sys.argv[1])))
print("holding", flush=True)
sys.stdin.read()  # until the test kills us (or closes our stdin)
"""


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    out["PYTHONPATH"] = str(ROOT)
    return out


def hold(path: Path, workspace: Path) -> subprocess.Popen:
    """A second process that resumed the session and keeps it open; returns once it holds the lock."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(workspace)], cwd=ROOT, env=env(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()  # bounded: the child either prints or exits (EOF)
    assert line.strip() == "holding", proc.communicate(timeout=30)
    return proc


async def journaled(workspace: Path) -> Path:
    session = session_on(workspace, ScriptedProvider(replies=[text_reply("one")]))
    journal = start_journal(session)
    await run(session, "first")
    journal.close()
    return journal.path


async def test_a_second_process_forks_and_a_killed_one_leaves_no_lock(tmp_path: Path) -> None:
    path = await journaled(tmp_path)
    before = path.read_bytes()
    holder = hold(path, tmp_path)
    try:
        fresh = session_on(tmp_path, ScriptedProvider(replies=[text_reply("two")]))
        journal, notices = resume_journaled(fresh, read_journal(path))
        assert journal.path != path and any("open in another tui-agent process" in n.text for n in notices)
        await run(fresh, "second")
        forked = read_journal(journal.path)
        assert forked.header.parent == read_journal(path).session_id  # linked to the session it continues
        assert [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
                for m in forked.history] == ["first", "one", "second", "two"]
        journal.close()
    finally:
        holder.kill()  # kill -9: the lock must die with it
        holder.communicate(timeout=30)
    assert len(read_journal(path).history) == 2  # nothing of the fork's turns in the parent
    assert path.read_bytes().startswith(before)
    again = session_on(tmp_path, ScriptedProvider(replies=[text_reply("three")]))
    journal, notices = resume_journaled(again, read_journal(path))
    assert journal.path == path and not any("another" in n.text for n in notices)
    journal.close()


async def test_the_cli_continue_of_a_session_in_use_forks_instead_of_interleaving(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    path = await journaled(workspace)
    holder = hold(path, workspace)
    try:
        out = subprocess.run([sys.executable, "-m", "tui_agent", "--continue", "-p", "hello"], cwd=workspace,
                             env=env(), capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
    finally:
        holder.kill()
        holder.communicate(timeout=30)
    assert out.returncode == 0, out.stderr
    assert "open in another tui-agent process" in out.stderr
    assert len(read_journal(path).history) == 2  # the holder's file got nothing from the second process
    forks = [p for p in path.parent.glob("*.jsonl") if p != path]
    assert len(forks) == 1 and len(read_journal(forks[0]).history) == 4


def test_a_second_open_of_a_locked_file_is_refused(tmp_path: Path) -> None:
    first = JournalFile(tmp_path / "s.jsonl")
    try:
        try:
            JournalFile(tmp_path / "s.jsonl")
        except JournalLocked as error:
            assert "in use by another tui-agent process" in str(error)
        else:
            raise AssertionError("the second writer was let in")
    finally:
        first.close()
    JournalFile(tmp_path / "s.jsonl").close()  # closed: free again
