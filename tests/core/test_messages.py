"""Message helpers: API-clean outbound dicts, unknown blocks untouched, and the protocol checker itself."""

from __future__ import annotations

from tui_agent.compact import CompactOptions, compact_messages
from tui_agent.core.messages import clean_message, protocol_errors, tool_result_block, user_text
from tui_agent.core.tokens import IMAGE_TOKENS, message_tokens

THINKING = {"type": "thinking", "thinking": "Let me think.", "signature": "sig=="}
FUTURE = {"type": "server_tool_use_v9", "id": "x", "payload": {"a": 1}}


def test_clean_message_drops_sdk_extras_but_keeps_unknown_blocks_untouched():
    dumped = {"role": "assistant", "id": "msg_1", "model": "claude", "stop_reason": "end_turn", "content": [
        {"type": "text", "text": "hi", "citations": None},
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}, "caller": None},
        THINKING, FUTURE]}
    out = clean_message(dumped)
    assert out == {"role": "assistant", "content": [
        {"type": "text", "text": "hi"},
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}},
        THINKING, FUTURE]}
    assert out["content"][3] is FUTURE


def test_thinking_and_unknown_blocks_pass_through_compaction():
    history = [user_text("q"), {"role": "assistant", "content": [THINKING, FUTURE, {
        "type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
        {"role": "user", "content": [tool_result_block("t1", "x" * 9000)]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    out = compact_messages(history, CompactOptions(protect_recent_rounds=0)).messages
    assert out[1] is history[1]
    assert out[2]["content"][0]["content"].startswith("x" * 4000)


def test_is_error_false_is_not_sent():
    message = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "c", "is_error": False}]}
    assert "is_error" not in clean_message(message)["content"][0]


def test_protocol_errors_catches_what_the_api_rejects():
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "Read", "input": {}}]}
    answer = {"role": "user", "content": [tool_result_block("a", "ok")]}
    assert protocol_errors([user_text("q"), use, answer]) == []
    assert protocol_errors([use, answer])[0] == "first message is not from the user"
    assert "not answered" in protocol_errors([user_text("q"), use, user_text("again")])[0]
    assert "has no tool_use" in protocol_errors([user_text("q"), answer])[0]
    mixed = {"role": "user", "content": [{"type": "text", "text": "hm"}, tool_result_block("a", "ok")]}
    assert any("must come first" in e for e in protocol_errors([user_text("q"), use, mixed]))


def test_image_blocks_cost_tokens():
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    assert message_tokens({"role": "user", "content": [image]}) >= IMAGE_TOKENS


def test_protocol_errors_is_strict_about_a_trailing_unanswered_tool_use():
    """A history that ends in an unanswered tool_use gets a 400 on the next prompt (issue 9, item 7)."""
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]}
    assert any("unanswered" in e for e in protocol_errors([user_text("q"), use]))
    assert protocol_errors([user_text("q"), use], allow_pending=True) == []  # a list still being built


def test_protocol_errors_catches_blank_text_and_repeated_tool_use_ids():
    blank = {"role": "assistant", "content": [{"type": "text", "text": " \n"}]}
    assert any("non-whitespace" in e for e in protocol_errors([user_text("q"), blank]))
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}] * 2}
    answer = {"role": "user", "content": [tool_result_block("t1", "x")]}
    assert any("used twice" in e for e in protocol_errors([user_text("q"), use, answer]))


def test_assemble_content_drops_blank_text_and_makes_ids_unique():
    from tui_agent.core.messages import assemble_content

    content = [{"type": "text", "text": "\n\n"}, {"type": "tool_use", "id": "c", "name": "R", "input": {}},
               {"type": "tool_use", "id": "c", "name": "R", "input": {}}, {"type": "tool_use", "id": "", "name": "R", "input": {}}]
    out = assemble_content(content, {"c_2"})
    assert [b["id"] for b in out] == ["c", "c_3", "toolu_unnamed_2"]
    assert assemble_content([{"type": "text", "text": "  "}]) == [{"type": "text", "text": "(no content)"}]
