"""A replayed session as a `Session` a face can draw (the budget panel, the rows) but never call a model with.

Apart from `replay.py` (how the steps are made): the faces that step through a recording need a session to
hand the panel, and that session's provider must refuse every call (a replay sends nothing).
"""

from __future__ import annotations

from pathlib import Path

from tui_agent.core.recordings.replay import Replay


def replay_session(replay: Replay, workspace: Path | None = None):
    """A Session over the replayed history that can never call a model (its provider refuses), for a face
    that draws the budget panel from steps. Its history is the whole recorded one, which nothing edits (a
    face shows it up to the call it steps to)."""
    from tui_agent.core.providers.base import Provider, ProviderError
    from tui_agent.core.agent.session import Session
    from tui_agent.core.tools.base import ToolRegistry

    class ReplayProvider(Provider):
        """Stands in for the recorded model: its name and window for the panel, and no calls."""

        async def stream(self, request):  # noqa: ANN001
            raise ProviderError("replay mode: no model is called")
            yield  # an async generator, like every provider's stream

    provider = ReplayProvider(model=replay.model or "recorded", context_window=replay.policy.context_window,
                              max_output_tokens=replay.policy.max_output_tokens, name="replay", reports_usage=True)
    return Session(provider, ToolRegistry(), workspace or Path.cwd(), compact_policy=replay.policy,
                   history=list(replay.history))
