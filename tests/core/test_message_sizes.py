"""`tokens.message_sizes` measures a message in one walk (the legacy strategies' memo uses it); it must say
exactly what `message_tokens` and `message_chars` say apart, on every kind of block and on real sessions."""

from __future__ import annotations

import pytest

from tests.shared import SYNTHETIC_TRANSCRIPT, TRANSCRIPT_FILES
from tui_agent.core import tokens as tk
from tui_agent.core.compaction.strategies.legacy import _cut_message
from tui_agent.core.recordings.recorded import load_recorded

BLOCKS = [
    {"type": "text", "text": "plain  words\twith   runs \t of space"},
    {"type": "thinking", "thinking": "a    thought", "signature": "s"},
    {"type": "redacted_thinking", "data": "xyz"},
    {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "src/a  b.py", "limit": 3}},
    {"type": "tool_result", "tool_use_id": "t1", "content": "line 1\n    indented    line"},
    {"type": "tool_result", "tool_use_id": "t2", "content": [
        {"type": "text", "text": "part  one"}, {"type": "image", "source": {}}, {"type": "text", "text": "two"}]},
    {"type": "tool_result", "tool_use_id": "t3"},
    {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
    {"type": "document", "source": {}},
    {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "x"}},
]


def _apart(message: dict) -> tuple[int, int]:
    return tk.message_tokens(message), tk.message_chars(message)


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b["type"])
def test_one_block_of_each_kind_measures_as_apart(block: dict) -> None:
    message = {"role": "user", "content": [block]}
    assert tk.message_sizes(message) == _apart(message)


def test_string_content_and_empty_messages_measure_as_apart() -> None:
    for message in ({"role": "user", "content": "a  plain\t\tprompt"}, {"role": "assistant", "content": []},
                    {"role": "user"}, {"role": "assistant", "content": BLOCKS}):
        assert tk.message_sizes(message) == _apart(message)


def test_every_message_of_the_sessions_and_its_cut_copy_measures_as_apart() -> None:
    for path in [SYNTHETIC_TRANSCRIPT, *TRANSCRIPT_FILES]:
        for message in load_recorded(path).history:
            assert tk.message_sizes(message) == _apart(message)
            cut, _ = _cut_message(message, 1000)
            if cut is not None:
                assert tk.message_sizes(cut) == _apart(cut)
