"""One bad file in the data dir never breaks `sessions`, `--continue`, `export` or `replay` (issue 19
item 4): deep JSON, `1e400`, content of the wrong shape, a lone surrogate, a `*.jsonl` symlink to
/dev/zero and a `*.jsonl` FIFO. Files are checked before they are read; bad lines are skipped with a
warning; a listing leaves a bad file out instead of failing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui_agent.core.journal.export import markdown_of
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.records import FORMAT_VERSION, JournalError, new_session_id
from tui_agent.core.journal.store import list_sessions
from tui_agent.core.messages import protocol_errors

ROOT = Path(__file__).resolve().parents[2]
AT = "2026-12-01T00:00:0{}.000Z"


def dumps(record: dict) -> str:
    return json.dumps(record, separators=(",", ":"))  # as the writer does (the listing counts by prefix)


def header(session_id: str, workspace: Path) -> str:
    return dumps({"type": "header", "format": FORMAT_VERSION, "session_id": session_id,
                       "workspace": str(workspace), "model": "demo", "provider": "demo", "started": AT.format(0)})


def message(index: int, role: str, content) -> str:
    return dumps({"type": "message", "at": AT.format(index + 1), "index": index,
                       "message": {"role": role, "content": content}})


GOOD = [message(0, "user", "the good question"), message(1, "assistant", [{"type": "text", "text": "fine"}])]
BAD_LINES = {
    "deep": ["[" * 100_000 + "]" * 100_000, *GOOD],
    "overflow": [*GOOD, '{"type":"usage","at":"x","call":1e400,"input_tokens":1e400,"output_tokens":1}',
                 '{"type":"call","at":"x","call":1,"estimated_tokens":1e400}'],
    "content_number": [message(0, "user", 42), *GOOD[:0], message(0, "user", "after the bad one"),
                       message(1, "assistant", "ok")],
    "blocks_not_objects": [message(0, "user", ["not a block", 7]), message(0, "user", "second try"),
                           message(1, "assistant", [{"type": "text", "text": 5}]), message(1, "assistant", "ok")],
    "surrogate": [message(0, "user", "lone \ud800 surrogate"), message(1, "assistant", "ok \udfff")],
    "cost_text": [*GOOD, '{"type":"call","at":"x","call":1,"estimated_tokens":5,"history_len":1}',
                  '{"type":"usage","at":"x","call":1,"input_tokens":3,"output_tokens":1,"cost_usd":"free"}'],
}


@pytest.fixture
def data_dir(tmp_path: Path) -> tuple[Path, Path, dict[str, Path]]:
    """A workspace, its data dir's sessions folder with one good session and every kind of bad file."""
    workspace = tmp_path / "repo"
    workspace.mkdir()
    folder = Path(os.environ["TUI_AGENT_DATA_DIR"]) / "sessions"
    folder.mkdir(parents=True)
    files = {}
    for name, lines in BAD_LINES.items():
        sid = new_session_id()[:-6] + f"{len(files):06x}"
        files[name] = folder / f"{sid}.jsonl"
        files[name].write_text("\n".join([header(sid, workspace), *lines]) + "\n")
    sid = new_session_id()[:-6] + "ffffff"
    files["bad_utf8"] = folder / f"{sid}.jsonl"
    files["bad_utf8"].write_bytes("\n".join([header(sid, workspace), *GOOD]).encode() + b"\n\xff\xfe{\n")
    (folder / "zero.jsonl").symlink_to("/dev/zero")
    os.mkfifo(folder / "fifo.jsonl")
    return workspace, folder, files


def test_the_reader_skips_what_it_cannot_read_and_keeps_the_rest(data_dir) -> None:
    workspace, folder, files = data_dir
    for name, path in files.items():
        load = read_journal(path)
        assert load.history, name
        assert protocol_errors(load.history) == [], name
        text = markdown_of(load)
        text.encode("utf-8")  # printable: no lone surrogate survives
        assert name == "surrogate" or load.warnings, name
    assert read_journal(files["content_number"]).history[0]["content"] == "after the bad one"
    assert "lone ? surrogate" in markdown_of(read_journal(files["surrogate"]))
    for name in ("zero.jsonl", "fifo.jsonl"):
        with pytest.raises(JournalError, match="not a regular file"):
            read_journal(folder / name)


def test_a_listing_never_fails_because_of_one_file(data_dir) -> None:
    workspace, folder, files = data_dir
    warnings: list[str] = []
    infos = list_sessions(workspace, warnings=warnings)
    assert {info.path for info in infos} == set(files.values())
    for info in infos:
        (info.line() + info.first_prompt).encode("utf-8")
    assert sorted(w.split(":")[0].rsplit("/", 1)[-1] for w in warnings) == ["fifo.jsonl", "zero.jsonl"]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "tui_agent", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)  # a hang is a TimeoutExpired


def test_sessions_continue_export_and_replay_survive_the_bad_files(data_dir) -> None:
    workspace, folder, files = data_dir
    listed = cli("sessions", "--all", cwd=workspace)
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
    assert len(listed.stdout.splitlines()) == len(files)
    assert "zero.jsonl" in listed.stderr and "fifo.jsonl" in listed.stderr  # left out, and said so
    as_json = cli("sessions", "--json", cwd=workspace)
    assert as_json.returncode == 0 and len(as_json.stdout.splitlines()) == len(files), as_json.stderr
    resumed = cli("--continue", "--print-outbound", cwd=workspace)
    assert resumed.returncode == 0 and "Traceback" not in resumed.stderr, resumed.stderr
    for path in [*files.values(), folder / "zero.jsonl", folder / "fifo.jsonl"]:
        exported = cli("export", str(path), cwd=workspace)
        assert "Traceback" not in exported.stderr, (path.name, exported.stderr)
        assert exported.returncode in (0, 2) and (exported.returncode == 0 or "error:" in exported.stderr)
        exported = cli("export", str(path), "--format", "jsonl", cwd=workspace)
        assert "Traceback" not in exported.stderr, (path.name, exported.stderr)
        replayed = cli("replay", str(path), "--json", cwd=workspace)
        assert "Traceback" not in replayed.stderr, (path.name, replayed.stderr)
