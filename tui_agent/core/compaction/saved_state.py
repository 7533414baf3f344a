"""The compactor's decisions carried across a process boundary: exported as JSON-safe data for the journal,
read back over the same history so a resumed session sends the request the old process would have sent.

Its own concept because reading back is distrust, not planning: the data may be malformed, stale or
forged, so it is checked (`CompactState.problems`) against the history and refused with a one-line
warning, the compactor left as a fresh one's, rather than ever raising or sending an invalid request.
The compactor (`compactor.py`) orders a call's steps; its `export_state`/`import_state` are these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from tui_agent.core.compaction.facts import Facts, Rerunnable
from tui_agent.core.compaction.layout import Layout
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.state import CompactState
from tui_agent.core.messages import Message


class Saveable(Protocol):
    """The compactor as saving and restoring sees it (a Protocol: the compactor imports this module)."""

    state: CompactState
    facts: Facts
    layout: Layout
    tokens: Any
    policy: CompactPolicy
    tool_rerunnable: Rerunnable | None

    def _fresh(self) -> None: ...

    def preview(self, history: Sequence[Message], call: int | None = None) -> Any: ...


def export_state(self: Saveable) -> dict:
    """The decisions as JSON-safe data (`CompactState.to_json`, with the estimator's measurements)."""
    learned = self.state.learned_window
    return self.state.evolve(tokens=self.tokens.export(),
                             learned_window=learned if learned == self.policy.context_window else None).to_json()


def import_state(self: Saveable, history: Sequence[Message], data: Mapping[str, Any]) -> str | None:
    """Load `export_state`'s data over the same history: the next request is the one the old process
    would have sent. None when restored; a one-line warning when refused (malformed, stale or forged:
    `CompactState.problems`), and then the request is planned from the history. Never raises."""
    tokens, policy = self.tokens.export(), self.policy
    try:
        facts = Facts(self.tool_rerunnable)
        facts.sync(history)
        state = CompactState.from_json(data, history, facts)
        learned = state.learned_window
        if learned is not None and 0 < learned < self.policy.context_window:
            self.policy = replace(self.policy, context_window=learned)
        _load(self, history, state, facts)
        problems = state.problems(history, lambda: (self.layout.out, self.preview(history, state.calls + 1).messages)
                                  if history and not state.replaced else ())
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError, RecursionError) as error:
        _forget(self, tokens, policy)
        said = " ".join(str(error).split())[:120]  # (a forged state's message can quote anything)
        return f"The saved compaction state is unreadable ({type(error).__name__}: {said}); planned from the history."
    if problems:
        _forget(self, tokens, policy)
        return f"The saved compaction state would send an invalid request ({problems}); planned from the history."
    return None


def _load(self: Saveable, history: Sequence[Message], state: CompactState, facts: Facts) -> None:
    self._fresh()
    self.state = state
    if state.replaced:  # like the old compactor: forgotten at the next call (it sees /clear then)
        self.tokens.restore(dict(state.tokens))
        self.tokens.clear()
        return
    self.facts = facts
    self.layout.rebuild(state, history, facts, self.tokens, self.policy)
    self.tokens.restore(dict(state.tokens))


def _forget(self: Saveable, tokens: dict, policy: CompactPolicy) -> None:
    """Back to a fresh compactor's decisions; the estimator as it was before the refused import."""
    self.policy = policy
    self.state = CompactState()
    self._fresh()
    self.tokens.restore(tokens)
