"""The one place the journal touches compaction: what a call record says about its plan, and the
compactor's sticky state saved and restored.

Compaction is being reshaped (a sticky `Compactor` per session, `CompactionReported.plan`), so this
module reads both shapes defensively and nothing else in the journal knows either. A Session without a
`compactor` (or with one that has no `export_state`) has no sticky state to save.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui_agent.core import events as ev
    from tui_agent.core.session import Session


def call_fields(event: "ev.CompactionReported") -> dict[str, Any]:
    """What a `call` record stores about the compaction of that call: the plan's stable digest and
    summary when the event carries a plan, else the report's numbers; the outbound estimate always."""
    fields: dict[str, Any] = {"estimated_tokens": int(event.outbound_tokens)}
    plan = getattr(event, "plan", None)
    if plan is not None:
        digest = getattr(plan, "digest", None)
        if digest is not None:
            fields["plan_digest"] = str(digest() if callable(digest) else digest)
        summary = getattr(plan, "trace_line", None)
        if callable(summary):
            fields["plan"] = _json_safe(summary())
        for name in ("sent_count", "dropped_count"):
            value = getattr(plan, name, None)
            if isinstance(value, int):
                fields[name.replace("_count", "")] = value
        compaction = getattr(plan, "event", None)  # a compaction event happened at this call
        if compaction is not None and callable(getattr(compaction, "line", None)):
            fields["event"] = str(compaction.line())
            ledger = getattr(plan, "ledger", None)
            if ledger is not None and getattr(ledger, "summary", None) and "summary" in compaction.kinds:
                fields["summary"] = str(ledger.summary)
        return fields
    report = getattr(event, "report", None)
    if report is not None:
        fields["plan"] = {
            "first_kept": report.first_kept,
            "dropped": len(report.dropped),
            "truncated": len(report.truncated),
            "tokens_after": report.tokens_after,
            "over_budget": report.over_budget,
        }
    return fields


def export_compaction_state(session: "Session") -> dict[str, Any] | None:
    """The compactor's sticky decisions (cuts, masks, drops, summaries, pins, excludes) as JSON-safe
    data, or None when the session has no compactor (nothing sticky to save)."""
    compactor = getattr(session, "compactor", None)
    export = getattr(compactor, "export_state", None)
    if not callable(export):
        return None
    return _json_safe(export())


def compaction_mode(session: "Session") -> str | None:
    """The strategy (v2, v1, seed, off) whose state is saved: a resume must restore it into the same kind."""
    mode = getattr(session, "compact_mode", None)
    return str(mode) if mode is not None else None


def import_compaction_state(session: "Session", state: dict[str, Any] | None, mode: str | None = None) -> str | None:
    """Restore what `export_compaction_state` saved (switching to its strategy first); returns a warning
    when it could not be restored (the session then plans from the history, which is still complete)."""
    if state is None:
        return None
    switch = getattr(session, "switch_compaction", None)
    if mode and compaction_mode(session) not in (None, mode) and callable(switch):
        try:
            switch(mode)
        except Exception as error:  # noqa: BLE001
            return f"The saved compaction strategy {mode!r} is not available ({error}); the plan is recomputed."
    compactor = getattr(session, "compactor", None)
    restore = getattr(compactor, "import_state", None)
    if not callable(restore):
        return "The journal has compaction decisions but this session has no compactor; they were not restored."
    try:
        import inspect

        if len(inspect.signature(restore).parameters) >= 2:
            restore(session.history, state)  # the Compactor rebuilds its decisions over the history
        else:
            restore(state)
    except Exception as error:  # noqa: BLE001 - a bad snapshot must not stop the resume
        return f"The saved compaction decisions could not be restored ({error}); the plan is recomputed."
    return None


def _json_safe(value: Any) -> Any:
    """Round-trip through JSON so what is compared later is exactly what the file holds."""
    import json

    return json.loads(json.dumps(value, ensure_ascii=False, default=str))
