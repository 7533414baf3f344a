"""The extractive summary (the demo's) honours the `/compact` focus (issue 28 §3): "keep the cache clock
details" named no cache_clock file; now the files and the lines that hold the focus come first."""

from __future__ import annotations

from tui_agent.core.compaction.summary import extractive_summary, summary_messages
from tui_agent.core.messages import tool_result_block, user_text


def _read(k: int, path: str, text: str) -> list[dict]:
    return [{"role": "assistant", "content": [{"type": "tool_use", "id": f"r{k}", "name": "Read",
                                               "input": {"file_path": path}}]},
            {"role": "user", "content": [tool_result_block(f"r{k}", text)]}]


def test_the_focus_names_its_file_and_facts_first():
    history = [user_text("how does the app price calls?"),
               *_read(1, "tui_agent/core/cache_clock.py", "1\t\"\"\"When a live session's cache goes cold.\n"
                      "2\tTTL_SECONDS = 300  # the cache clock runs five minutes\n3\timport time"),
               *[m for k in range(2, 30) for m in _read(k, f"tui_agent/other_{k}.py", f"1\tother module {k}")],
               {"role": "assistant", "content": [{"type": "text", "text": "Prices come from prices.py."}]}]
    summary = extractive_summary(summary_messages(history, 10, focus="keep the cache clock details"))
    focus = summary.splitlines()[1]
    assert focus.startswith("Focus (cache clock):") and "tui_agent/core/cache_clock.py" in focus, summary
    assert "- TTL_SECONDS = 300 # the cache clock runs five minutes" in summary
    assert "import time" not in summary
    plain = extractive_summary(summary_messages(history, 10))
    assert "Focus" not in plain and "cache_clock.py" not in plain  # only the last 20 files without a focus
