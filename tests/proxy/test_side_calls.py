"""Side calls are not steps: a proxy recording's title, quota and subagent requests are listed as side calls and
leave the conversation's timeline (one step per conversation call, no made-up compaction) as it is.

`tests/data/proxy-claude-code.jsonl.xz` is what the real Claude Code CLI (2.1.197, `-p`, nonessential traffic
allowed) sent through `tui-agent proxy` to the Messages fake (`tests/agents/claude_run.py`): a session title
first (no tools, a JSON answer), then three Reads and the answer. `proxy-opencode.jsonl.xz` is the same turn by
the real opencode (`opencode-ai` 1.18.33, `tests/agents/opencode_run.py`): its title request (its small model,
no tools, a plain answer) comes first too, then three reads and the answer."""

from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import Any

from tui_agent.core.recordings.codex_logs import read_log
from tui_agent.core.recordings.replay import open_replay

REAL = Path(__file__).resolve().parents[1] / "data" / "proxy-claude-code.jsonl.xz"
OPENCODE = REAL.with_name("proxy-opencode.jsonl.xz")
MAIN_TOOLS = [{"name": "Read", "input_schema": {"type": "object"}}, {"name": "Bash", "input_schema": {"type": "object"}}]


def _real(tmp_path: Path, stored: Path = REAL) -> Path:
    path = tmp_path / stored.name.removesuffix(".xz")
    path.write_bytes(lzma.decompress(stored.read_bytes()))
    return path


def test_claude_codes_title_request_is_a_side_call_not_the_conversations_start(tmp_path):
    path = _real(tmp_path)
    exchanges = [json.loads(line) for line in path.read_text().splitlines()][1:]
    main = [e["call"] for e in exchanges if any(t.get("name") == "Read" for t in e["request"].get("tools") or [])]
    reader = read_log(path).reader
    assert reader.step_calls == main == [2, 3, 4, 5]
    assert [(s.call, s.why) for s in reader.side] == [(1, "structured answer")]
    replay = open_replay(path, ("none", "v2"))
    assert replay.calls == 4 and replay.agent_compactions == []  # was: 5 calls and a compaction at call 2
    assert [replay.step(k).real_tokens for k in range(4)] == [
        e["usage"]["input_tokens"] for e in exchanges if e["call"] in main]


def test_opencodes_title_request_waits_and_is_then_a_side_call(tmp_path):
    path = _real(tmp_path, OPENCODE)
    exchanges = [json.loads(line) for line in path.read_text().splitlines()][1:]
    title = exchanges[0]["request"]
    assert not title.get("tools") and "haiku" in title["model"]  # a plain request: only what follows tells
    main = [e["call"] for e in exchanges if any(t.get("name") == "read" for t in e["request"].get("tools") or [])]
    reader = read_log(path).reader
    assert reader.step_calls == main == [2, 3, 4, 5]
    assert [(s.call, s.why) for s in reader.side] == [(1, "no tools")]
    replay = open_replay(path, ("none", "v2"))
    assert replay.calls == 4 and replay.agent_compactions == []


def _exchange(call: int, messages: list[dict], *, tools: list[dict] | None = None, system: str = "main prompt",
              tokens: int = 100, **extra: Any) -> dict:
    body = {"model": "claude-sonnet-4-5", "max_tokens": 4096, "system": system, "messages": messages}
    body.update(extra)
    if tools is not None:
        body["tools"] = tools
    return {"type": "exchange", "call": call, "api": "anthropic-messages", "method": "POST", "path": "/v1/messages",
            "time": 1000.0 + call, "status": 200, "model": body["model"],
            "usage": {"input_tokens": tokens, "output_tokens": 5}, "reply": [{"type": "text", "text": f"r{call}"}],
            "request": body}


def _write(path: Path, exchanges: list[dict]) -> Path:
    lines = [{"type": "tui-agent-proxy", "version": 1, "started": 1.0}] + exchanges
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _reply(n: int) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": f"r{n}"}]}


def test_a_quota_check_and_a_subagent_between_the_main_calls_are_side_calls(tmp_path):
    first = [_user("fix the bug")]
    second = first + [_reply(2), _user("go on")]
    third = second + [_reply(5), _user("and test it")]
    sub_tools = [{"name": "Grep", "input_schema": {"type": "object"}}]
    path = _write(tmp_path / "r.jsonl", [
        _exchange(1, [_user("quota")], max_tokens=1),
        _exchange(2, first, tools=MAIN_TOOLS, tokens=1000),
        _exchange(3, [_user("find the callers")], tools=sub_tools, system="you are a search subagent", tokens=300),
        _exchange(4, [_user("find the callers"), _reply(3), _user("more")], tools=sub_tools,
                  system="you are a search subagent", tokens=350),
        _exchange(5, second, tools=MAIN_TOOLS, tokens=1100),
        _exchange(6, third, tools=MAIN_TOOLS, tokens=1200)])
    reader = read_log(path).reader
    assert reader.step_calls == [2, 5, 6]
    assert [(s.call, s.why) for s in reader.side] == [(1, "tiny answer"), (3, "other tools and system prompt"),
                                                     (4, "other tools and system prompt")]
    replay = open_replay(path, ("none", "v2"))
    assert [replay.step(k).real_tokens for k in range(replay.calls)] == [1000, 1100, 1200]
    assert replay.agent_compactions == []


def test_the_agents_compaction_keeps_its_tools_and_is_still_a_compaction(tmp_path):
    long = [_user("a"), _reply(1), _user("b"), _reply(2), _user("c")]
    path = _write(tmp_path / "r.jsonl", [
        _exchange(1, long[:1], tools=MAIN_TOOLS), _exchange(2, long[:3], tools=MAIN_TOOLS),
        _exchange(3, long, tools=MAIN_TOOLS, system="main prompt, today's date changed"),
        _exchange(4, [_user("summary of a, b and c")], tools=MAIN_TOOLS, system="main prompt, today's date changed")])
    reader = read_log(path).reader
    assert reader.step_calls == [1, 2, 3, 4] and reader.side == []
    assert any(c.kind == "boundary" for c in open_replay(path, ("none", "v2")).agent_compactions)


def test_an_agent_without_tools_is_a_conversation_once_its_next_call_extends_the_first(tmp_path):
    one = [_user("hello")]
    path = _write(tmp_path / "chat.jsonl", [_exchange(1, one), _exchange(2, one + [_reply(1), _user("more")])])
    assert read_log(path).reader.step_calls == [1, 2]
    single = _write(tmp_path / "single.jsonl", [_exchange(1, one)])
    assert read_log(single).reader.step_calls == [1]  # the finished recording: the waiting call was the start
    assert open_replay(single, ("none", "v2")).calls == 1


def test_the_json_lines_say_which_calls_are_steps_and_which_are_side_calls(tmp_path, capsys):
    from tui_agent.faces.proxy import json_printer

    kinds = {}
    for stored in (REAL, OPENCODE):
        emit = json_printer()
        for line in _real(tmp_path, stored).read_text().splitlines()[1:]:
            emit(json.loads(line))
        kinds[stored.name] = [(j["call"], j["kind"], j["side_reason"]) for j in map(json.loads,
                                                                                 capsys.readouterr().out.splitlines())]
    steps = [(n, "step", None) for n in (2, 3, 4, 5)]
    assert kinds[REAL.name] == [(1, "side", "structured answer")] + steps  # a title asks for JSON: known at once
    assert kinds[OPENCODE.name] == [(1, "waiting", None)] + steps  # a plain title: the next call decides
