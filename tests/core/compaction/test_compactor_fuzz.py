"""A property fuzz of the whole `CompactorProtocol` contract for the v2 compactor: random sessions with every
operation a session can do (calls, pin/unpin, exclude/include, expand, forced events, too_long, summaries
attached and failed, the history replaced by /clear, the window changed by /model, export → import at any
point). Every request is valid with globally unique tool_use ids, the history is never mutated, a preview
is the next call (bytes and call number), a resumed twin plans what the original plans, and no forged state
gives an invalid request."""

from __future__ import annotations

import copy
import os
import json
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from tui_agent.core.compaction import Compactor, CompactPolicy
from tui_agent.core.messages import protocol_errors, tool_result_block, tool_uses, user_text

SMALL = CompactPolicy(context_window=16_000, max_output_tokens=4_000, enabled=True, mask_protect_tokens=2_000)
BASELINE = 400
FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "60")),  # more: FUZZ_EXAMPLES=1000
                deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def dumps(messages) -> str:
    return json.dumps(messages, sort_keys=True)


class World:
    """One session's history and its compactor, with a resumed twin driven in lockstep."""

    def __init__(self) -> None:
        self.history: list[dict] = []
        self.snapshot: list[dict] = []
        self.policy = SMALL
        self.compactor = Compactor(self.policy, baseline_tokens=BASELINE)
        self.twin: Compactor | None = None
        self.call = 0
        self.ids = 0
        self.log: list[str] = []  # what happened, shown when a case fails
        self.planned: int | None = None  # the history length the last call planned (a summary follows it)
        self.stale = False

    # -- history (append-only; /clear replaces it) --------------------------------------------
    def grow(self, data: st.DataObject) -> None:
        if not self.history or self.history[-1]["role"] == "assistant":
            self._append(user_text(f"prompt {len(self.history)}: " + "please " * data.draw(st.integers(0, 200))))
            return
        if data.draw(st.booleans()):  # a tool round
            k = data.draw(st.integers(1, 2))
            uses = []
            for _ in range(k):
                self.ids += 1
                name = data.draw(st.sampled_from(["Read", "Grep", "Bash", "Edit"]))
                key = {"command": f"ls d{self.ids}"} if name == "Bash" else {"file_path": f"src/f{self.ids}.py"}
                uses.append({"type": "tool_use", "id": f"t{self.ids}", "name": name, "input": key})
            said = [{"type": "text", "text": "looking " * data.draw(st.integers(1, 20))}]
            self._append({"role": "assistant", "content": said + uses})
            results = [tool_result_block(u["id"], "r" * data.draw(st.sampled_from([20, 900, 5000, 14000])),
                                         data.draw(st.booleans())) for u in uses]
            self._append({"role": "user", "content": results})
        else:
            self._append({"role": "assistant", "content": [{"type": "text", "text": f"answer {len(self.history)}"}]})

    def _append(self, message: dict) -> None:
        self.history.append(message)
        self.snapshot.append(copy.deepcopy(message))

    def clear(self) -> None:
        """`/clear` as `Session.clear` does it: a new history and a new compactor (the journal moves to a new
        file, so no resume crosses it)."""
        self.replace_history()
        self.compactor = Compactor(self.policy, baseline_tokens=BASELINE)
        self.twin = None

    def replace_history(self) -> None:
        """The history replaced under the same compactor, which must notice it by itself; a resumed twin
        cannot follow (its state was saved over the old history), so it is let go."""
        self.history, self.snapshot, self.call, self.planned = [], [], 0, None
        self.twin = None
        self.stale = True  # its state still describes the old history until its next call

    # -- the engine's side ---------------------------------------------------------------------
    def both(self):
        return [c for c in (self.compactor, self.twin) if c is not None]

    def model_call(self) -> None:
        if not self.history or self.history[-1]["role"] != "user":
            return
        self.call += 1
        self.log.append(f"CALL{self.call}")
        preview = self.compactor.preview(self.history, self.call)
        result = self.compactor.compact(self.history, self.call)
        assert result.plan.call == preview.plan.call == self.call
        assert dumps(preview.messages) == dumps(result.messages), "the preview is the next call"
        errors = protocol_errors(result.messages)
        assert not errors, errors
        if self.twin is not None:
            resumed = self.twin.compact(self.history, self.call)
            assert dumps(resumed.messages) == dumps(result.messages), "the resumed twin sends what the original sends"
            assert resumed.plan.estimated_tokens == result.plan.estimated_tokens
            # the same value, not only the same bytes (the estimator's measurements aside: compared above)
            assert replace(self.twin.state, tokens={}) == replace(self.compactor.state, tokens={})
        assert self.history == self.snapshot, "the history is never mutated"
        self.planned = len(self.history)
        self.stale = False
        real = round(1.3 * result.plan.estimated_tokens) + 50
        for c in self.both():
            c.observe_usage(real)

    def summary(self, text: str | None) -> None:
        if self.planned != len(self.history):  # the loop asks for a summary right after its call's plan
            return
        results = [c.attach_summary(self.history, text, self.call) for c in self.both()]
        for r in results:
            assert not protocol_errors(r.messages), protocol_errors(r.messages)
        if len(results) == 2:
            assert dumps(results[0].messages) == dumps(results[1].messages)

    def resume(self) -> None:
        """What `--resume` does: a fresh compactor restores the JSON state over the same history (a state
        saved over a history since replaced is never resumed: the journal starts a new file then)."""
        if self.stale:
            return
        state = json.loads(json.dumps(self.compactor.export_state()))
        self.twin = Compactor(self.policy, baseline_tokens=BASELINE)
        assert self.twin.import_state(self.history, state) is None

    def window(self, size: int) -> None:
        self.policy = replace(self.policy, context_window=size)
        for c in self.both():
            c.policy = self.policy


OPS = ["grow", "grow", "grow", "call", "call", "pin", "unpin", "exclude", "include", "expand", "event",
       "too_long", "summary", "summary_failed", "clear", "replace", "model", "resume"]


def run(data: st.DataObject, steps: int) -> None:
    world = World()
    trace = world.log
    for _ in range(steps):
        op = data.draw(st.sampled_from(OPS))
        n = len(world.history)
        trace.append(f"{op}@{n}")
        try:
            step(world, data, op, n)
        except BaseException:
            note("ops: " + " ".join(trace))
            raise


def step(world: World, data: st.DataObject, op: str, n: int) -> None:
    if op == "grow":
        world.grow(data)
    elif op == "call":
        world.model_call()
    elif op in ("pin", "unpin", "exclude", "include", "expand") and n:
        # out of range too (issue 27): a negative index is refused at the call and changes nothing; one
        # beyond the history is kept for when it gets there, and a resumed twin must agree either way
        index = data.draw(st.one_of(st.integers(0, n - 1), st.integers(-3, -1), st.integers(n, n + 3)))
        name = {"unpin": "pin", "include": "exclude"}.get(op, op)
        for c in world.both():
            if index < 0:
                before = c.export_state()
                with pytest.raises(ValueError):
                    getattr(c, name)(index, op not in ("unpin", "include"))
                assert c.export_state() == before
            else:
                getattr(c, name)(index, op not in ("unpin", "include"))
    elif op == "event":
        kind = data.draw(st.sampled_from(["drop", "summary"]))
        for c in world.both():
            c.request_event(kind)
    elif op == "too_long" and n:
        real = data.draw(st.one_of(st.none(), st.integers(5_000, 40_000)))
        limit = data.draw(st.one_of(st.none(), st.sampled_from([8_000, 12_000, 16_000])))
        for c in world.both():
            c.too_long(world.history, real, limit)
    elif op == "summary":
        world.summary("the user asked for things; the files were read")
    elif op == "summary_failed":
        world.summary(None)
    elif op == "clear":
        world.clear()
    elif op == "replace":
        world.replace_history()
    elif op == "model":
        world.window(data.draw(st.sampled_from([12_000, 16_000, 24_000])))
    elif op == "resume":
        world.resume()
    if op in ("grow",) and data.draw(st.booleans()):
        world.model_call()


@FUZZ
@given(st.data())
def test_random_sessions_keep_the_whole_contract(data):
    run(data, data.draw(st.integers(10, 80)))


# -- forged and stale states ---------------------------------------------------------------------

FIELDS = ["drop_from", "drop_until", "kept_in_drop", "masks", "cuts", "skip", "excluded", "pins", "history_len",
          "cut_scan", "expanded"]


@FUZZ
@given(st.data())
def test_no_forged_state_gives_an_invalid_request(data):
    world = World()
    for _ in range(data.draw(st.integers(6, 40))):
        world.grow(data)
        if data.draw(st.booleans()):
            world.model_call()
    world.model_call()
    n = len(world.history)
    if not n:
        return
    state = json.loads(json.dumps(world.compactor.export_state()))
    for _ in range(data.draw(st.integers(1, 3))):
        field = data.draw(st.sampled_from(FIELDS))
        index = st.integers(-2, n + 2)
        if field in ("drop_from", "drop_until", "history_len", "cut_scan"):
            state[field] = data.draw(index)
        elif field == "masks":
            state[field] = state.get(field, []) + [[data.draw(index), data.draw(st.integers(0, 2)), 1]]
        elif field == "cuts":
            state[field] = state.get(field, []) + [[data.draw(index), data.draw(st.integers(0, 2)), "x", "Read",
                                                    9000, 10, 1, False]]
        elif field == "expanded":
            state[field] = state.get(field, []) + [[data.draw(index), 0]]
        else:
            state[field] = data.draw(st.lists(index, max_size=4))
    fresh = Compactor(world.policy, baseline_tokens=BASELINE)
    warning = fresh.import_state(world.history, state)
    assert warning is None or "\n" not in warning
    world.grow(data)
    world.grow(data)
    if world.history[-1]["role"] != "user":
        world.grow(data)
    result = fresh.compact(world.history, world.call + 1)
    assert not protocol_errors(result.messages), (warning, protocol_errors(result.messages))
    ids = [u["id"] for m in result.messages for u in tool_uses(m)]
    assert len(ids) == len(set(ids))
