"""Issue 19 item 10: hostile or broken Claude Code logs (`--transcript`, `replay`). The loader repairs or
drops what the API would reject; it never hands the engine an invalid history and never raises on a line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui_agent.core.messages import protocol_errors
from tui_agent.core.recordings.transcripts import load_transcript

ROOT = Path(__file__).resolve().parents[3]


def user(content) -> dict:
    return {"type": "user", "message": {"role": "user", "content": content}}


def assistant(content, mid: str = "m") -> dict:
    return {"type": "assistant", "message": {"id": mid, "role": "assistant", "content": content}}


def use(tool_id=None, **extra) -> dict:
    block = {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}, **extra}
    if tool_id is not None:
        block["id"] = tool_id
    return block


def result(tool_id, text: str = "ok") -> dict:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": text}


def write(path: Path, records: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def test_a_tool_use_without_an_id_gets_one_and_an_answer(tmp_path: Path) -> None:
    load = load_transcript(write(tmp_path / "t.jsonl", [user("hi"), assistant([use()]), user("next")]))
    assert protocol_errors(load.history) == []
    assert load.history[1]["content"][0]["id"]


def test_the_same_id_in_two_rounds_is_renamed_with_its_result(tmp_path: Path) -> None:
    records = [user("hi"), assistant([use("t1")], "m1"), user([result("t1", "first")]),
               assistant([use("t1")], "m2"), user([result("t1", "second")])]
    history = load_transcript(write(tmp_path / "t.jsonl", records)).history
    assert protocol_errors(history) == []
    second_id = history[3]["content"][0]["id"]
    assert second_id != "t1"
    assert history[4]["content"][0] == {"type": "tool_result", "tool_use_id": second_id, "content": "second"}


def test_blocks_in_the_wrong_role_are_dropped(tmp_path: Path) -> None:
    records = [user([{"type": "text", "text": "hi"}, use("u1")]), assistant([{"type": "text", "text": "a"},
                                                                            result("u1")]),
               user([{"type": "text", "text": "x"}, result("zz")])]
    history = load_transcript(write(tmp_path / "t.jsonl", records)).history
    assert protocol_errors(history) == []
    assert all(b["type"] == "text" for m in history for b in m["content"])


def test_a_very_deep_line_is_skipped_not_a_traceback(tmp_path: Path) -> None:
    deep = '{"type":"user","message":{"role":"user","content":' + "[" * 100_000 + "]" * 100_000 + "}}"
    load = load_transcript(write(tmp_path / "t.jsonl", [user("hi"), deep, "1" * 5000]))
    assert load.skipped_lines == 2 and protocol_errors(load.history) == []


def test_a_lone_surrogate_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"type":"user","message":{"role":"user","content":"bad \\ud800 char"}}\n'
                    '{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"text",'
                    '"text":"ok \\udfff"}],"model":"claude-x"}}\n')
    history = load_transcript(path).history
    json.dumps(history, ensure_ascii=False).encode("utf-8")  # raised UnicodeEncodeError before
    assert history[0]["content"][0]["text"] == "bad \ufffd char"


def test_print_outbound_of_a_log_with_a_lone_surrogate(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"type":"user","message":{"role":"user","content":"bad \\ud800 char"}}\n'
                    '{"type":"assistant","message":{"id":"m","role":"assistant","content":"answer"}}\n')
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}  # config and data dirs: conftest's tmp dirs
    done = subprocess.run([sys.executable, "-m", "tui_agent", "--model", "demo", "-C", str(tmp_path),
                           "--transcript", str(path), "--print-outbound", "-p", "next"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "bad \ufffd char" in json.loads(done.stdout)["messages"][0]["content"][0]["text"]


# -- random broken logs --------------------------------------------------------------------------
IDS = st.one_of(st.sampled_from(["t1", "t2", "t3", ""]), st.none(), st.integers(0, 3))
TEXT = st.sampled_from(["hi", " ", "\n\n", "it's", "\ud800", 7, None])
BLOCK = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, TEXT),
    st.builds(lambda i: {k: v for k, v in {"type": "tool_use", "id": i, "name": "Bash", "input": {}}.items()
                         if v is not None}, IDS),
    st.builds(lambda i, c: {"type": "tool_result", "tool_use_id": i, "content": c}, IDS,
              st.sampled_from(["ok", "", 5, [{"type": "text", "text": "r"}]])),
    st.builds(lambda: {"type": "thinking", "thinking": "hmm", "signature": "s"}),
    st.sampled_from([{"type": 3}, "not a block", {"no": "type"}, {"type": "tool_use", "id": "t9", "name": 1,
                                                                    "input": "x"}]),
)
CONTENT = st.one_of(st.lists(BLOCK, max_size=4), TEXT, st.integers())
RECORD = st.one_of(
    st.builds(lambda role, c, side, meta: {"type": role, "isSidechain": side, "isMeta": meta,
                                           "message": {"role": role, "id": "m", "content": c}},
              st.sampled_from(["user", "assistant"]), CONTENT, st.booleans(), st.booleans()),
    st.just({"type": "system", "subtype": "compact_boundary"}),
    st.sampled_from(["not json", "[1]", "{", '{"type":"user","message":5}']),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(RECORD, max_size=12))
def test_random_broken_logs_load_as_valid_histories(tmp_path: Path, records: list) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    for keep in (True, False):
        history = load_transcript(path, keep_thinking=keep, keep_meta=keep).history
        assert not history or protocol_errors(history) == [], (records, history)
        json.dumps(history, ensure_ascii=False).encode("utf-8")
