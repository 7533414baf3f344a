"""Future-entity coverage (`core.coverage`): the measure of what a strategy makes the agent lose."""

from __future__ import annotations


import pytest

from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.recordings.coverage import Coverage, EntityIndex, entities, future_entities
from tui_agent.core.recordings.economics import replay
from tui_agent.core.recordings.recorded import load_recorded
from tests.core.helpers import assistant_text
from tui_agent.core.messages import tool_result_block, user_text
from tests.shared import LOGS

POLICY = CompactPolicy(context_window=200_000, max_output_tokens=32_000, enabled=True)


def test_entities_are_paths_dotted_snake_and_camel_names_not_plain_words():
    found = entities("Read src/app.py, then call parse_args() and loadConfig; see README.md. The end, e")
    assert {"src/app.py", "parse_args", "loadConfig", "README.md"} <= found
    assert not found & {"Read", "then", "call", "The", "end", "see"}
    assert "/etc/passwd" in entities("cat /etc/passwd.")  # an absolute path keeps its slash, loses the full stop


def _session():
    """A prompt, a read of a file that names `special_value`, then replies that mention it."""
    return [
        user_text("look at src/conf.py"),
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "src/conf.py"}}]},
        {"role": "user", "content": [tool_result_block("t1", "special_value = 3\nother_name = 4")]},
        assistant_text("special_value is 3."),
        user_text("and other_name?"),
        assistant_text("other_name is 4."),
    ]


def test_future_entities_are_what_the_next_replies_use_that_was_seen_before():
    history = _session()
    future = future_entities(history, [1, 3, 5])
    assert future[0] == {"src/conf.py"}  # the Read's path was in the prompt; nothing else was seen yet
    assert future[1] == {"special_value", "other_name"}
    assert future[2] == {"other_name"}


def test_a_request_that_lost_the_read_covers_less():
    history = _session()
    wanted = future_entities(history, [3])[0]
    index = EntityIndex()
    whole = history[:3]
    cut = [history[0], history[1], {"role": "user", "content": [tool_result_block("t1", "[cleared]")]}]
    assert index.present(wanted, whole) == len(wanted)
    assert index.present(wanted, cut) == 0
    meter = Coverage()
    meter.add(len(wanted), index.present(wanted, cut))
    meter.add(0, 0)  # a call with nothing to cover does not count
    assert meter.value == 0.0 and meter.calls == 1


# the first real log in ../shared, else the long synthetic one (tests/shared.LOGS): never skipped
@pytest.mark.parametrize("path", LOGS[:1], ids=lambda p: p.name[:30])
def test_the_append_only_conversation_covers_everything_and_strategies_are_measured(path):
    results = replay(load_recorded(path), ["none", "v1", "v2"], POLICY)
    assert results["none"].coverage.calls > 0
    assert results["none"].coverage.value == 1.0
    for name in ("v1", "v2"):
        assert 0.0 <= results[name].coverage.value <= 1.0
