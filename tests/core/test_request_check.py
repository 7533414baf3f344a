"""`RequestCheck.valid` is `not protocol_errors(...)`: on every request each replay strategy sends for a real
Claude Code log, and on those requests broken in the ways compaction could break them."""

from __future__ import annotations

import random

from tui_agent.core.recordings.economics import strategy_runs
from tui_agent.core.recordings.recorded import load_recorded
from tui_agent.core.messages import protocol_errors, tool_result_block, user_text
from tui_agent.core.request_check import RequestCheck
from tests.shared import SMALL_LOG

LOG = SMALL_LOG  # the small real log, else the long synthetic one (tests/shared.py)


def broken(messages: list[dict], rng: random.Random) -> list[dict]:
    out = list(messages)
    kind = rng.randrange(6)
    i = rng.randrange(len(out))
    if kind == 0:
        del out[i]  # a tool_result loses its tool_use, or a tool_use its answer
    elif kind == 1 and len(out) > 1:
        j = rng.randrange(len(out))
        out[i], out[j] = out[j], out[i]
    elif kind == 2:
        out.insert(i, out[i])  # a duplicated tool_use id
    elif kind == 3:
        out[i] = {**out[i], "content": [{"type": "text", "text": "  "}]}
    elif kind == 4:
        out[i] = {**out[i], "role": "system"}
    else:
        out = out[i:]  # may start with an assistant message or an orphan result
    return out


def checked_requests(seed: int, variants, lanes: bool = False) -> tuple[int, int]:
    """Every request each strategy sends for LOG, and `variants(messages, rng)` of it, checked against
    `protocol_errors` (per strategy's lane when `lanes`); returns (compared, invalid)."""
    recorded = load_recorded(LOG)
    runs = strategy_runs(recorded, check_memory=False)
    check, rng = RequestCheck(), random.Random(seed)
    compared = invalid = 0
    for _ in recorded.calls:
        for name, run in runs.items():
            for request in variants(run.step().messages, rng):
                expected = not protocol_errors(list(request))
                assert check.valid(request, lane=name if lanes else None) == expected, protocol_errors(list(request))[:3]
                compared += 1
                invalid += not expected
    return compared, invalid


def test_valid_is_protocol_errors_on_every_replayed_request_and_its_breakages():
    compared, invalid = checked_requests(20, lambda messages, rng: [messages] + [broken(messages, rng) for _ in range(3)])
    assert compared > 400 and invalid > 100  # both answers were exercised


def test_pending_tool_use_and_results_after_text():
    check = RequestCheck()
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]}
    pending = [user_text("hi"), use]
    assert not check.valid(pending) and protocol_errors(pending)
    assert check.valid(pending, allow_pending=True) and not protocol_errors(pending, allow_pending=True)
    late = {"role": "user", "content": [{"type": "text", "text": "x"}, tool_result_block("t1", "ok")]}
    assert not check.valid([user_text("hi"), use, late]) and protocol_errors([user_text("hi"), use, late])
    assert not check.valid([])


def test_a_lanes_check_from_where_the_request_changed_is_the_whole_check():
    """`valid(..., lane=…)` walks only what changed since the lane's previous request: on every request of
    every strategy, and on breakages that leave the shared prefix intact or break it (a failure inside the
    shared part, at its edge, after it), it answers as `protocol_errors` does."""
    recorded = load_recorded(LOG)
    runs = strategy_runs(recorded, check_memory=False)
    check = RequestCheck()
    rng = random.Random(21)
    compared = invalid = 0
    previous: dict[str, list[dict]] = {}
    for _ in recorded.calls:
        for name, run in runs.items():
            messages = run.step().messages
            requests = [messages, broken(messages, rng)]
            if name in previous and len(previous[name]) > 2:  # the previous request, grown or cut after a break
                old = previous[name]
                cut = rng.randrange(1, len(old))
                requests += [old[:cut] + messages[cut:], broken(old, rng) + messages[len(old):], list(old)]
            for request in requests:
                expected = not protocol_errors(request)
                assert check.valid(request, lane=name) == expected, protocol_errors(request)[:3]
                compared += 1
                invalid += not expected
            previous[name] = messages
    assert compared > 700 and invalid > 150, (compared, invalid)  # both answers, many times


def test_a_lane_remembers_a_failure_inside_the_shared_part():
    check = RequestCheck()
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]}
    orphan = {"role": "user", "content": [tool_result_block("t9", "ok")]}
    bad = [user_text("hi"), orphan, use, {"role": "user", "content": [tool_result_block("t1", "ok")]}]
    assert not check.valid(bad, lane="x")
    assert not check.valid(bad + [use], lane="x")  # the orphan is still there
    good = [bad[0], use, bad[3]]
    assert check.valid(good, lane="x") and check.valid(good + [{"role": "assistant", "content": [
        {"type": "text", "text": "done"}]}], lane="x")
    assert not check.valid(good + [use], lane="x")  # t1 twice
    assert check.valid(good + [use], lane="x", allow_pending=False) is False


def test_a_lane_given_equal_copies_of_its_previous_messages_answers_as_protocol_errors():
    """`same_head` takes equal messages for the same (their facts are equal): a lane fed deep copies, or a
    tuple, or a request that starts like the previous one with copies and then breaks, answers as
    `protocol_errors` does."""
    import copy

    def variants(messages, rng):
        twin = copy.deepcopy(messages)
        return (messages, twin, tuple(twin), twin + [twin[-1]], broken(twin, rng), messages)

    compared, invalid = checked_requests(5, variants, lanes=True)
    assert compared > 700 and invalid > 100, (compared, invalid)


def test_same_head_counts_equal_messages_and_falls_back_to_identity():
    from tui_agent.core.request_check import same_head

    a, b, c = {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}
    assert same_head([a, b], [a, b, c]) == 2
    assert same_head([a, b], ({"role": "user", "content": "a"}, dict(b), c)) == 2  # equal copies, a tuple
    assert same_head([a, b, c], [a, b]) == 2 and same_head([], [a]) == 0
    assert same_head([a, b], [a, c, b]) == 1 and same_head([a, b], [dict(a), c]) == 0  # identity after a miss


def test_a_lanes_check_of_a_grown_request_copies_nothing_the_size_of_the_session():
    """A lane is cut back and grown in place: checking a request that adds two messages to a 20,000-message
    one allocates about one list of pointers at most (the prefix compared), not the copies of the request,
    its tool_use ids and their set that a check per call made before (the work of a long watch's call)."""
    import tracemalloc

    def call(i: int) -> list[dict]:
        return [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {}}]},
                {"role": "user", "content": [tool_result_block(f"t{i}", "ok")]}]

    messages = [user_text("go")] + [m for i in range(10_000) for m in call(i)]
    check = RequestCheck()
    assert check.valid(messages, lane="x")
    grown = messages + call(10_000)
    check.facts(grown[-1]), check.facts(grown[-2])  # (their facts: made once in any case)
    tracemalloc.start()
    try:
        assert check.valid(grown, lane="x")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * 8 * len(grown), peak  # one pointer list is 8 bytes a message
    assert not check.valid(grown + call(3), lane="x")  # t3 twice: the ids were kept right


def test_a_check_keeps_the_facts_of_the_newest_messages_only():
    """A watch checks a request per call for hours, and each call's compaction makes new copies: the facts
    (and the messages they keep alive) are kept for the newest `kept` messages, not one set per call, and
    a message whose facts were let go is checked alike (they are made again)."""
    check = RequestCheck(kept=50)
    head = [user_text("go")]
    for i in range(2_000):  # a fresh copy of every message at each call, as a compaction's cut copies are
        request = [dict(m) for m in head] + [
            {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {}}]},
            {"role": "user", "content": [tool_result_block(f"t{i}", "ok")]}]
        assert check.valid(request, lane="x") == (not protocol_errors(request))
        assert check.facts_kept <= 50
    broken_request = [dict(m) for m in head] + [{"role": "user", "content": [tool_result_block("t9", "ok")]}]
    assert not check.valid(broken_request, lane="x") and protocol_errors(broken_request)
