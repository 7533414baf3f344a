"""`--print-outbound`: the exact JSON body of the next model call, without calling the model.

The body is built by the same code as a real call: the session's compacted next request (`core/agent/call.py`'s
`plan_call`, as the loop plans its call), turned into the wire body by the provider's own builder
(`Provider.outbound_body`: for Claude, `build_params` with its cache breakpoints from the plan's stable
prefix, plus the SDK's `stream: true`), so what is printed is what would be sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui_agent.core.agent.call import plan_call
from tui_agent.core.messages import user_text

if TYPE_CHECKING:
    from tui_agent.core.agent.session import Session


def next_outbound_body(session: "Session", prompt: str | None = None) -> dict[str, Any]:
    """The body of the next call; with `prompt`, of the call that prompt would start.

    The one call plan (`core/agent/call.py`) over the history, or over a copy with the prompt appended: the
    session's history is never touched, nothing is kept and nothing is journaled (no event is told).
    """
    history = session.history if prompt is None else [*session.history, user_text(prompt)]
    planned = plan_call(session.compactor, session.provider, session.system_prompt(), session.tools.schemas(),
                        history, session.next_call, keep=False)
    return session.provider.outbound_body(planned.request)


def format_body(body: dict[str, Any]) -> str:
    """Pretty JSON for people; `--print-outbound` prints exactly this (valid JSON, keys in send order)."""
    import json

    return json.dumps(body, ensure_ascii=False, indent=2)
