"""Compaction engine v1: the seed's acceptance items AC-K1..AC-K12 plus the properties that must always hold."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_agent.compact import TRUNCATION_NOTE, CompactOptions, compact_messages
from tui_agent.core.messages import is_user_text, protocol_errors, tool_result_block, user_text

SEED = CompactOptions(protect_recent_rounds=0)  # the seed's exact behaviour


def use(tool_id: str, name: str = "Read", text: str | None = None) -> dict:
    content = [{"type": "text", "text": text}] if text else []
    content.append({"type": "tool_use", "id": tool_id, "name": name, "input": {"file_path": f"{tool_id}.py"}})
    return {"role": "assistant", "content": content}


def result(tool_id: str, content, is_error: bool = False) -> dict:
    return {"role": "user", "content": [tool_result_block(tool_id, content, is_error)]}


def turns(n: int, result_chars: int = 10) -> list[dict]:
    """n turns of 4 messages: user text, assistant tool_use, tool_result, assistant text."""
    out: list[dict] = []
    for i in range(n):
        out += [user_text(f"question {i}"), use(f"t{i}"), result(f"t{i}", "r" * result_chars),
                {"role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}]}]
    return out


def test_ac_k1_long_result_is_truncated_with_the_note():
    history = [user_text("go"), use("a"), result("a", "x" * 5000)]
    out = compact_messages(history, SEED).messages
    content = out[2]["content"][0]["content"]
    assert len(content) < 5000
    assert content.endswith(TRUNCATION_NOTE)
    assert content.startswith("x" * 100)
    assert content == "x" * 4000 + "\n…[tool_result truncated (compact)]"


def test_ac_k2_truncated_block_keeps_id_and_error_flag():
    history = [user_text("go"), use("toolu_e"), result("toolu_e", "e" * 5000, is_error=True)]
    block = compact_messages(history, SEED).messages[2]["content"][0]
    assert block["tool_use_id"] == "toolu_e"
    assert block["is_error"] is True


def test_ac_k3_input_is_not_mutated():
    history = [user_text("go"), use("a"), result("a", "y" * 6000)]
    snapshot = copy.deepcopy(history)
    compact_messages(history, CompactOptions(protect_recent_rounds=0, max_messages=1))
    assert history == snapshot
    assert history[2]["content"][0]["content"] == "y" * 6000


def test_ac_k4_identity_when_nothing_to_compact():
    history = turns(3)
    result_ = compact_messages(history, SEED)
    assert result_.messages is history
    assert not result_.report.changed


def test_ac_k5_short_results_and_text_are_deep_equal():
    history = turns(2) + [user_text("hello"), use("z", text="thinking aloud"), result("z", "short")]
    out = compact_messages(history, CompactOptions(protect_recent_rounds=0, max_tool_result_chars=4000)).messages
    assert out == history


def test_ac_k6_tail_retention_keeps_at_most_max_and_the_last_message():
    history = turns(10)
    assert len(history) == 40
    out = compact_messages(history, CompactOptions(max_messages=12)).messages
    assert len(out) <= 12
    assert out[-1] == history[-1]


def test_ac_k7_cut_lands_on_a_user_text_message_and_keeps_pairs():
    history = turns(10)
    result_ = compact_messages(history, CompactOptions(max_messages=10))
    out = result_.messages
    assert out[0]["role"] == "user" and all(b["type"] == "text" for b in out[0]["content"])
    assert protocol_errors(out) == []
    assert len(out) == 8  # start 30 moves forward to 32
    assert result_.report.dropped == tuple(range(32))
    assert result_.report.first_kept == 32


def test_ac_k8_short_history_under_the_limit_is_identical():
    history = turns(2)
    assert compact_messages(history, CompactOptions(max_messages=40)).messages is history


def test_ac_k9_combined_tail_and_truncation():
    history = turns(8) + [user_text("read it"), use("big"), result("big", "9" * 9000)]
    out = compact_messages(history, CompactOptions(max_messages=8, max_tool_result_chars=500,
                                                   protect_recent_rounds=0)).messages
    assert len(out) <= 8
    last = out[-1]["content"][0]["content"]
    assert last.endswith(TRUNCATION_NOTE) and len(last) < 1000


def test_ac_k10_disabled_returns_identity(monkeypatch):
    history = turns(5, result_chars=9000)
    assert compact_messages(history, CompactOptions(enabled=False, max_messages=1)).messages is history
    monkeypatch.setenv("COMPACT", "0")
    assert compact_messages(history, CompactOptions(max_messages=1)).messages is history
    assert compact_messages(history).messages is history
    assert not compact_messages(history).report.enabled


def test_ac_k11_trace_line_only_when_something_was_trimmed(monkeypatch, capsys):
    """The loop prints the report's trace fields as `compact.run` only when compaction changed something."""
    import asyncio
    from pathlib import Path

    from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply
    from tui_agent.core.agent.session import Session
    from tests.core.helpers import EchoTool, registry

    monkeypatch.setenv("TRACE", "1")
    big = "b" * 5000

    async def run(replies, options):
        session = Session(ScriptedProvider(replies=replies), registry(EchoTool()), Path("."), compact=options)
        async for _ in session.run_turn("go"):
            pass

    asyncio.run(run([tool_reply("Echo", {"message": big}, "e1"), tool_reply("Echo", {"message": "x"}, "e2"),
                     text_reply("done")], CompactOptions()))
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "compact.run" in line]
    assert [line.split(" ts=")[0] for line in lines] == [  # the seed's fields, then time and session
        "[trace] compact.run before=5 after=5 droppedMessages=0 truncatedBlocks=1"]

    asyncio.run(run([text_reply("hi")], CompactOptions()))
    assert "compact.run" not in capsys.readouterr().err


async def test_ac_k12_model_sees_truncated_copy_while_history_keeps_everything():
    from pathlib import Path

    from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply
    from tui_agent.core.agent.session import Session
    from tests.core.helpers import EchoTool, registry

    provider = ScriptedProvider(replies=[tool_reply("Echo", {"message": "z" * 9000}, "e1"), text_reply("ok")])
    session = Session(provider, registry(EchoTool()), Path("."),
                      compact=CompactOptions(max_tool_result_chars=1000, protect_recent_rounds=0))
    async for _ in session.run_turn("go"):
        pass
    sent = provider.requests[1].messages[2]["content"][0]["content"]
    assert len(sent) < 2000 and sent.endswith(TRUNCATION_NOTE)
    assert session.history[2]["content"][0]["content"] == "z" * 9000


# -- beyond the seed ----------------------------------------------------------------------------------
def test_newest_round_is_protected_by_default():
    history = [user_text("go"), use("a"), result("a", "a" * 9000), use("b"), result("b", "b" * 9000)]
    report = compact_messages(history).report
    assert [t.message_index for t in report.truncated] == [2]
    assert report.protected == (4,)
    assert report.truncated[0].original_chars == 9000 and report.truncated[0].kept_chars == 4000


def test_list_content_text_blocks_are_cut():
    content = [{"type": "text", "text": "a" * 3000}, {"type": "text", "text": "b" * 3000}]
    history = [user_text("go"), use("a"), result("a", content)]
    out = compact_messages(history, SEED).messages[2]["content"][0]["content"]
    assert out[0]["text"] == "a" * 3000
    assert out[1]["text"] == "b" * 1000 + TRUNCATION_NOTE


def test_list_content_cut_exactly_at_a_block_boundary_keeps_the_note():
    """Issue 9 item 13: the later blocks were dropped with no note, so the model took the cut for the end."""
    content = [{"type": "text", "text": "a" * 2000}, {"type": "text", "text": "b" * 3000}]
    history = [user_text("go"), use("a"), result("a", content)]
    out = compact_messages(history, CompactOptions(max_messages=40, max_tool_result_chars=2000,
                                                   protect_recent_rounds=0)).messages[2]["content"][0]["content"]
    assert out[0]["text"] == "a" * 2000
    assert "".join(b["text"] for b in out).endswith(TRUNCATION_NOTE)
    assert "b" not in "".join(b["text"] for b in out)


def test_no_safe_cut_point_drops_nothing():
    history = [user_text("go")]
    for i in range(30):
        history += [use(f"t{i}"), result(f"t{i}", "r")]
    report = compact_messages(history, CompactOptions(max_messages=10)).report
    assert report.dropped == ()


def test_token_budget_drops_at_later_cut_points_and_cuts_harder():
    history = turns(6, result_chars=20000)
    report = compact_messages(history, CompactOptions(max_tokens=3000)).report
    assert report.tokens_after <= 3000
    out = compact_messages(history, CompactOptions(max_tokens=3000)).messages
    assert protocol_errors(out) == []


def test_report_sizes_and_summary():
    history = [user_text("go"), use("a"), result("a", "x" * 8000), use("b"), result("b", "ok")]
    report = compact_messages(history).report
    assert report.chars_before - report.chars_after == 4000 - len(TRUNCATION_NOTE)
    assert report.tokens_after < report.tokens_before
    assert report.summary().startswith("compact.run before=5 after=5 droppedMessages=0 truncatedBlocks=1")


# -- properties ---------------------------------------------------------------------------------------
@st.composite
def histories(draw):
    """Valid conversations: turns of user text, then rounds of (assistant tool_uses → user tool_results)."""
    history: list[dict] = []
    n_turns = draw(st.integers(1, 8))
    counter = 0
    for t in range(n_turns):
        history.append(user_text(f"prompt {t}"))
        for _ in range(draw(st.integers(0, 4))):
            k = draw(st.integers(1, 3))
            ids = [f"id{counter + j}" for j in range(k)]
            counter += k
            history.append({"role": "assistant", "content": [
                {"type": "tool_use", "id": i, "name": "Read", "input": {}} for i in ids]})
            history.append({"role": "user", "content": [
                tool_result_block(i, "c" * draw(st.integers(0, 6000)), draw(st.booleans())) for i in ids]})
        history.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    return history


@settings(max_examples=150, deadline=None)
@given(histories(), st.integers(1, 50), st.integers(0, 5000), st.integers(0, 2),
       st.one_of(st.none(), st.integers(100, 20000)))
def test_properties_pairing_identity_no_mutation(history, max_messages, max_chars, protect, max_tokens):
    options = CompactOptions(enabled=True, max_messages=max_messages, max_tool_result_chars=max_chars,
                             protect_recent_rounds=protect, max_tokens=max_tokens)
    before = copy.deepcopy(history)
    result_ = compact_messages(history, options)
    assert history == before  # never mutates
    assert protocol_errors(result_.messages) == []  # never orphans a tool_result
    report = result_.report
    if not report.changed:
        assert result_.messages is history
    else:
        assert result_.messages is not history
    assert len(result_.messages) == report.after == len(history) - len(report.dropped)
    assert result_.messages[-1] is history[-1] or result_.messages[-1]["role"] == history[-1]["role"]
    assert report.dropped == tuple(range(report.first_kept))
    for cut in report.truncated:
        assert cut.kept_chars < cut.original_chars
        assert cut.message_index >= report.first_kept
    if max_tokens is None:
        # Tail retention keeps at most max_messages, cutting at the earliest user-text message that makes
        # the copy fit; with no such message it drops nothing. (The assertion this replaces compared the
        # length with itself, so it could not fail.)
        n = len(history)
        window = range(max(n - max_messages, 0), n)
        fitting_cuts = [i for i in window if i > 0 and is_user_text(history[i])] if n > max_messages else []
        assert report.first_kept == (fitting_cuts[0] if fitting_cuts else 0)
        if fitting_cuts:
            assert len(result_.messages) <= max_messages


@pytest.mark.parametrize("n", [0, 1])
def test_empty_and_single(n):
    history = [user_text("x")][:n]
    assert compact_messages(history).messages is history


def test_seed_mode_behind_the_compactor_interface_sends_exactly_the_seed_result():
    """`--compact seed` is the seed article's compactMessages(): the same messages, described as a plan."""
    from tui_agent.core.compaction import SeedCompactor

    history = turns(14, result_chars=5000)
    expected = compact_messages(history, SEED).messages
    result = SeedCompactor(mode="seed").compact(history)
    assert result.messages == expected
    assert result.plan.mode == "seed" and result.plan.drop_until == len(history) - len(expected)
    assert all(c.kept_chars == 4000 for per in result.plan.cuts.values() for c in per)
