"""Codex 0.171 rollouts that compacted ten times (written by the real CLI: `tests/agents/codex_compactions.py`)
list ten compactions: one per `compacted` record however many events announce it, each with its real summary
(locally: the summary after Codex's prefix, not the skills text the replacement history starts with; on the
server: "summary encrypted"), in replay, in `replay --json` and in the watch's `--json` lines."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from tests.agents.codex_compactions import COMPACTIONS, FIXTURES, compacting_fake, run_compacting_session, summary_of
from tests.npm_agents import rollouts
from tui_agent.core.recordings.call_figures import FiguresRun
from tui_agent.core.recordings.follow import Batch
from tui_agent.core.recordings.replay import open_replay
from tui_agent.core.recordings.watch import LiveReplay


def _rollout(mode: str, tmp_path: Path) -> Path:
    path = tmp_path / f"rollout-{mode}.jsonl"
    path.write_bytes(lzma.decompress(FIXTURES[mode].read_bytes()))
    return path


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _event(record: dict) -> dict:
    return {"timestamp": record["timestamp"], "type": "event_msg", "payload": {"type": "context_compacted"}}


def test_ten_local_compactions_are_ten_each_with_the_summary_codex_kept(tmp_path):
    replay = open_replay(_rollout("local", tmp_path), ("none",))
    compactions = replay.agent_compactions
    assert len(compactions) == COMPACTIONS == len({c.call for c in compactions})
    assert [c.text for c in compactions] == [summary_of(n, n) for n in range(1, COMPACTIONS + 1)]
    assert all("skills" not in c.text for c in compactions)
    assert all(c.kind == "boundary" and c.summary is not None for c in compactions)


def test_ten_server_compactions_are_ten_each_said_encrypted(tmp_path):
    replay = open_replay(_rollout("remote", tmp_path), ("none",))
    compactions = replay.agent_compactions
    assert len(compactions) == COMPACTIONS == len({c.call for c in compactions})
    assert all(c.text.startswith("summary encrypted (") for c in compactions)


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_context_compacted_event_beside_its_record_is_the_same_compaction(tmp_path, where):
    """Announced before its `compacted` record or after it: one compaction, with the record's summary."""
    records = []
    for record in _records(_rollout("local", tmp_path)):
        if record["type"] == "compacted" and where == "before":
            records.append(_event(record))
        records.append(record)
        if record["type"] == "compacted" and where == "after":
            records.append(_event(record))
    replay = open_replay(_write(tmp_path / f"rollout-{where}.jsonl", records), ("none",))
    assert [c.text for c in replay.agent_compactions] == [summary_of(n, n) for n in range(1, COMPACTIONS + 1)]


def test_events_without_records_are_one_compaction_each(tmp_path):
    records = [_event(r) if r["type"] == "compacted" else r for r in _records(_rollout("local", tmp_path))]
    replay = open_replay(_write(tmp_path / "rollout-events.jsonl", records), ("none",))
    assert len(replay.agent_compactions) == COMPACTIONS
    assert all(c.kind == "boundary" for c in replay.agent_compactions)


def test_replay_json_and_the_watch_json_lines_list_ten(tmp_path, capsys):
    from tui_agent.faces.replay import replay_command

    path = _rollout("local", tmp_path)
    assert replay_command([str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["agent_compactions"]) == COMPACTIONS
    live = LiveReplay(path)
    live.feed(Batch(lines=path.read_text().splitlines()))
    run = FiguresRun()
    lines = [run.figures(live.replay, step, live.pre_tokens()).json() for step in live.flush()]
    flagged = [line for line in lines if line["agent_compaction"]]
    assert len(flagged) == COMPACTIONS and all(len(line["agent_compactions"]) == 1 for line in flagged)
    assert [line["agent_compactions"][0]["text"] for line in flagged] == [summary_of(n, n)
                                                                          for n in range(1, COMPACTIONS + 1)]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["local", "remote"])
def test_the_real_codex_compacting_ten_times_lists_ten(tmp_path, mode):
    fake = compacting_fake()
    with fake:
        done = run_compacting_session(mode, tmp_path / "home", tmp_path / "work", fake.base_url)
    assert done.returncode == 0, done.stderr[-3000:]
    assert fake.violations == []
    [rollout] = rollouts(tmp_path / "home")
    assert sum(json.loads(line).get("type") == "compacted" for line in rollout.read_text().splitlines()) == COMPACTIONS
    compactions = open_replay(rollout, ("none",)).agent_compactions
    assert len(compactions) == COMPACTIONS
    expected = ([summary_of(n, n) for n in range(1, COMPACTIONS + 1)] if mode == "local"
                else [c.text for c in compactions if c.text.startswith("summary encrypted")])
    assert [c.text for c in compactions] == expected
