"""Every compaction strategy (v2, v1, seed, off) is a `CompactorProtocol` and behaves like one: the call
number is the caller's, `preview` equals the next `compact`, state crosses JSON and bad state is refused
with a one-line warning instead of an exception."""

from __future__ import annotations

import json

import pytest

from tui_agent.core.compaction import MODES, make_compactor
from tui_agent.core.compaction.protocol import CompactorProtocol
from tui_agent.core.messages import protocol_errors, tool_result_block, user_text


def _session(rounds: int = 8, size: int = 6_000) -> list[dict]:
    history = [user_text("port the whole project")]
    for i in range(rounds):
        history.append({"role": "assistant", "content": [
            {"type": "text", "text": f"step {i}"},
            {"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {"file_path": f"src/f{i}.py"}}]})
        history.append({"role": "user", "content": [tool_result_block(f"t{i}", f"{i}:" + "x" * size)]})
    return history


def _strategy(mode: str) -> CompactorProtocol:
    return make_compactor(mode, 30_000, 4_000)


def _dump(messages) -> str:
    return json.dumps(messages, sort_keys=True)


@pytest.mark.parametrize("mode", MODES)
def test_every_strategy_is_a_compactor_protocol(mode):
    compactor = _strategy(mode)
    assert isinstance(compactor, CompactorProtocol)
    assert compactor.mode == mode
    assert compactor.steerable is (mode == "v2")
    assert isinstance(compactor.summary_enabled, bool)
    assert compactor.ratio == 1.0


@pytest.mark.parametrize("mode", MODES)
def test_the_call_number_is_the_callers(mode):
    compactor = _strategy(mode)
    history = _session()
    assert compactor.compact(history[:3], 7).plan.call == 7
    assert compactor.preview(history[:5], 8).plan.call == 8
    assert compactor.preview(history[:5]).plan.call == 8  # without one: the call after the last planned
    assert compactor.compact(history[:5]).plan.call == 8  # the public contract: compact(history) still works
    compactor.request_event("drop")
    assert compactor.compact(history[:7], 1).plan.call == 1  # a caller's counter may start again (/clear)


@pytest.mark.parametrize("mode", MODES)
def test_preview_is_the_next_call_and_keeps_nothing(mode):
    compactor = _strategy(mode)
    history = _session()
    for length in range(1, len(history) + 1, 2):
        seen = compactor.preview(history[:length], length)
        again = compactor.preview(history[:length], length)
        real = compactor.compact(history[:length], length)
        assert _dump(seen.messages) == _dump(again.messages) == _dump(real.messages)
        assert seen.plan.call == real.plan.call == length
        assert seen.plan.estimated_tokens == real.plan.estimated_tokens
        assert not protocol_errors(real.messages)


@pytest.mark.parametrize("mode", MODES)
def test_steering_is_accepted_by_every_strategy(mode):
    compactor = _strategy(mode)
    history = _session()
    before = _dump(compactor.preview(history, 1).messages)
    for action in (compactor.pin, compactor.exclude, compactor.expand):
        action(1, True)
        action(1, False)
    compactor.request_event("drop")
    compactor.too_long(history, None, None)
    result = compactor.compact(history, 1)
    assert not protocol_errors(result.messages)
    if not compactor.steerable and mode != "v1":  # v1's answer to too_long is a smaller budget
        assert _dump(result.messages) == before  # the documented no-ops change nothing


@pytest.mark.parametrize("mode", MODES)
def test_summary_interface_of_every_strategy(mode):
    compactor = _strategy(mode)
    history = _session()
    compactor.compact(history, 1)
    before, dropped = compactor.summary_context()
    assert isinstance(before, list) and dropped >= 0
    with_summary = compactor.attach_summary(history, "the user ports the project", 1)
    failed = compactor.attach_summary(history, None, 1)
    assert with_summary.plan.call == failed.plan.call == 1
    assert not protocol_errors(with_summary.messages) and not protocol_errors(failed.messages)


@pytest.mark.parametrize("mode", MODES)
def test_state_crosses_json_and_a_twin_plans_the_same(mode):
    compactor = _strategy(mode)
    history = _session()
    for length in range(1, len(history) - 2, 2):
        compactor.compact(history[:length], length)
        compactor.observe_usage(900 + 13 * length)
    state = json.loads(json.dumps(compactor.export_state()))
    twin = _strategy(mode)
    assert twin.import_state(history[: len(history) - 4], state) is None
    n = len(history)
    assert _dump(twin.compact(history, n).messages) == _dump(compactor.compact(history, n).messages)


BAD_STATES = [
    {"version": 1, "calls": "many"},
    {"version": 1, "cuts": [["x"]]},
    {"version": 1, "masks": [[99, 0, 1]], "history_len": 99},
    {"version": 1, "calibration": "warm", "tokens": {"ratio": "high"}},
    {"version": 1, "drop_from": 0, "drop_until": 2, "history_len": 17},  # splits the t0 tool pair
    [1, 2, 3],
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("state", BAD_STATES)
def test_bad_state_is_refused_with_one_line_and_never_raises(mode, state):
    history = _session()
    compactor = _strategy(mode)
    warning = compactor.import_state(history, state)  # type: ignore[arg-type]
    assert warning is None or (isinstance(warning, str) and "\n" not in warning and warning)
    result = compactor.compact(history, 1)
    assert not protocol_errors(result.messages)


@pytest.mark.parametrize("mode", ["v2", "v1", "seed"])
async def test_a_model_switch_retargets_the_compactor(tmp_path, mode) -> None:
    """`/model` (Session.switch_model): the marks follow the new model's window and the cuts its cache
    prices; the compactor kept the old model's 200k window and prices before."""
    from tui_agent.core.models import for_model
    from tui_agent.core.providers.demo import DemoProvider
    from tui_agent.core.providers.scripted import ScriptedProvider
    from tui_agent.core.agent.session import Session
    from tui_agent.core.tools.base import ToolRegistry

    session = Session(provider=ScriptedProvider([]), tools=ToolRegistry([]), workspace=tmp_path, compact_mode=mode)
    before = session.compactor.policy
    demo = DemoProvider(workspace=tmp_path)
    assert demo.context_window != before.context_window
    await session.switch_model(demo)
    policy = session.compactor.policy
    price = for_model(demo.model)
    assert (policy.context_window, policy.max_output_tokens) == (demo.context_window, demo.max_output_tokens)
    assert (policy.cache_read, policy.cache_write) == (price.read, price.write)
    assert policy.high_tokens < before.high_tokens
