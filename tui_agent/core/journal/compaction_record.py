"""What the journal writes about compaction: a call record's plan fields, and the compactor's state.

The journal talks to the compactor only through `CompactorProtocol` (`export_state` / `import_state`):
the state is stored as the compactor exports it, and restoring it either succeeds or gives a one-line
warning (the request is then planned from the history, which is always complete).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui_agent.core import events as ev
    from tui_agent.core.agent.session import Session


def call_fields(event: "ev.CompactionReported") -> dict[str, Any]:
    """What a `call` record stores about its plan: the outbound estimate, the decisions' digest, the trace
    line, how many messages were sent and left out, and the compaction event (and its summary)."""
    plan = event.plan
    fields: dict[str, Any] = {
        "estimated_tokens": int(event.outbound_tokens),
        "plan_digest": plan.digest,
        "plan": plan.trace_line(),
        "sent": plan.sent_count,
        "dropped": plan.dropped_count,
    }
    if plan.event is not None:
        fields["event"] = plan.event.line()
        if plan.recap is not None and plan.recap.summary and "summary" in plan.event.kinds:
            fields["summary"] = plan.recap.summary
    return fields


def export_compaction_state(session: "Session") -> dict[str, Any]:
    """The compactor's sticky decisions as the file will hold them (a JSON round trip, so what is compared
    later is exactly what was written)."""
    return json.loads(json.dumps(session.compactor.export_state(), ensure_ascii=False))


def import_compaction_state(session: "Session", state: dict[str, Any] | None, mode: str | None = None) -> str | None:
    """Restore what `export_compaction_state` saved into a compactor of its strategy; a warning when it
    was refused (the session then plans from the history)."""
    if state is None:
        return None
    if mode and mode != session.compact_mode:
        try:
            session.switch_compaction(mode)
        except ValueError as error:
            return f"The saved compaction strategy {mode!r} is not available ({error}); the plan is recomputed."
    return session.compactor.import_state(session.history, state)
