"""Codex CLI rollouts in replay and watch: one step per model call with the rollout's own usage, the agent's
compactions, and the same token timeline from a rollout whose text is hashed away or whose items are gone.

`tests/data/codex-rollout.jsonl` was written by the real Codex CLI (0.171.0) against the Responses fake
(`python -m tests.agents.codex_run`); one test runs the CLI again, so a newer Codex is checked too.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.agents.codex_run import SUMMARY, fake_for_codex, run_codex_turn
from tests.npm_agents import rollouts
from tui_agent.core.recordings.codex_logs import agent_logs, load_log, read_log
from tui_agent.core.recordings.follow import Batch
from tui_agent.core.messages import protocol_errors
from tui_agent.core.recordings.replay import open_replay
from tui_agent.core.recordings.watch import LiveReplay

DATA = Path(__file__).resolve().parents[1] / "data"
ROLLOUT = DATA / "codex-rollout.jsonl"


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _own_inputs(records: list[dict]) -> list[int]:
    """The input tokens of each model call as the rollout says (its usage records; else each change of the
    session total in its token counts)."""
    usage = [r["payload"]["usage"]["input_tokens"] for r in records if r["type"] == "token_usage_record"]
    if usage:
        return usage
    out, last = [], None
    for r in records:
        info = r["payload"].get("info") if r["type"] == "event_msg" and r["payload"].get("type") == "token_count" else None
        if info and info["total_token_usage"] != last:
            last = info["total_token_usage"]
            out.append(info["last_token_usage"]["input_tokens"])
    return out


def _replayed(path: Path) -> list[int]:
    replay = open_replay(path, ("none", "v2"))
    return [replay.step(k).real_tokens for k in range(replay.calls)]


def test_stored_rollout_replays_one_step_per_call_with_its_own_input_tokens():
    records = _records(ROLLOUT)
    assert _replayed(ROLLOUT) == _own_inputs(records) == [2400, 4200, 5400, 7200, 3000]
    load = load_log(ROLLOUT)
    assert protocol_errors(load.history) == []
    assert load.models == {"gpt-5-codex"}


def test_a_rollout_without_usage_records_counts_one_call_per_change_of_the_total(tmp_path):
    records = [r for r in _records(ROLLOUT) if r["type"] != "token_usage_record"]
    counts = [r for r in records if r["type"] == "event_msg" and r["payload"].get("type") == "token_count"]
    assert len(counts) > 5  # Codex wrote some counts twice: those are not calls
    path = _write(tmp_path / "rollout-old.jsonl", records)
    assert _replayed(path) == _own_inputs(records) == [2400, 4200, 5400, 7200, 3000]


def test_the_agents_compaction_is_found_and_its_requests_start_at_the_replacement_history():
    replay = open_replay(ROLLOUT, ("none", "v2"))
    [compaction] = replay.agent_compactions  # the compacted record: one compaction, not a boundary and a summary
    assert (compaction.kind, compaction.call) == ("boundary", 5)
    assert compaction.text == SUMMARY  # the summary Codex kept, not the skills text its request starts with
    recorded = replay.recorded
    start = recorded.segment_start[4]
    assert start > 0 and recorded.segment_start[:4] == [0, 0, 0, 0]
    kept = json.dumps(recorded.history[start])
    assert "SUMMARY: ran echo one" in kept and "Run echo one, echo two" in kept  # what Codex's requests hold on
    assert recorded.segment_start[4] in recorded.boundaries


def test_a_compaction_only_announced_by_its_event_is_still_a_boundary(tmp_path):
    records = []
    for r in _records(ROLLOUT):
        if r["type"] == "compacted":
            r = {"timestamp": r["timestamp"], "type": "event_msg", "payload": {"type": "context_compacted"}}
        records.append(r)
    replay = open_replay(_write(tmp_path / "rollout-event.jsonl", records), ("none",))
    assert [c.call for c in replay.agent_compactions if c.kind == "boundary"] == [5]


KEEP = {"type", "role", "call_id", "id", "status", "name", "model", "turn_id"}  # structure, not text


def _hashed(value, key=""):
    """Every text of a payload replaced by a hash of it, as a redacting exporter does."""
    if isinstance(value, str):
        return value if key in KEEP else hashlib.sha256(value.encode()).hexdigest()[:16]
    if isinstance(value, list):
        return [_hashed(v, key) for v in value]
    if isinstance(value, dict):
        return {k: _hashed(v, k) for k, v in value.items()}
    return value


def test_a_redacted_rollout_still_gives_the_token_timeline(tmp_path):
    records = _records(ROLLOUT)
    redacted = [{**r, "payload": _hashed(r["payload"])} for r in records]
    path = _write(tmp_path / "rollout-redacted.jsonl", redacted)
    assert "alpha-7" not in path.read_text()
    assert _replayed(path) == _own_inputs(records)


def test_a_partial_rollout_of_token_counts_only_still_gives_the_token_timeline(tmp_path):
    records = _records(ROLLOUT)
    partial = [r for r in records if r["type"] == "event_msg" and r["payload"].get("type") == "token_count"]
    path = _write(tmp_path / "rollout-partial.jsonl", partial)
    assert _replayed(path) == _own_inputs(records)
    assert protocol_errors(load_log(path).history) == []


def test_watch_follows_a_growing_rollout_as_replay_reads_the_whole():
    lines = ROLLOUT.read_text().splitlines()
    live = LiveReplay(ROLLOUT, strategies=("none", "v2"), fit_calls=3)
    handed = []
    for at in range(0, len(lines), 3):
        live.feed(Batch(lines=lines[at:at + 3]))
        handed += live.ready()
    handed += live.flush()
    whole = open_replay(ROLLOUT, ("none", "v2"), fit_calls=3)
    assert [s.number for s in handed] == [1, 2, 3, 4, 5]
    assert [s.real_tokens for s in handed] == [whole.step(k).real_tokens for k in range(whole.calls)]
    assert live.restarts == 0
    assert read_log(ROLLOUT).context_window == 258400


def test_latest_finds_codex_rollouts_of_this_directory_and_all_lists_both_agents(tmp_path):
    home = tmp_path / "codex"
    workspace = tmp_path / "work"
    workspace.mkdir()
    mine = home / "sessions" / "2026" / "12" / "02" / "rollout-2026-12-02T10-00-00-a.jsonl"
    other = home / "sessions" / "2026" / "12" / "01" / "rollout-2026-12-01T10-00-00-b.jsonl"
    for path, cwd in ((mine, workspace), (other, tmp_path / "elsewhere")):
        path.parent.mkdir(parents=True)
        _write(path, [{"timestamp": "2026-12-02T10:00:00Z", "type": "session_meta", "payload": {"cwd": str(cwd)}}])
    claude = tmp_path / "claude" / "projects" / "-x"
    claude.mkdir(parents=True)
    (claude / "s.jsonl").write_text("{}\n")
    os.utime(other, (1, 1))
    env = {"CODEX_HOME": str(home), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "HOME": str(tmp_path)}
    assert agent_logs(workspace, env=env) == [mine]
    assert set(agent_logs(workspace, all_projects=True, env=env)) == {mine, other, claude / "s.jsonl"}


def test_replay_json_of_a_rollout_on_the_command_line():
    done = subprocess.run([sys.executable, "-m", "tui_agent", "replay", str(ROLLOUT), "--json", "--no-memory"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    whole = json.loads(done.stdout)
    steps = whole["steps"]
    assert whole["kind"] == "codex"
    assert [s["recorded"]["real_tokens"] for s in steps] == [2400, 4200, 5400, 7200, 3000]


def test_the_real_codex_cli_writes_a_rollout_that_replays_call_for_call(tmp_path):
    """A rollout of whatever Codex version npm gives: one step per request the API saw, with its usage."""
    fake, given = fake_for_codex()
    with fake:
        done = run_codex_turn(tmp_path / "home", tmp_path / "work", fake.base_url)
    assert done.returncode == 0, done.stderr[-3000:]
    assert fake.violations == []
    [rollout] = rollouts(tmp_path / "home")
    assert len(fake.response_requests) == len(given) >= 4
    assert _replayed(rollout) == [u["input_tokens"] for u in given]
    assert any(c.kind == "boundary" for c in open_replay(rollout, ("none",)).agent_compactions)


def test_the_window_codex_logged_is_the_one_replay_and_watch_measure_against():
    from tui_agent.core.recordings.codex_logs import logged_window

    assert logged_window(ROLLOUT) == 258400
    assert logged_window(DATA / "synthetic-claude-code.jsonl") is None  # Claude Code logs say none: 200k default
