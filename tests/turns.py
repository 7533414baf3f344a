"""One turn driven from a test, and the scripted session most engine tests start from, defined once
(the copies in the journal, provider, permission, MCP, skill and demo tests are these)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from tui_agent.core import events as ev
from tui_agent.core.access.gate import PermissionDecision
from tui_agent.core.agent.session import Session
from tui_agent.core.providers.scripted import ScriptedProvider
from tui_agent.core.tools.base import ToolRegistry


async def turn_events(session: Session, prompt: str,
                      answers: Mapping[str, Any] | Callable[[ev.PermissionRequested], Any] | None = None) -> list[Any]:
    """Every event of one turn. A permission request is answered by `answers`: a callable of the request,
    or a decision per tool name (a tool it does not name is denied); none given: denied."""
    def decide(event: ev.PermissionRequested) -> Any:
        if callable(answers):
            return answers(event)
        return (answers or {}).get(event.tool_name, PermissionDecision.DENY)

    seen = []
    async for event in session.run_turn(prompt):
        if isinstance(event, ev.PermissionRequested):
            event.decision.set_result(decide(event))
        seen.append(event)
    return seen


def scripted_session(workspace: Path, replies: Iterable[Any] = (), tools: ToolRegistry | None = None,
                     **options: Any) -> Session:
    """A Session on the scripted provider (its `replies` in order), with `tools` (none by default)."""
    return Session(ScriptedProvider(replies=list(replies)), tools if tools is not None else ToolRegistry(),
                   workspace, **options)
