"""`tui-agent report`: a few recorded sessions (Claude Code, Codex, a broken file) replayed, priced and shown;
the figures are the replay engine's own (each strategy's causes add up to its replayed cost, the recorded
bill to the watch's per-call figures), kept by content hash (a second run replays nothing and writes the
same table bytes), the same bytes on two processes as on one, one line per file that cannot be read."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from tests.shared import ROOT, SYNTHETIC_LONG
from tui_agent.faces.cli import main

CODEX = ROOT / "tests" / "data" / "codex-rollout.jsonl"
SMALL = ROOT / "tests" / "data" / "synthetic-claude-code.jsonl"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store of logs as a user has them: two Claude Code projects, a Codex rollout, a file that is none."""
    root = tmp_path / "store"
    (root / "projects" / "-home-a").mkdir(parents=True)
    (root / "projects" / "-home-b").mkdir(parents=True)
    (root / "codex" / "2026" / "01" / "02").mkdir(parents=True)
    shutil.copy(SYNTHETIC_LONG, root / "projects" / "-home-a" / "long.jsonl")
    shutil.copy(SMALL, root / "projects" / "-home-b" / "small.jsonl")
    shutil.copy(CODEX, root / "codex" / "2026" / "01" / "02" / "rollout-2026-01-02T10-00-00-x.jsonl")
    (root / "projects" / "-home-b" / "broken.jsonl").write_bytes(b"\x00\xff\xfe not json at all\n")
    (root / "projects" / "-home-b" / "notes.txt").write_text("not a log")
    return root


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_a_store_is_replayed_shown_and_tabled_and_a_broken_file_is_one_line(store, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TUI_AGENT_CACHE_DIR", str(tmp_path / "cache"))
    table, page = tmp_path / "t.csv", tmp_path / "p.html"
    assert main(["report", str(store), "--jobs", "1", "--table", str(table), "--html", str(page)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("3 sessions replayed") and "1 session could not be read" in out
    broken = [line for line in out.splitlines() if "broken.jsonl" in line]
    assert len(broken) == 1 and broken[0].startswith(f"  {store}")  # listed once, with why
    assert "spent at list prices: $" in out and "tui-agent would have spent $" in out
    for label in ("recorded agent", "tui-agent", "Claude Code autocompact", "opencode prune", "context editing"):
        assert any(line.startswith(label) for line in out.splitlines()), label
    rows = _rows(table)
    assert [Path(r["path"]).name for r in rows] == sorted(
        ["long.jsonl", "small.jsonl", "rollout-2026-01-02T10-00-00-x.jsonl", "broken.jsonl"],
        key=lambda name: next(str(p) for p in store.rglob(name)))  # sorted by path, the .txt left out
    by_name = {Path(r["session"]).name: r for r in rows}
    assert by_name["broken.jsonl"]["error"] and not by_name["broken.jsonl"]["calls"]
    assert by_name["rollout-2026-01-02T10-00-00-x.jsonl"]["agent"] == "codex"
    assert int(by_name["long.jsonl"]["calls"]) == 48 and int(by_name["long.jsonl"]["ours_pings"]) > 0
    assert "table: " in err and "page: " in err and "\r" not in err  # no progress bar off a terminal
    text = page.read_text(encoding="utf-8")
    assert text.count("class=\"plotly-graph-div\"") == 5 and "<script src=" not in text  # plotly.js inlined


def test_a_second_run_replays_nothing_and_writes_the_same_bytes(store, tmp_path):
    from tui_agent.report.collect import Collector
    from tui_agent.report.sources import find_sessions
    from tui_agent.report.table import write_table

    files, _ = find_sessions([store])
    first = Collector(files, cache_root=tmp_path / "cache")
    rows = first.run(jobs=1, progress=False)
    write_table(rows, tmp_path / "one.parquet")
    second = Collector(files, cache_root=tmp_path / "cache")
    again = second.run(jobs=1, progress=False)
    write_table(again, tmp_path / "two.parquet")
    assert first.replayed == 4 and second.replayed == 0 and second.cache.hits == 4  # the broken one is kept too
    assert (tmp_path / "one.parquet").read_bytes() == (tmp_path / "two.parquet").read_bytes()
    (store / "projects" / "-home-b" / "small.jsonl").write_bytes(SYNTHETIC_LONG.read_bytes())  # one log changes
    third = Collector(files, cache_root=tmp_path / "cache")
    third.run(jobs=1, progress=False)
    assert third.replayed == 0 and third.cache.hits == 4  # its new bytes are the long log's: already known
    (store / "projects" / "-home-b" / "small.jsonl").write_text(SMALL.read_text() + "\n")
    fourth = Collector(files, cache_root=tmp_path / "cache")
    fourth.run(jobs=1, progress=False)
    assert fourth.replayed == 1


def test_two_processes_give_the_bytes_of_one(store, tmp_path):
    from tui_agent.report.collect import Collector
    from tui_agent.report.sources import find_sessions
    from tui_agent.report.table import write_table

    files, _ = find_sessions([store])
    for jobs in (1, 2):
        write_table(Collector(files, cache=False).run(jobs=jobs, progress=False), tmp_path / f"jobs{jobs}.parquet")
    assert (tmp_path / "jobs1.parquet").read_bytes() == (tmp_path / "jobs2.parquet").read_bytes()


def test_the_progress_bar_counts_sessions_rate_and_time_left(store, tmp_path, capsys):
    from tui_agent.report.collect import Collector
    from tui_agent.report.sources import find_sessions

    files, _ = find_sessions([store])
    Collector(files, cache_root=tmp_path / "cache").run(jobs=1, progress=True)
    err = capsys.readouterr().err
    assert "4/4" in err and "/s" in err and "left" in err


def test_no_log_found_is_one_line_and_a_bad_table_name_is_refused(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == f"error: no session logs (*.jsonl) found under {tmp_path}"
    assert main(["report", str(tmp_path), "--table", str(tmp_path / "t.xlsx")]) == 2
    assert "write a .parquet or a .csv file" in capsys.readouterr().err
