"""`tui-agent replay FILE --report / --json`: the benchmark's numbers, headless, for synthetic and shared logs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.shared import LOGS, SMALLEST_LOG, TRANSCRIPT_FILES
from tests.replay.test_replay_core import compacting_log
from tui_agent.core.recordings.replay import open_replay
from tui_agent.faces.cli import main
from tui_agent.core.recordings.economics_report import format_report, session_report

FILES = LOGS  # the real logs in ../shared, else the long synthetic one: never skipped
SMALLEST = SMALLEST_LOG
LARGEST = max(FILES, key=lambda p: p.stat().st_size)
TIMES = re.compile(r"\s+[\d.]+ms\s+[\d.]+ms$")  # the compaction-time columns: wall clock, never equal


def untimed(text: str) -> list[str]:
    return [TIMES.sub("", line) for line in text.strip().splitlines()]


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def check_report_matches(path: Path, capsys) -> None:
    code, out, err = run(["replay", str(path), "--report"], capsys)
    assert code == 0, err
    # the face prices at the recorded model's own cache prices (its time to live: waits are priced)
    expected = format_report([session_report(path, price=open_replay(path).price)])
    assert untimed(out) == untimed(expected)
    assert out.startswith(f"== {path.name}:")


def check_json_matches(path: Path, capsys, report=None) -> dict:
    code, out, err = run(["replay", str(path), "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    report = report or session_report(path, price=open_replay(path).price)
    assert data["report"]["calls"] == report.calls == len(data["steps"])
    for name, result in report.results.items():
        got = data["report"]["strategies"][name]
        for key in ("calls", "over_window", "peak", "tokens", "cost", "cached", "newest_intact", "prompts_missing",
                    "paths_missing", "invalid", "events"):
            assert got[key] == getattr(result, key), (name, key)
        # the report's cost is the last call's running total and the pings after it (the tail)
        assert data["steps"][-1]["costs"][name]["total_cost"] + result.tail_cost == pytest.approx(result.cost,
                                                                                                    abs=0.001)
    assert data["report"]["estimate_error"]["ours"]["median"] == report.estimate.median
    return data


def test_report_prints_the_benchmarks_table(tmp_path: Path, capsys) -> None:
    check_report_matches(compacting_log(tmp_path / "c.jsonl"), capsys)


def test_json_carries_the_reports_numbers_and_each_call(tmp_path: Path, capsys) -> None:
    path = compacting_log(tmp_path / "c.jsonl")
    data = check_json_matches(path, capsys)
    assert data["kind"] == "claude-code" and data["agent_compactions"][0]["kind"] == "boundary"


@pytest.mark.parametrize("content, message", [
    ("", "no user or assistant messages"),
    ("not json at all\n", "no user or assistant messages"),
    ('{"type":"user","message":{"role":"user","content":"hi"}}\n', "no recorded model call"),
    ('{"type":"header","format":99,"session_id":"x","workspace":"/"}\n', "newer tui-agent"),
])
@pytest.mark.parametrize("flag", ["--report", "--json", None])
def test_unusable_files_get_one_clear_line(tmp_path: Path, capsys, content: str, message: str, flag) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    code, out, err = run(["replay", str(path)] + ([flag] if flag else []), capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_a_missing_file_is_an_error(tmp_path: Path, capsys) -> None:
    code, _, err = run(["replay", str(tmp_path / "nope.jsonl"), "--report"], capsys)
    assert code == 2 and "is not a file" in err


def test_replay_is_listed_in_help_and_version_stays_light(capsys) -> None:
    import subprocess
    import sys

    code = subprocess.run([sys.executable, "-X", "importtime", "-m", "tui_agent.faces.cli", "--version"],
                          capture_output=True, text=True)
    assert code.returncode == 0 and code.stdout.startswith("tui-agent ")
    loaded = {line.split("|")[-1].strip() for line in code.stderr.splitlines()}
    assert not {"tui_agent.faces.replay", "tui_agent.core.recordings.replay", "tui_agent.core.recordings.economics"} & loaded
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    assert "--report" in capsys.readouterr().out


def test_the_smallest_shared_transcript_reports_like_the_benchmark(capsys) -> None:
    check_report_matches(SMALLEST, capsys)


@pytest.mark.parametrize("path", [pytest.param(p, marks=[] if p == SMALLEST else [pytest.mark.slow])
                                  for p in FILES], ids=lambda p: p.name[:24])
def test_shared_transcripts_replay_headless(path: Path, capsys) -> None:
    """Every call of a real session, headless: --json (the report and each step agree: the running cost
    at the last call is the table's cost), then --report. The smallest file is also checked number for
    number against `session_report` above; the big ones skip the prompts/paths count to keep this short,
    and the largest prints its table only inside --json."""
    flags = [] if path == SMALLEST else ["--no-memory"]
    code, out, err = run(["replay", str(path), "--json", *flags], capsys)
    assert code == 0, err
    data = json.loads(out)
    steps, strategies = data["steps"], data["report"]["strategies"]
    assert len(steps) == data["report"]["calls"] > 20
    assert [s["call"] for s in steps] == list(range(1, len(steps) + 1))
    for name, result in strategies.items():
        assert result["invalid"] == 0 and result["calls"] == len(steps)
        assert steps[-1]["costs"][name]["total_cost"] + result["tail_cost"] == pytest.approx(result["cost"], abs=0.001)
    assert all(s["ours"]["sent"] > 0 and s["recorded"]["real_tokens"] > 0 for s in steps)
    if path == LARGEST and len(TRANSCRIPT_FILES) > 2:
        return  # its --json above already holds the whole report; a second full replay would double the time
    code, out, err = run(["replay", str(path), "--report", *flags], capsys)
    assert code == 0, err
    lines = untimed(out)
    assert lines[0].startswith(f"== {path.name}: {data['report']['messages']} messages, {len(steps)} calls")
    assert [line.split()[0] for line in lines[2:6]] == list(strategies)


def test_the_synthetic_transcript_replays_headless_like_the_benchmark(capsys) -> None:
    """The acceptance checks above on the small log kept under tests/ (never skipped)."""
    from tests.shared import SYNTHETIC_TRANSCRIPT

    check_report_matches(SYNTHETIC_TRANSCRIPT, capsys)
    data = check_json_matches(SYNTHETIC_TRANSCRIPT, capsys)
    assert len(data["steps"]) == 9 and [c["kind"] for c in data["agent_compactions"]] == ["boundary"]


def test_a_long_replay_shows_its_progress_on_stderr_and_a_short_one_does_not(tmp_path: Path, capsys,
                                                                             monkeypatch) -> None:
    path = compacting_log(tmp_path / "c.jsonl")
    monkeypatch.setattr("tui_agent.faces.replay_progress.PROGRESS_AFTER", 1e9)  # as if every call were quick
    code, out, err = run(["replay", str(path), "--report"], capsys)
    assert code == 0 and "replaying" not in err
    monkeypatch.setattr("tui_agent.faces.replay_progress.PROGRESS_AFTER", 0.0)  # as if every call took long
    code, out, err = run(["replay", str(path), "--json"], capsys)
    calls = json.loads(out)["report"]["calls"]
    assert code == 0 and err.splitlines()[-1] == f"replaying call {calls}/{calls}…"
    assert 2 <= len(err.splitlines()) <= 11  # a line per tenth when stderr is not a terminal
