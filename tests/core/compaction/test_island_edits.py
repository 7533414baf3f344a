"""A Write island shows the file as it is (issue 39 item 5, `compaction.island_edits`): the Edits made to it
after the Write that left with the dropped span are applied to the island's Write input, its result says so
in one line, the request stays valid and sticky, and a resumed compactor sends the same bytes."""

from __future__ import annotations

from dataclasses import replace

from tui_agent.core.compaction import Compactor, CompactPolicy
from tui_agent.core.compaction.decisions import KINDS, Edited, replay
from tui_agent.core.messages import protocol_errors, tool_result_block, user_text

POLICY = CompactPolicy(context_window=40_000, max_output_tokens=4_000, enabled=True, cut_on_read=False,
                       keep_recurring_share=0.0, islands_show_edits=True, low_water=0.15)  # a tail that holds the late edit
WRITTEN = "def parse_config():\n    return load('a.toml')\n" + "# filler line\n" * 40
EDITS = [("load('a.toml')", "load('b.toml')"), ("def parse_config", "def read_config")]


def _call(tid: str, name: str, **inputs: object) -> dict:
    return {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": name, "input": inputs}]}


def _result(tid: str, text: str, error: bool = False) -> dict:
    block = tool_result_block(tid, text)
    if error:
        block["is_error"] = True
    return {"role": "user", "content": [block]}


def session(rounds: int, edits: list[tuple[str, str]] = EDITS, late_edit: bool = False) -> list[dict]:
    """A task; the agent writes src/core_module.py past the kept head, edits it, then builds many times
    (results only a drop takes); `late_edit`: one more edit of the file near the end (in the kept tail)."""
    out = [user_text("port the project")]
    for k in range(rounds):
        out += [_call(f"r{k}", "Bash", command=f"make build_{k}"), _result(f"r{k}", f"line_{k} " * 900)]
        if k == 8:
            out += [_call("w0", "Write", file_path="src/core_module.py", content=WRITTEN),
                    _result("w0", "File created successfully at: src/core_module.py")]
            for n, (old, new) in enumerate(edits):
                out += [_call(f"e{n}", "Edit", file_path="src/core_module.py", old_string=old, new_string=new),
                        _result(f"e{n}", "The file src/core_module.py has been updated.")]
        if late_edit and k == rounds - 2:
            out += [_call("late", "Edit", file_path="src/core_module.py", old_string="# filler line\n",
                          new_string="# filled\n", replace_all=True), _result("late", "updated")]
    return out


def _sent(messages: list[dict], tid: str, kind: str = "tool_use") -> dict | None:
    for m in messages:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if b.get("type") == kind and (b.get("id") if kind == "tool_use" else b.get("tool_use_id")) == tid:
                return b
    return None


def test_an_island_write_goes_out_with_its_dropped_edits_applied_and_a_note():
    history = session(40)
    compactor = Compactor(POLICY, baseline_tokens=1_000)
    result = compactor.compact(history)
    assert "drop" in result.plan.event.kinds
    write = _sent(result.messages, "w0")
    assert write is not None and _sent(result.messages, "e0") is None and _sent(result.messages, "e1") is None
    assert write["input"]["content"] == WRITTEN.replace("a.toml", "b.toml").replace("parse_config", "read_config")
    note = _sent(result.messages, "w0", "tool_result")["content"]
    assert "as it stood after 2 later edits that left this request" in str(note)
    assert protocol_errors(result.messages) == []
    assert result.plan.event.edited == 1 and "showed 1 kept write as edited since" in result.plan.event.line()
    assert result.plan.op(history.index(next(m for m in history if _sent([m], "w0")))).kind == "edited"
    # the history is never changed
    assert _sent(history, "w0")["input"]["content"] == WRITTEN
    # sticky: the next call (a new round, no event) sends the same prefix
    longer = history + [_call("x", "Bash", command="ls"), _result("x", "ok")]
    again = compactor.compact(longer)
    assert again.plan.event is None or "drop" not in again.plan.event.kinds
    assert again.messages[: len(result.messages)] == result.messages


def test_a_resumed_compactor_renders_the_same_bytes():
    history = session(40)
    compactor = Compactor(POLICY, baseline_tokens=1_000)
    first = compactor.compact(history)
    saved = compactor.export_state()
    assert any(entry[0] == "edited" for entry in compactor.state.to_json()["blocks"])
    resumed = Compactor(POLICY, baseline_tokens=1_000)
    assert not resumed.import_state(history, saved)
    assert resumed.state.blocks == compactor.state.blocks
    assert resumed.compact(history).messages == compactor.compact(history).messages == first.messages


def test_without_the_flag_the_island_shows_the_write_as_written():
    result = Compactor(replace(POLICY, islands_show_edits=False), baseline_tokens=1_000).compact(session(40))
    assert _sent(result.messages, "w0")["input"]["content"] == WRITTEN


def test_an_edit_still_sent_is_not_applied():
    history = session(40, late_edit=True)
    result = Compactor(POLICY, baseline_tokens=1_000).compact(history)
    assert _sent(result.messages, "late") is not None  # in the kept tail
    shown = _sent(result.messages, "w0")["input"]["content"]
    assert "read_config" in shown and "# filler line" in shown and "# filled" not in shown
    assert protocol_errors(result.messages) == []


def test_an_edit_whose_old_string_is_missing_ends_the_replay():
    edits = [("load('a.toml')", "load('b.toml')"), ("no such text", "x"), ("def parse_config", "def read_config")]
    result = Compactor(POLICY, baseline_tokens=1_000).compact(session(40, edits))
    shown = _sent(result.messages, "w0")["input"]["content"]
    assert "b.toml" in shown and "parse_config" in shown  # as of the first edit, the last that applied
    assert "after 1 later edit that left" in str(_sent(result.messages, "w0", "tool_result")["content"])
    assert replay("ab", [{"old_string": "a", "new_string": "c"}, {"old_string": "zz", "new_string": "y"},
                         {"old_string": "b", "new_string": "d"}]) == ("cb", 1)
    # as the Edit tool: a string found twice without replace_all does not apply; with it, every one does
    assert replay("aa", [{"old_string": "a", "new_string": "b"}]) == ("aa", 0)
    assert replay("aa", [{"old_string": "a", "new_string": "b", "replace_all": True}]) == ("bb", 1)


def test_a_failed_edit_changed_nothing_and_is_passed_over():
    history = session(40)
    at = next(k for k, m in enumerate(history) if _sent([m], "e0", "tool_result"))
    history[at] = _result("e0", "String to replace not found", error=True)
    result = Compactor(POLICY, baseline_tokens=1_000).compact(history)
    shown = _sent(result.messages, "w0")["input"]["content"]
    assert "a.toml" in shown and "read_config" in shown
    assert "after 1 later edit that" in str(_sent(result.messages, "w0", "tool_result")["content"])


def test_a_write_superseded_by_a_later_write_is_no_island():
    history = session(40)
    at = next(k for k, m in enumerate(history) if _sent([m], "e1", "tool_result")) + 1
    history[at:at] = [_call("w1", "Write", file_path="src/core_module.py", content="rewritten\n"),
                      _result("w1", "File created successfully")]
    result = Compactor(POLICY, baseline_tokens=1_000).compact(history)
    old = _sent(result.messages, "w0")
    assert old is None or old["input"]["content"] == WRITTEN
    assert not any(isinstance(d, Edited) and d.tool_use_id == "w0" for per in result.plan.blocks.values() for d in per)


def test_a_saved_edited_decision_whose_edits_do_not_apply_is_refused():
    history = session(40)
    w = next(k for k, m in enumerate(history) if _sent([m], "w0"))
    calls = {"e0": ("Edit", {"old_string": "missing", "new_string": "x"})}
    kind = KINDS["edited"]
    try:
        kind.from_json(["edited", w, 0, 3, ["e0"]], history[w]["content"][0], lambda i: calls.get(i, ("", None)))
    except ValueError:
        pass
    else:
        raise AssertionError("a saved replay that does not apply was read")


def _state_over(history: list[dict], islands: set[int]):
    """Facts of `history` and a state dropping all of it after the prompt but `islands`."""
    from tui_agent.core.compaction.facts import Facts
    from tui_agent.core.compaction.state import CompactState

    facts = Facts()
    facts.sync(history)
    state = CompactState(history_len=len(history), drop_from=1, drop_until=len(history) - 1,
                         kept_in_drop=frozenset(islands), kept_for_use=frozenset(islands))
    return state, facts


def test_the_chooser_leaves_a_superseded_write_and_stops_at_an_edit_the_model_sees():
    from tui_agent.core.compaction.island_edits import edited_islands

    def edit(tid: str, old: str, new: str) -> list[dict]:
        return [_call(tid, "Edit", file_path="a.py", old_string=old, new_string=new), _result(tid, "updated")]

    base = [user_text("go"), _call("w", "Write", file_path="a.py", content="one two three"), _result("w", "ok")]
    history = base + edit("e0", "one", "1") + edit("e1", "two", "2") + edit("e2", "three", "3") + [user_text("more")]
    state, facts = _state_over(history, {1, 2})
    shown = edited_islands(state, facts, history, call=5).blocks[1][0]
    assert shown.content == "1 2 3" and shown.edit_ids == ("e0", "e1", "e2")
    state, facts = _state_over(history, {1, 2, 5, 6})  # e1's exchange is an island: the model sees it
    assert edited_islands(state, facts, history, call=5).blocks[1][0].content == "1 two three"
    rewritten = base + edit("e0", "one", "1") + [_call("w2", "Write", file_path="a.py", content="new"),
                                                 _result("w2", "ok"), user_text("more")]
    state, facts = _state_over(rewritten, {1, 2})
    assert edited_islands(state, facts, rewritten, call=5).blocks == {}
