"""Codex rollouts of forms not seen in the stored one, each made by hand from it (one fixture per variant):
the first unwrapped rollouts, token counts at the top of the event, only the session's running total, no
`turn_context`, the Responses API's own name for cached tokens, no token counts at all, a rollout cut
mid-line, and one whose text is redacted to hashes. Each still gives the stored rollout's token timeline,
or a clear one-line refusal when no count is left to give one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tui_agent.core.messages import protocol_errors
from tui_agent.core.recordings.codex_logs import load_log, log_kind, read_log
from tui_agent.core.recordings.replay import open_replay

ROLLOUT = Path(__file__).resolve().parents[1] / "data" / "codex-rollout.jsonl"
INPUTS = [2400, 4200, 5400, 7200, 3000]  # the stored rollout's own input tokens, per call


def _records() -> list[dict]:
    return [json.loads(line) for line in ROLLOUT.read_text().splitlines() if line.strip()]


def _write(path: Path, records: list, text: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + text)
    return path


def _usages(records: list[dict]) -> list[dict]:
    return [r["payload"]["usage"] for r in records if r["type"] == "token_usage_record"]


def _replayed(path: Path) -> list[int]:
    replay = open_replay(path, ("none", "v2"))
    return [replay.step(k).real_tokens for k in range(replay.calls)]


def _with_counts(records: list[dict], count) -> list[dict]:  # noqa: ANN001 - usage -> an event payload
    """Each usage record replaced by a token_count event made by `count` from it (in place)."""
    return [{"timestamp": r["timestamp"], "type": "event_msg", "payload": count(r["payload"]["usage"])}
            if r["type"] == "token_usage_record" else r for r in _without_counts(records)]


def _without_counts(records: list[dict]) -> list[dict]:
    return [r for r in records if not (r["type"] == "event_msg" and r["payload"].get("type") == "token_count")]


def test_the_first_unwrapped_rollouts_are_read_as_codex_with_their_messages(tmp_path):
    records = _records()
    meta = records[0]["payload"]
    legacy: list = [{"id": meta["id"], "timestamp": meta["timestamp"], "instructions": "You are Codex.",
                     "git": {"branch": "main"}}]
    for r in records:
        if r["type"] == "response_item":
            legacy += [r["payload"], {"record_type": "state"}]
    path = _write(tmp_path / "rollout-2025-05-20T10-00-00-x.jsonl", legacy)
    assert log_kind(path) == "codex"
    history = load_log(path).history
    assert protocol_errors(history) == [] and history[0]["content"][0]["text"] == "You are Codex."
    assert any(b.get("type") == "tool_use" for m in history for b in m["content"])
    done = subprocess.run([sys.executable, "-m", "tui_agent", "replay", str(path), "--report"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1  # no counts: one clear line
    assert "no recorded model call with usage" in done.stderr


def test_token_counts_at_the_top_of_the_event_make_one_call_each(tmp_path):
    path = _write(tmp_path / "top.jsonl", _with_counts(_records(), lambda u: {"type": "token_count", **u}))
    assert _replayed(path) == INPUTS


def test_only_the_sessions_running_total_still_gives_each_calls_usage(tmp_path):
    running: dict = {}

    def total(usage: dict) -> dict:
        for k, v in usage.items():
            running[k] = running.get(k, 0) + v
        return {"type": "token_count", "info": {"total_token_usage": dict(running)}}

    path = _write(tmp_path / "total.jsonl", _with_counts(_records(), total))
    assert _replayed(path) == INPUTS
    replay = open_replay(path, ("none", "v2"))
    assert [replay.step(k).usage["cache_read_input_tokens"] for k in range(5)] == [
        u["cached_input_tokens"] for u in _usages(_records())]


def test_a_rollout_without_turn_context_takes_the_model_from_its_session_line(tmp_path):
    records = [r for r in _records() if r["type"] != "turn_context"]
    records[0]["payload"]["model"] = "gpt-5.1-codex"
    path = _write(tmp_path / "no-context.jsonl", records)
    assert _replayed(path) == INPUTS
    assert read_log(path).reader.model == "gpt-5.1-codex"
    bare = _write(tmp_path / "no-model.jsonl", [r for r in _records() if r["type"] != "turn_context"])
    assert _replayed(bare) == INPUTS  # no model named anywhere: the timeline still, unpriced


def test_cached_tokens_under_the_responses_apis_own_name(tmp_path):
    def renamed(usage: dict) -> dict:
        cached = usage["cached_input_tokens"]
        last = {k: v for k, v in usage.items() if k != "cached_input_tokens"}
        return {"type": "token_count", "info": {"total_token_usage": {"n": id(usage)},
                                                "last_token_usage": {**last, "input_tokens_details": {
                                                    "cached_tokens": cached}}}}

    path = _write(tmp_path / "details.jsonl", _with_counts(_records(), renamed))
    replay = open_replay(path, ("none", "v2"))
    assert [replay.step(k).real_tokens for k in range(replay.calls)] == INPUTS
    assert [replay.step(k).usage["cache_read_input_tokens"] for k in range(5)] == [
        u["cached_input_tokens"] for u in _usages(_records())]


def test_a_rollout_cut_mid_line_and_a_redacted_one_keep_the_timeline(tmp_path):
    lines = ROLLOUT.read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines) + lines[5][: len(lines[5]) // 2])  # a half-written last line
    assert _replayed(cut) == INPUTS and read_log(cut).skipped_lines == 1

    def hashed(value, key=""):  # noqa: ANN001, ANN202
        if isinstance(value, dict):
            return {k: hashed(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [hashed(v) for v in value]
        if isinstance(value, str) and key in ("text", "output", "arguments", "message", "encrypted_content"):
            return f"sha256:{abs(hash(value)):x}"
        return value

    path = _write(tmp_path / "redacted.jsonl", [hashed(r) for r in _records()])
    assert _replayed(path) == INPUTS
    assert protocol_errors(load_log(path).history) == []
