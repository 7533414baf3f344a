"""One plural helper for every count-noun text (issue 28 §4): "1 old tool results were replaced", "maximum of
1 model calls" and "(1 lines, 2 bytes)" were each a count pasted before a plural noun."""

from __future__ import annotations

from tui_agent.core.compaction.plan import CompactEvent
from tui_agent.core.agent.planned_call import event_notice
from tui_agent.core.formats import plural


def test_plural_agrees_with_its_count_and_groups_thousands():
    assert plural(1, "call") == "1 call" and plural(0, "call") == "0 calls" and plural(1204, "line") == "1,204 lines"
    assert plural(2, "entry", "entries") == "2 entries"


def test_the_event_line_says_one_result_was_replaced():
    class Plan:
        event = CompactEvent(call=3, kinds=("mask",), reason="over the 12.9k high-water mark", tokens_before=14_000,
                             tokens_after=12_000, masked=1)
    line = event_notice(Plan())  # type: ignore[arg-type]
    assert "1 old tool result was replaced by placeholders" in line, line
