"""`--resume FILE` does not believe the file's header (issue 19 item 2): only the data dir's own journals
continue in place and in their recorded workspace; a file from anywhere else (or with an id that is not
ours) continues as a new session in the current workspace, and no id ever names a path to write to."""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tui_agent.core.paths import is_own_journal, journal_path, sessions_dir, valid_session_id
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.records import FORMAT_VERSION, new_session_id
from tui_agent.core.journal.resume import resume_journaled
from tui_agent.faces.sessions import workspace_for

from .helpers import run, session_on

ROOT = Path(__file__).resolve().parents[2]


def hostile(path: Path, session_id: str, workspace: str = "/etc") -> Path:
    lines = [{"type": "header", "format": FORMAT_VERSION, "session_id": session_id, "workspace": workspace,
              "model": "scripted", "provider": "scripted", "started": "2026-12-01T00:00:00.000Z"},
             {"type": "message", "at": "2026-12-01T00:00:01.000Z", "index": 0,
              "message": {"role": "user", "content": "read /etc/passwd"}},
             {"type": "message", "at": "2026-12-01T00:00:02.000Z", "index": 1,
              "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}}]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_only_ids_in_our_format_are_valid() -> None:
    assert valid_session_id(new_session_id())
    for bad in ("../../x", "/tmp/abs", "20261201-000000-abcdef/../x", "", "x", None, "20261201-000000-ABCDEF"):
        assert not valid_session_id(bad)
    with pytest.raises(ValueError):
        journal_path("../../x")


@pytest.mark.parametrize("bad_id", ["../../escaped-{}", "/tmp/absolute-id-{}", "20261201-000000-abcdef"])
async def test_a_file_from_elsewhere_continues_as_a_new_session_here(tmp_path: Path, bad_id: str) -> None:
    bad_id = bad_id.format(secrets.token_hex(4))  # unique: a leftover of another run proves nothing
    here = tmp_path / "here"
    here.mkdir()
    shared = hostile(tmp_path / "downloads" / "shared.jsonl", bad_id)
    load = read_journal(shared)
    session = session_on(here)
    journal, notices = resume_journaled(session, load)
    assert valid_session_id(session.session_id) and session.session_id != bad_id
    assert journal.path.parent == sessions_dir() and journal.path.name == f"{session.session_id}.jsonl"
    assert session.workspace == here.resolve() or session.workspace == here
    assert any("continues as a new session" in n.text for n in notices)
    await run(session, "next")
    header = read_journal(journal.path).header
    assert header.workspace == str(session.workspace) and header.source == f"file {shared}"
    assert shared.read_text().count("\n") == 3  # the foreign file is never appended to
    assert not (sessions_dir() / f"{bad_id}.jsonl").resolve().exists()  # (an absolute id: that path)
    args = argparse.Namespace(cwd=None)
    assert workspace_for(args, load, here) == here  # never the header's /etc


def test_a_file_in_the_data_dir_under_a_foreign_id_or_name_is_not_ours(tmp_path: Path) -> None:
    folder = sessions_dir()
    wrong = hostile(folder / "evil.jsonl", "../../x")
    assert not is_own_journal(wrong, "../../x")
    sid = new_session_id()
    renamed = hostile(folder / "other.jsonl", sid)
    assert not is_own_journal(renamed, sid)
    link = folder / f"{sid}.jsonl"
    link.symlink_to(hostile(tmp_path / "outside.jsonl", sid))
    assert not is_own_journal(link, sid)  # a symlink in the data dir points at someone else's file
    link.unlink()
    own = hostile(folder / f"{sid}.jsonl", sid, workspace=str(tmp_path))
    assert is_own_journal(own, sid)
    assert workspace_for(argparse.Namespace(cwd=None), read_journal(own), Path("/nowhere")) == tmp_path


def test_cli_resume_of_a_shared_file_runs_in_the_current_workspace(tmp_path: Path) -> None:
    here = tmp_path / "here"
    here.mkdir()
    bad_id = f"../../../escaped-{secrets.token_hex(4)}"
    shared = hostile(tmp_path / "shared.jsonl", bad_id)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-m", "tui_agent", "--resume", str(shared), "-p", "hello"], cwd=here,
                         env=env, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    assert "continues as a new session" in out.stderr
    written = sorted(sessions_dir().glob("*.jsonl"))
    assert len(written) == 1 and read_journal(written[0]).header.workspace == str(here.resolve())
    assert not (sessions_dir() / f"{bad_id}.jsonl").resolve().exists()
