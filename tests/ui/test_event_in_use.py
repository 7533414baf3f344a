"""The event view says how much of what is in use the event kept (compaction 4's quality number)."""

from __future__ import annotations

from tests.core.compaction.test_keep_for_use import POLICY, session
from tui_agent.core.agent.budget import EventEntry
from tui_agent.core.compaction import Compactor
from tui_agent.core.messages import user_text
from tui_agent.ui.screens.event_view import loss_report_text


def test_the_event_view_shows_the_share_of_what_is_in_use_that_was_kept():
    history = session(40) + [{"role": "assistant", "content": [{"type": "text", "text": "fix parse_config in "
                                                                "src/core_module.py"}]}, user_text("go on")]
    result = Compactor(POLICY, baseline_tokens=1_000).compact(history)
    text = loss_report_text(EventEntry(result.plan.event, result.plan, result.messages), lambda i: f"message {i}")
    kept, used = result.plan.event.loss.in_use
    assert used and f"In use: {kept * 100 // used} % kept ({kept} of the {used} identifiers" in text
