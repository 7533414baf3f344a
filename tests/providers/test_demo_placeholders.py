"""The demo model never reads a placeholder as content (issue 28 §3): it reported "guard.py (96 chars)" for a
masked Read and "gave 0 matching lines" for a masked Grep, and ranked no files once its line count was
masked. Like a real model, it fetches a result that left the request again; a result lost twice in one
turn (a window too small for it) is not fetched a third time, so a turn cannot loop."""

from __future__ import annotations

from pathlib import Path

from tui_agent.core.compaction.mask import placeholder_text
from tui_agent.core.messages import tool_result_block, user_text
from tui_agent.core.providers.base import ModelRequest, StreamDone
from tui_agent.core.providers.demo import DemoProvider

TOOLS = [{"name": n, "description": "", "input_schema": {"type": "object"}} for n in ("Glob", "Grep", "Read")]


def _call(k: int, name: str, tool_input: dict, text: str) -> list[dict]:
    return [{"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_demo_{k:03d}_1", "name": name,
                                               "input": tool_input}]},
            {"role": "user", "content": [tool_result_block(f"toolu_demo_{k:03d}_1", text)]}]


async def reply(provider: DemoProvider, messages: list[dict]) -> dict:
    done = [e async for e in provider.stream(ModelRequest("demo", "system", messages, TOOLS, 1_000))]
    return next(e for e in done if isinstance(e, StreamDone)).message


def workspace(tmp_path: Path) -> Path:
    (tmp_path / "big.py").write_text("x = 1\n" * 300)
    (tmp_path / "small.py").write_text("y = 2\n" * 10)
    return tmp_path


async def test_a_masked_line_count_is_counted_again_not_ranked_as_nothing(tmp_path):
    provider = DemoProvider(workspace=workspace(tmp_path), chosen=True)
    count = {"pattern": "^", "output_mode": "count", "head_limit": 0}
    messages = [user_text("what are the biggest files?"), *_call(1, "Glob", {"pattern": "**/*"}, "big.py\nsmall.py"),
                *_call(2, "Grep", count, placeholder_text("Grep", count, 1_600))]
    message = await reply(provider, messages)
    uses = [(b["name"], b["input"]) for b in message["content"] if b["type"] == "tool_use"]
    assert uses == [("Grep", count)], "the masked count is run again"
    text = " ".join(b.get("text", "") for b in message["content"])
    assert "could not measure" not in text


async def test_a_masked_read_is_read_again_never_reported_by_its_placeholder_size(tmp_path):
    provider = DemoProvider(workspace=workspace(tmp_path), chosen=True)
    read = {"file_path": "big.py"}
    messages = [user_text("what does big.py do?"), *_call(1, "Read", read, placeholder_text("Read", read, 1_800))]
    message = await reply(provider, messages)
    uses = [(b["name"], b["input"].get("file_path")) for b in message["content"] if b["type"] == "tool_use"]
    assert uses == [("Read", "big.py")]
    assert "chars)" not in " ".join(b.get("text", "") for b in message["content"])


async def test_a_result_lost_twice_is_not_fetched_a_third_time(tmp_path):
    provider = DemoProvider(workspace=workspace(tmp_path), chosen=True)
    count = {"pattern": "^", "output_mode": "count", "head_limit": 0}
    lost = placeholder_text("Grep", count, 1_600)
    messages = [user_text("what are the biggest files?"), *_call(1, "Glob", {"pattern": "**/*"}, "big.py"),
                *_call(2, "Grep", count, lost), *_call(3, "Grep", count, lost)]
    message = await reply(provider, messages)
    assert not [b for b in message["content"] if b["type"] == "tool_use" and b["name"] == "Grep"]


def test_a_recall_that_holds_no_line_of_the_file_is_followed_by_a_read():
    """`/init` answered "(the recall held no file lines)" after recalling AGENTS.md: the recall held only
    mentions of the path. The demo reads the file instead of quoting nothing."""
    from tui_agent.core.providers.demo_recall import recall_step
    from tui_agent.core.providers.demo_turn import Turn

    mentions = "--- #5 (dropped in your context; original follows) assistant text\nI keep AGENTS.md in mind."
    turn = Turn("update AGENTS.md", 1, [("Context", {"action": "recall", "search": "AGENTS.md"}, mentions, False)])
    assert recall_step(turn, ["AGENTS.md"], []) is None
    held = mentions + "\n--- #7 (masked)\n[result of Read(AGENTS.md)]\n     1\t# AGENTS.md\n     2\tthe rules"
    turn = Turn("update AGENTS.md", 1, [("Context", {"action": "recall", "search": "AGENTS.md"}, held, False)])
    text, uses = recall_step(turn, ["AGENTS.md"], [])
    assert not uses and "> the rules" in text and "no file lines" not in text


def test_the_demo_answers_from_its_own_note_when_the_counts_were_masked():
    """The tour in a grown repository: the turn alone passed the high mark, so its Grep count left the
    request before the answer. The demo had written the ranking down when it had it; it answers from that
    note (never from the placeholder, never "could not measure")."""
    from tui_agent.core.compaction.mask import CLEARED
    from tui_agent.core.providers.demo_turn import Turn, line_counts

    masked = ("Grep", {"pattern": "^", "output_mode": "count"}, f"[{CLEARED}: Grep ^ · 36,000 chars]", False)
    note = "By line count the largest are `src/a.py` (1,204 lines), `b.md` (3 lines); reading the heads of the two largest."
    assert line_counts(Turn("what are the biggest files?", 3, [masked], ("I'll list the files first.", note))) == \
        [("src/a.py", 1204), ("b.md", 3)]
    assert line_counts(Turn("what are the biggest files?", 3, [masked], ())) == []  # nothing kept: run it again


def test_the_overview_keeps_the_layout_it_wrote_down_when_the_count_left():
    """"What is in this repo?" in a grown repository: the count behind the folder sizes was masked before the
    answer; the folders come from the demo's own note, as it wrote them when it had the count."""
    from tui_agent.core.compaction.mask import CLEARED
    from tui_agent.core.providers.demo_answers import folder_note, layout_lines
    from tui_agent.core.providers.demo_turn import Turn

    count = ("Grep", {"pattern": "^", "output_mode": "count"}, "src/a.py:10\nsrc/b.py:5\ndocs/x.md:3\nREADME.md:2", False)
    listing = ("Glob", {"pattern": "*"}, "src\ndocs\nREADME.md", False)
    note = folder_note(Turn("what is in this repo?", 1, [listing, count]))
    assert note == "`src/` (2 files, 15 lines); `docs/` (1 file, 3 lines)"
    masked = (count[0], count[1], f"[{CLEARED}: Grep ^ · 48 chars]", False)
    lines = layout_lines(Turn("what is in this repo?", 3, [listing, masked], (f"The folders: {note}. Reading…",)))
    assert "- `src/`: 2 files, 15 lines" in lines and "- `docs/`: 1 file, 3 lines" in lines
    assert any("Loose files at the top level (1): `README.md`" in line for line in lines)
