"""A crash log holds where and what, never the conversation (issue 40: "the crash log's locals hold the
prompt"; a `-p … | head` crash log held the prompt, the API key in the environment and the session's
options). No locals are taken; each message is cleaned of secrets, quoted data and any run of words of
a conversation open in this process."""

from __future__ import annotations

import json
from pathlib import Path

from tests.turns import turn_events
from tui_agent.core.agent.door import SessionOptions, open_session
from tui_agent.core.messages import text_of
from tui_agent.core.crash import write_crash_log
from tui_agent.core.crash_text import clean

PROMPT = "my bank password is Hunter2-Zebra-Lantern and the vault code is 48151623, keep it quiet"
TOOL_OUTPUT = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\naws_access_key_id AKIAIOSFODNN7EXAMPLE"
CONVERSATION = "please plan the surprise party for Margaret on Friday evening"
KEY = "sk-ant-api03-" + "Q" * 20 + "7x" + "R" * 20


def pieces(secret: str, size: int = 8) -> list[str]:
    """Every `size`-character piece of `secret`'s words: none may be in the log."""
    return [word[at:at + size] for word in secret.replace("=", " ").split() if len(word) >= size
            for at in range(len(word) - size + 1)]


def failing_tool_round(prompt: str, tool_output: str, key: str) -> None:
    request = {"messages": [{"role": "user", "content": prompt}], "headers": {"x-api-key": key}}
    try:
        json.loads(tool_output)
    except ValueError as error:
        raise KeyError(tool_output) from error  # a message quoting the data it failed on
    del request


def test_the_log_holds_neither_the_prompt_nor_the_tool_output_in_locals(tmp_path: Path) -> None:
    try:
        failing_tool_round(PROMPT, TOOL_OUTPUT, KEY)
    except KeyError as error:
        path = write_crash_log(error, tmp_path)
    assert path is not None
    text = path.read_text()
    for secret in (PROMPT, TOOL_OUTPUT, KEY):
        assert not [piece for piece in pieces(secret) if piece in text], secret
    assert "Hunter2" not in text and "48151623" not in text and "AKIA" not in text
    # what it keeps: where, and what
    assert "in failing_tool_round" in text and 'test_crash_log.py", line ' in text
    assert "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)" in text
    assert "The above exception was the direct cause of the following exception" in text
    assert "builtins.KeyError: '…'\n" in text


async def test_a_message_quoting_the_open_conversation_loses_those_words(tmp_path: Path) -> None:
    """Unquoted conversation text in a message: the conversations opened through the door are searched."""
    opened = open_session(SessionOptions(workspace=tmp_path, face="headless", model="demo", headless=True,
                                         env={"TUI_AGENT_KEEP_WARM": "0"}))
    await turn_events(opened.session, CONVERSATION)
    reply = next(m for m in reversed(opened.session.history) if m["role"] == "assistant")
    said = next(b["text"] for b in reply["content"] if b.get("type") == "text")
    try:  # (the message is made at run time: the source line the log shows holds none of it)
        raise RuntimeError(f"could not show {text_of(opened.session.history[0])} in {said[:60]}")
    except RuntimeError as error:
        path = write_crash_log(error, tmp_path)
    assert path is not None
    text = path.read_text()
    assert "Margaret" not in text and "surprise party" not in text and said[:40] not in text
    assert "builtins.RuntimeError: could not show [conversation text]" in text


def test_ordinary_messages_stay_readable() -> None:
    assert clean("'NoneType' object has no attribute 'call'") == "'NoneType' object has no attribute 'call'"
    assert clean("list index out of range") == "list index out of range"
    assert clean("invalid literal for int() with base 10: 'forty two'") == \
        "invalid literal for int() with base 10: '…'"
    assert clean(f"Error code: 401 - invalid x-api-key {KEY}") == "Error code: 401 - invalid x-api-key [redacted]"
