"""A hostile or corrupt record never stops `--continue` (issue 40: a forged `ping` record with a 4,000-digit
count crashed it with OverflowError). Every number read from a journal is bounded and validated; a record
that fails is skipped with one warning naming its line, and nothing else of the session is lost.

Hypothesis writes the hostile records (huge and negative ints, 1e309, NaN, Infinity, wrong types, deep
nesting) into the journal of a real session on the real Anthropic request builder, then the journal is
read, listed, exported and resumed, the headless face prints its budget line, and a turn runs."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from tests.e2e.conftest import cli_env
from tests.fakes.fake_anthropic import FakeAnthropic, text as text_reply_of
from tui_agent.core.journal.export import markdown_of
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.resume import resume_journaled
from tui_agent.core.journal.store import SessionInfo, summarize
from tui_agent.core.journal.writer import journal_of, start_journal
from tui_agent.core.messages import UsageInfo, protocol_errors
from tui_agent.faces.headless import consume

from .helpers import LocalClaude, run, session_on

ROOT = Path(__file__).resolve().parents[2]
USAGE = UsageInfo(1_200, 40, 300, 900)

HUGE = [10 ** 4000 - 1, -(10 ** 4000), 2 ** 64, -1, -(2 ** 63), 10 ** 300]
ODD = [1e308, -1e308, float("inf"), float("-inf"), float("nan"), 0.5, True, None, "9" * 4000, "12", [], {},
       [1, 2], {"a": 1}]


class Deep:
    """JSON nested `depth` lists deep (made when written: hypothesis would print the value itself)."""

    def __init__(self, depth: int) -> None:
        self.depth = depth

    def __repr__(self) -> str:
        return f"Deep({self.depth})"

    def json(self) -> str:
        return "[" * self.depth + "1" + "]" * self.depth


hostile_value = st.one_of(st.sampled_from(HUGE + ODD), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                          st.text(max_size=20), st.integers(min_value=50, max_value=5_000).map(Deep))

NUMBER_FIELDS = {
    "ping": ["ping", "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
             "cache_write_1h", "cost_usd"],
    "usage": ["call", "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
              "cache_write_1h", "cost_usd", "calibration", "calls", "cached"],
    "call": ["call", "estimated_tokens", "history_len", "sent", "dropped", "system_tokens", "tools_tokens"],
    "server-edited": ["call", "history_index", "edits", "compacted", "summary", "compaction_usage", "edits.cleared",
                      "edits.tokens", "compaction_usage.input_tokens"],
    "server-missed": ["call", "expected", "read", "reason", "source", "from_message", "extra_cost_usd"],
    "compaction_state": ["delta", "state", "base", "check"],
    "message": ["index"],
}


@lru_cache(maxsize=1)
def journal_of_a_session(root: str) -> tuple[bytes, list[dict[str, Any]]]:
    """A real session's journal (two turns, a tool call, priced usage), and its records by type."""
    workspace = Path(root) / "repo"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "notes.txt").write_text("the answer is 42\n")
    replies = [[{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "notes.txt"}}],
               [{"type": "text", "text": "It says 42."}], [{"type": "text", "text": "Still 42."}]]
    session = session_on(workspace, LocalClaude(replies=replies, usage=USAGE, context_window=40_000,
                                                max_output_tokens=1_000))
    start_journal(session, environ={"TUI_AGENT_DATA_DIR": str(Path(root) / "data")})

    async def play() -> None:
        await run(session, "what do the notes say?")
        await run(session, "and now?")

    asyncio.run(play())
    journal = journal_of(session)
    journal.close()
    raw = journal.path.read_bytes()
    return raw, [json.loads(line) for line in raw.splitlines()]


def forged(records: list[dict[str, Any]], kind: str, field: str, value: Any) -> dict[str, Any]:
    """A copy of the first record of `kind` (a `ping` is made from a usage record) with `field` set."""
    if kind == "ping":
        base = {"type": "ping", "at": "2026-12-07T16:00:00.000Z", "ping": 1, "input_tokens": 10, "output_tokens": 1,
                "cache_read_input_tokens": 900, "cost_usd": 0.0003}
    elif kind == "server-edited":
        base = {"type": "server", "at": "2026-12-07T16:00:00.000Z", "what": "edited", "call": 2, "history_index": 3,
                "edits": [{"kind": "clear_tool_uses_20250919", "cleared": 1, "tokens": 500}], "compacted": True,
                "summary": "", "compaction_usage": {"input_tokens": 1000, "output_tokens": 50}}
    elif kind == "server-missed":
        base = {"type": "server", "at": "2026-12-07T16:00:00.000Z", "what": "missed", "call": 2, "expected": 900,
                "read": 0, "reason": "ttl_expired", "source": "ours", "from_message": None, "our_reason": "",
                "extra_cost_usd": 0.001}
    else:
        base = dict(next(r for r in records if r["type"] == kind))
    value = "__DEEP__" if isinstance(value, Deep) else value
    if "." in field:  # a number inside: the first edit's, or the server compaction's usage
        outer, inner = field.split(".")
        held = base[outer]
        return {**base, outer: [{**held[0], inner: value}] if isinstance(held, list) else {**held, inner: value}}
    return {**base, field: value}


def line_of(record: dict[str, Any], value: Any) -> bytes:
    """The record's JSON line (written as text: Python's encoder stops at 1,000 levels, a reader must not)."""
    line = json.dumps(record, separators=(",", ":"))
    return (line.replace('"__DEEP__"', value.json()) if isinstance(value, Deep) else line).encode()


def resumed_figures(path: Path, workspace: Path) -> tuple[list[str], list[dict], str]:
    """Everything `--continue -p` does with the journal: (warnings, history before the turn, budget line)."""
    load = read_journal(path)
    SessionInfo.of(load), summarize(path), markdown_of(load)  # the listing and the export
    before = [dict(m) for m in load.history]
    fresh = session_on(workspace, LocalClaude(model=load.model, replies=[[{"type": "text", "text": "ok"}]],
                                              usage=USAGE, context_window=40_000, max_output_tokens=1_000))
    journal, notices = resume_journaled(fresh, load)
    err = io.StringIO()
    try:
        ended = asyncio.run(consume(fresh, "go on", io.StringIO(), err))
    finally:
        journal.close()
    assert ended is not None and ended.reason == "completed", ended
    assert protocol_errors(fresh.history) == []
    return load.warnings, before, err.getvalue()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(kind=st.sampled_from(sorted(NUMBER_FIELDS)), data=st.data(), value=hostile_value,
       where=st.sampled_from(["end", "middle"]))
def test_a_hostile_number_is_one_warning_and_nothing_else_is_lost(tmp_path_factory, kind, data, value, where) -> None:
    root = tmp_path_factory.getbasetemp() / "hostile-records"
    raw, records = journal_of_a_session(str(root))
    field = data.draw(st.sampled_from(NUMBER_FIELDS[kind]))
    line = line_of(forged(records, kind, field, value), value)
    lines = raw.splitlines()
    at = len(lines) if where == "end" else len(lines) // 2
    if kind == "message":
        at = len(lines)  # a forged message index anywhere else is a lost or repeated message: not this test's
    path = root / "data" / "sessions" / "hostile.jsonl"
    path.write_bytes(b"\n".join([*lines[:at], line, *lines[at:]]) + b"\n")
    warnings, before, budget = resumed_figures(path, root / "repo")
    assert len(warnings) <= 1 and all(len(w) < 300 for w in warnings), warnings
    said = [r["message"] for r in records if r["type"] == "message"]
    assert before[:len(said)] == said  # (a forged message with a usable index is one more message)
    assert "[budget]" in budget and "nan" not in budget.lower() and "inf" not in budget.lower(), budget


def test_the_4000_digit_ping_of_the_issue_is_skipped_with_one_warning(tmp_path) -> None:
    raw, records = journal_of_a_session(str(tmp_path))
    path = tmp_path / "data" / "sessions" / "forged.jsonl"
    ping = forged(records, "ping", "input_tokens", 10 ** 4000 - 1)
    path.write_bytes(raw + json.dumps(ping).encode() + b"\n")
    warnings, before, budget = resumed_figures(path, tmp_path / "repo")
    assert len(warnings) == 1 and "forged.jsonl line" in warnings[0] and "ping" in warnings[0], warnings
    assert len(before) == 6 and "[budget]" in budget


def number_paths(value: Any, path: tuple = ()) -> list[tuple]:
    """Where a JSON value holds numbers (each path: keys and indices)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [path]
    items = value.items() if isinstance(value, dict) else enumerate(value)
    return [p for key, inner in items for p in number_paths(inner, (*path, key))]


def replaced(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = replaced(value[path[0]], path[1:], new)
    return copy


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(data=st.data(), value=hostile_value)
def test_a_hostile_number_inside_the_compaction_state_never_stops_a_resume(tmp_path_factory, data, value) -> None:
    """A whole state with a consistent checksum (anyone can compute a CRC) and one number made hostile."""
    from tui_agent.core.journal.state_delta import checksum

    root = tmp_path_factory.getbasetemp() / "hostile-records"
    raw, records = journal_of_a_session(str(root))
    load = read_journal(_written(root, raw))
    state = load.compaction_state
    path = data.draw(st.sampled_from(number_paths(state)))
    forged_state = replaced(state, path, "__DEEP__" if isinstance(value, Deep) else value)
    record = {"type": "compaction_state", "at": "2026-12-07T16:00:00.000Z", "state": forged_state,
              "check": checksum(forged_state) if not isinstance(value, Deep) else "0", "mode": "v2"}
    try:
        line = line_of(record, value)
    except ValueError:  # NaN and Infinity are JSON here only as Python writes them: still worth reading
        line = json.dumps(record).encode()
    path_out = root / "data" / "sessions" / "hostile.jsonl"
    path_out.write_bytes(raw + line + b"\n")
    warnings, before, budget = resumed_figures(path_out, root / "repo")
    assert len(warnings) <= 1, warnings
    assert before == [r["message"] for r in records if r["type"] == "message"]
    assert "[budget]" in budget


def _written(root: Path, raw: bytes) -> Path:
    path = root / "data" / "sessions" / "plain.jsonl"
    path.write_bytes(raw)
    return path


def test_continue_in_a_real_process_skips_each_forged_record_with_one_line(tmp_path) -> None:
    """The CLI on the real SDK against the fake Claude: forged records appended to a real journal."""
    workspace = tmp_path / "repo"
    workspace.mkdir()
    forged_lines = [
        '{"type":"ping","at":"2026-12-07T16:00:00.000Z","ping":1,"input_tokens":' + "9" * 4000 + ',"output_tokens":1}',
        '{"type":"usage","at":"2026-12-07T16:00:00.000Z","call":1,"input_tokens":NaN,"output_tokens":1}',
        '{"type":"usage","at":"2026-12-07T16:00:00.000Z","call":1,"input_tokens":10,"output_tokens":1,'
        '"cost_usd":1e309}',
        '{"type":"server","at":"2026-12-07T16:00:00.000Z","what":"missed","call":1,"expected":9,"read":0,"reason":7}',
        '{"type":"compaction_state","at":"2026-12-07T16:00:00.000Z","state":{"calls":-Infinity},"check":"0"}',
    ]
    with FakeAnthropic() as fake:
        fake.replies += [text_reply_of("First answer."), text_reply_of("Second answer.")]
        env = cli_env(tmp_path, fake)
        first = subprocess.run([sys.executable, "-m", "tui_agent", "-p", "first"], cwd=workspace, env=env,
                               capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert first.returncode == 0, first.stderr
        (journal,) = (Path(env.get("TUI_AGENT_DATA_DIR", os.environ["TUI_AGENT_DATA_DIR"])) / "sessions").glob("*.jsonl")
        with journal.open("a") as handle:
            handle.write("\n".join(forged_lines) + "\n")
        again = subprocess.run([sys.executable, "-m", "tui_agent", "--continue", "-p", "second"], cwd=workspace,
                               env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "Second answer."
    skipped = [line for line in again.stderr.splitlines() if line.startswith("[warning]") and "skipped)" in line]
    assert len(skipped) == len(forged_lines), again.stderr
    assert all(len(line) < 300 for line in skipped) and "9999999999" not in again.stderr
    assert "crashed" not in again.stderr
    resent = fake.message_requests[-1]["body"]["messages"]
    assert [m["role"] for m in resent] == ["user", "assistant", "user"]  # nothing of the session lost
