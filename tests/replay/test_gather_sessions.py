"""The public sessions the benches replay are listed by blob (bench/sessions.tsv) and written back, byte for
byte, from clones of their repositories (bench/gather_sessions.py): the held-out figures can be reproduced."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _gather():
    spec = importlib.util.spec_from_file_location("gather_sessions", ROOT / "bench" / "gather_sessions.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_names_each_session_once_by_repository_and_blob():
    rows = _gather().rows()
    assert len(rows) >= 200
    assert len({r["file"] for r in rows}) == len(rows)
    assert {r["set"] for r in rows} == {"extra", "more"}
    for row in rows:
        assert re.fullmatch(r"[0-9a-f]{40}", row["blob"]), row
        assert row["file"].startswith(row["repository"].replace("/", "__") + "__") and row["file"].endswith(".jsonl")


def test_a_session_is_written_from_a_clone_and_checked(tmp_path, monkeypatch, capsys):
    clone = tmp_path / "clones" / "someone+logs"
    clone.mkdir(parents=True)
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    (clone / "session.jsonl").write_text('{"type": "user"}\n', encoding="utf-8")
    subprocess.run([*git, "add", "session.jsonl"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "log"], check=True)
    blob = subprocess.run([*git, "rev-parse", "HEAD:session.jsonl"], capture_output=True, text=True, check=True).stdout.strip()
    table = tmp_path / "sessions.tsv"
    table.write_text("# comment\nfile\trepository\tblob\tset\n"
                     f"someone__logs__a.jsonl\tsomeone/logs\t{blob}\tmore\n"
                     f"someone__logs__b.jsonl\tsomeone/logs\t{'0' * 40}\tmore\n", encoding="utf-8")
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", ["gather_sessions.py", str(tmp_path / "clones"), "--out", str(out), "--table", str(table)])
    assert _gather().main() == 1  # one of the two blobs is not in the clone
    assert (out / "someone__logs__a.jsonl").read_text(encoding="utf-8") == '{"type": "user"}\n'
    assert not (out / "someone__logs__b.jsonl").exists()
    said = capsys.readouterr()
    assert "1 written, 1 missing" in said.out and "missing: someone__logs__b.jsonl" in said.err
