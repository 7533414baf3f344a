"""The honest measure (`shared/reference/coverage-measure.md`): identifiers only, traces of what left not
counted, a prompt of several text blocks found when each block is, the peers on the same replay."""

from __future__ import annotations

import pytest

from tests.shared import SMALL_LOG, TRANSCRIPTS, shared_log
from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.compaction.cut import cut_block
from tui_agent.core.compaction.mask import placeholder_text
from tui_agent.core.recordings.coverage import IdentifierIndex, future_identifiers, identifiers
from tui_agent.core.recordings.economics import replay
from tui_agent.core.recordings.economics_table import cost_at, on_frontier, points
from tui_agent.core.messages import protocol_errors, tool_result_block, user_text
from tui_agent.core.recordings.peers import PEERS, make_peer
from tui_agent.core.models import NEWER
from tui_agent.core.recordings.recorded import Recorded, TokenModel, load_recorded

ATHENA = TRANSCRIPTS / "tensiondriven__athena__f059ad9a-9964-437c-90a1-28f4dd6d245b.jsonl"  # compacts at 200k
SMALL = SMALL_LOG  # the small real log, else the long synthetic one (tests/shared.py)


def test_identifiers_follow_the_definition():
    text = ("see src/app.py and core_utils, call parseConfig; not words like Hello or file. "
            "http://x.org/a_b ./lib/ x.y ab_c version 1.2 foo. __init__")
    # "lib" is too short, "x.y" too, "1.2" starts with a digit, "foo." ends with its only dot; the URL's
    # scheme is not matched (the token starts at a letter after "//"), so its host and path are one token
    assert identifiers(text) == {"src/app.py", "core_utils", "parseConfig", "__init__", "x.org/a_b"}


def _use(tid: str, name: str, **inputs: str) -> dict:
    return {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": name, "input": inputs}]}


def test_tool_names_and_input_keys_are_never_needed_identifiers():
    history = [user_text("go"), _use("t1", "TodoWrite", file_path="a/b_c.py"),
               {"role": "user", "content": [tool_result_block("t1", "ok old_string")]},
               _use("t2", "TodoWrite", file_path="a/b_c.py", old_string="x")]
    wanted = future_identifiers(history, [3])[0]
    assert wanted == {"a/b_c.py"}


def test_a_placeholder_a_cut_note_and_a_recap_are_not_the_conversations_own():
    read = _use("t1", "Read", file_path="src/long_module.py")
    result = {"role": "user", "content": [tool_result_block("t1", "def helper_fn(): pass\n" + "x" * 5000 + " tail_name")]}
    history = [user_text("start"), read, result]
    index = IdentifierIndex(history)
    masked = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                           "content": placeholder_text("Read", {"file_path": "src/other_file.py"}, 5000)}]}
    cut = {"role": "user", "content": [cut_block(result["content"][0], 100, "Read")[0]]}
    recap = user_text("Files read: src/recap_only.py")
    wanted = frozenset({"src/other_file.py", "helper_fn", "tail_name", "src/recap_only.py"})
    assert index.present(wanted, [masked, cut, recap], recap=False) == 1  # helper_fn, kept by the cut
    assert index.present(wanted, [masked, cut, recap], recap=True) == 3  # + the placeholder's, the recap's path


def test_a_prompt_of_several_text_blocks_is_found_when_each_block_is():
    prompt = {"role": "user", "content": [{"type": "text", "text": "<ide_opened_file>a.py</ide_opened_file>"},
                                          {"type": "text", "text": "commit!"}]}
    answer = {"role": "assistant", "content": [{"type": "text", "text": "done"}]}
    history = [prompt, answer, user_text("next"), answer]
    recorded = Recorded("x", history, [1, 3], [100, 120], [0, 0], TokenModel(0, 1.0),
                        estimates=[10, 2, 2, 2])
    v2 = replay(recorded, ["none", "v2"], CompactPolicy(context_window=200_000, enabled=True))["v2"]
    assert v2.prompts_missing == 0


@pytest.mark.parametrize("name", PEERS)
def test_each_peer_sends_valid_requests_and_compacts_athena(name):
    recorded = load_recorded(shared_log(ATHENA.name))
    results = replay(recorded, ["none", name], CompactPolicy(context_window=200_000, enabled=True), price=NEWER)
    peer, none = results[name], results["none"]
    assert peer.invalid == 0
    assert peer.cost < none.cost and peer.coverage.pooled < 1.0
    if name.startswith("cc-"):
        assert peer.summary_calls >= 1 and cost_at(peer, recorded, NEWER) == pytest.approx(peer.cost)


def test_the_peers_summary_is_valid_and_the_last_round_goes_on():
    peer = make_peer("cc-77", CompactPolicy(context_window=2_000, max_output_tokens=100), None)
    history = [user_text("task one"), _use("t1", "Read", file_path="src/a_file.py"),
               {"role": "user", "content": [tool_result_block("t1", "z" * 8000)]}]
    sent = peer.compact(history).messages
    assert not protocol_errors(sent) and sent[-1] is history[-1] and len(sent) == 3
    assert peer.take_summary_call() is not None and peer.take_summary_call() is None


def test_a_short_session_shows_every_strategy_as_append_only():
    recorded = load_recorded(SMALL)
    results = replay(recorded, ["none", "v2", *PEERS], CompactPolicy(context_window=200_000, enabled=True))
    found = points([(recorded, results)], NEWER, 200_000)
    assert all(p.cost == pytest.approx(1.0) and p.coverage.pooled == 1.0 for p in found)
    assert all(on_frontier(p, found) for p in found)
