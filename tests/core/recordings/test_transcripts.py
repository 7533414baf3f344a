"""Real Claude Code transcripts load as valid histories, and compaction keeps them valid."""

from __future__ import annotations

import json

import pytest

from tests.shared import LOGS
from tui_agent.compact import CompactOptions, compact_messages
from tui_agent.core.messages import protocol_errors
from tui_agent.core.recordings.transcripts import load_transcript


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[:24])
def test_transcript_loads_valid_and_compacts_valid(path):
    load = load_transcript(path)
    history = load.history
    assert len(history) > 20
    assert protocol_errors(history) == []
    roles = [m["role"] for m in history]
    assert all(a != b for a, b in zip(roles, roles[1:])), "roles alternate after merging"
    for options in (CompactOptions(), CompactOptions(max_messages=10), CompactOptions(max_tokens=20_000),
                    CompactOptions(max_messages=5, protect_recent_rounds=0, max_tool_result_chars=100)):
        for end in range(2, len(history) + 1, max(1, len(history) // 25)):
            prefix = history[:end]
            result = compact_messages(prefix, options)
            # a prefix may end mid-round (a tool_use whose result comes later): that part is allowed
            assert (protocol_errors(result.messages, allow_pending=True) == []
                    or protocol_errors(prefix, allow_pending=True) != [])


def test_bad_lines_are_counted_not_fatal(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"type":"user","message":{"role":"user","content":"hi"}}\nnot json\n[1]\n'
                    '{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]}}\n')
    load = load_transcript(path)
    assert load.skipped_lines == 2
    assert protocol_errors(load.history) == []
    assert load.history[-1]["content"][0]["content"] == "[result missing]"


def test_blank_text_blocks_are_dropped(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = [{"type": "user", "message": {"role": "user", "content": "hi"}},
             {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "\n\n"}]}},
             {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
                 {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]}},
             {"type": "user", "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}, {"type": "text", "text": " "}]}}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    load = load_transcript(path)
    assert load.history[1]["content"] == [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]
    assert load.history[2]["content"] == [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]
    assert protocol_errors(load.history) == []
