"""A resumed Claude Code session writes its earlier records again, with the same uuids: the loader folds
that conversation once, so the replay counts its calls and its prompts once."""

from __future__ import annotations

from tests.replay.jsonl import Log, read, text
from tui_agent.core.recordings.recorded import load_recorded
from tui_agent.core.recordings.transcripts import load_transcript


def session(log: Log) -> Log:
    log.user("Look at the parser.")
    log.assistant([text("Reading it."), read("t1", "src/parser.py")], input_tokens=20_000)
    log.result("t1", "def parse(): ...\n" * 50)
    log.assistant([text("It parses.")], input_tokens=21_000)
    return log


def test_the_records_a_resume_writes_again_are_folded_once(tmp_path):
    plain = session(Log()).write(tmp_path / "plain.jsonl")
    log = session(Log())
    first = list(log.lines)
    log.lines.extend(first)  # the resume writes the same records again (same uuids, same message ids)
    log.user("And the lexer?")
    log.assistant([text("It lexes.")], input_tokens=22_000)
    resumed = log.write(tmp_path / "resumed.jsonl")
    once, twice = load_transcript(plain), load_transcript(resumed)
    assert twice.repeated_records == len(first)
    assert twice.history[:len(once.history)] == once.history
    assert [m["content"][0].get("text") for m in twice.history if m["role"] == "user"
            and m["content"][0].get("type") == "text"] == ["Look at the parser.", "And the lexer?"]
    assert len(load_recorded(resumed).calls) == len(load_recorded(plain).calls) + 1
