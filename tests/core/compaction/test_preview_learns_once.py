"""A preview learns the history's messages for the compact after it: a resumed long session plans its
next request twice (the panel's preview, then the call), and each learned every message again."""

from __future__ import annotations

from tui_agent.compact import Compactor, CompactPolicy
from tui_agent.core.compaction import facts as facts_module
from tui_agent.core.messages import user_text


def test_a_preview_then_the_compact_learn_each_message_once(monkeypatch):
    learned = []
    real = facts_module.facts_of
    monkeypatch.setattr(facts_module, "facts_of", lambda message, chars=None: learned.append(1) or real(message, chars))
    history = [user_text(f"m{i}") if i % 2 == 0 else {"role": "assistant", "content": [{"type": "text", "text": f"a{i}"}]}
               for i in range(2_001)]
    compactor = Compactor(CompactPolicy(context_window=200_000, max_output_tokens=8_000, enabled=True), baseline_tokens=500)
    preview = compactor.preview(history, 1)
    sent = compactor.compact(history, 1)
    assert len(learned) == len(history)
    assert preview.messages == sent.messages and preview.plan.outbound_indices == sent.plan.outbound_indices


def test_a_preview_of_another_conversation_leaves_the_compactors_facts_alone():
    compactor = Compactor(CompactPolicy(context_window=200_000, max_output_tokens=8_000, enabled=True), baseline_tokens=500)
    first = [user_text("one")]
    compactor.compact(first, 1)
    other = [user_text("another conversation"), {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
             user_text("go on")]
    compactor.preview(other, 2)
    assert compactor.facts.first is first[0] and len(compactor.facts.messages) == 1
