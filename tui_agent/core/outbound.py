"""`--print-outbound`: the exact JSON body of the next model call, without calling the model.

The body is built by the same code as a real call: the session's compacted next request
(`Session.next_request`), turned into the wire body by the provider's own builder
(`Provider.outbound_body`: for Claude, `build_params` with its cache breakpoints, plus the SDK's
`stream: true`), so what is printed is what would be sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui_agent.core.messages import user_text

if TYPE_CHECKING:
    from tui_agent.core.session import Session


def next_outbound_body(session: "Session", prompt: str | None = None) -> dict[str, Any]:
    """The body of the next call; with `prompt`, of the call that prompt would start.

    The prompt is put on a copy of the history, which is swapped back before returning: nothing is
    appended and nothing is journaled (the listeners see no event).
    """
    history = session.history
    if prompt is not None:
        session.history = [*history, user_text(prompt)]
    try:
        request = session.next_request()
    finally:
        session.history = history
    return session.provider.outbound_body(request)


def format_body(body: dict[str, Any]) -> str:
    """Pretty JSON for people; `--print-outbound` prints exactly this (valid JSON, keys in send order)."""
    import json

    return json.dumps(body, ensure_ascii=False, indent=2)
