"""A continued transcript never sends thinking that another model signed (its signature would be refused)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.replay.jsonl import Log, text
from tui_agent.faces.cli import main
from tui_agent.core.messages import protocol_errors
from tui_agent.core.thinking import LEFT_OUT, same_model, strip_foreign_thinking
from tui_agent.core.recordings.transcripts import load_transcript

SONNET = "claude-sonnet-4-5-20250929"
OPUS = "claude-opus-4-5-20251101"


def thinking(words: str, signature: str) -> dict:
    return {"type": "thinking", "thinking": words, "signature": signature}


def two_model_log(path: Path) -> Path:
    """Sonnet thinks first, then the user switched Claude Code to Opus, which thinks too."""
    log = Log().user("Plan the refactor.")
    log.assistant([thinking("sonnet reasoning", "sig-sonnet"), text("Plan A.")], input_tokens=4_000, model=SONNET)
    log.user("Go on.")
    log.assistant([thinking("opus reasoning", "sig-opus"), text("Plan B.")], input_tokens=4_300, model=OPUS)
    log.user("And now?")
    log.assistant([{"type": "redacted_thinking", "data": "opaque"}], input_tokens=4_500, model=SONNET)
    log.user("Thanks.")
    return log.write(path)


def test_same_model_ignores_the_date_suffix_only() -> None:
    assert same_model(OPUS, "claude-opus-4-5")
    assert same_model("Claude-Opus-4-5", OPUS)
    assert not same_model(OPUS, SONNET)
    assert not same_model("", OPUS)


def test_the_loader_knows_which_model_wrote_each_message(tmp_path: Path) -> None:
    load = load_transcript(two_model_log(tmp_path / "t.jsonl"))
    assert load.message_models == {1: SONNET, 3: OPUS, 5: SONNET}


def test_foreign_thinking_is_left_out_and_the_history_stays_valid(tmp_path: Path) -> None:
    load = load_transcript(two_model_log(tmp_path / "t.jsonl"))
    history = load.history
    original = json.dumps(history)
    removed = strip_foreign_thinking(history, load.message_models, "claude-opus-4-5")
    assert removed == 2
    assert [b["type"] for b in history[1]["content"]] == ["text"]
    assert history[3]["content"][0] == thinking("opus reasoning", "sig-opus")  # its own: kept, signature too
    assert history[5]["content"] == [{"type": "text", "text": LEFT_OUT}]  # never an empty message
    assert protocol_errors(history) == []
    assert "sonnet reasoning" in original  # the transcript's own copy was never touched


def test_thinking_of_unknown_authorship_is_treated_as_foreign() -> None:
    history = [{"role": "user", "content": [text("hi")]},
               {"role": "assistant", "content": [thinking("who wrote me?", "sig"), text("hello")]}]
    assert strip_foreign_thinking(history, {}, OPUS) == 1
    assert history[1]["content"] == [text("hello")]


def test_a_continued_transcript_sends_no_thinking_signed_by_another_model(tmp_path: Path, capsys,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`--transcript` + `--print-outbound`: the exact body the provider would POST next (nothing is sent)."""
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # no prompt: the next call of the transcript itself
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    workspace = tmp_path / "repo"
    workspace.mkdir()
    path = two_model_log(tmp_path / "t.jsonl")
    code = main(["--transcript", str(path), "--print-outbound", "--provider", "anthropic",
                 "--model", "claude-opus-4-5", "-C", str(workspace)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    body = json.loads(captured.out)
    sent = [b for m in body["messages"] if m["role"] == "assistant" for b in m["content"]
            if b["type"] in ("thinking", "redacted_thinking")]
    assert sent == [{"type": "thinking", "thinking": "opus reasoning", "signature": "sig-opus"}]
    assert "Left out 2 thinking blocks" in captured.err
