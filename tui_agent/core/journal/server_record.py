"""The journal's record of what the server did on its own and why the cache missed (`server` records),
and the cache-diagnosis memory a resumed session needs (the last message id, what it left cached).

A resumed session shows the server's edits, compactions and cache misses where they happened (the ledger
is fed them again), and its next request names the last answer's id, so the API can still say why the
cache missed across the restart.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tui_agent.core import events as ev
from tui_agent.core.providers.server_report import AppliedEdit, CompactionUsage

SERVER = "server"  # {"what": "edited" | "missed", ...}: a ServerEdited or CacheMissed event


def server_fields(event: ev.ServerEdited | ev.CacheMissed) -> dict[str, Any]:
    """The record's fields (JSON-safe) for one event."""
    fields = asdict(event)
    fields["what"] = "edited" if isinstance(event, ev.ServerEdited) else "missed"
    return fields


def server_event(record: dict[str, Any]) -> ev.ServerEdited | ev.CacheMissed:
    """The event a `server` record holds; raises KeyError/TypeError/ValueError on a malformed one (the
    reader skips it with a warning)."""
    fields = {k: v for k, v in record.items() if k not in ("type", "at", "what")}
    if record["what"] == "edited":
        usage = fields.get("compaction_usage")
        fields["edits"] = tuple(AppliedEdit(**edit) for edit in fields.get("edits") or ())
        fields["compaction_usage"] = CompactionUsage(**usage) if isinstance(usage, dict) else None
        return ev.ServerEdited(**fields)
    if record["what"] == "missed":
        return ev.CacheMissed(**fields)
    raise ValueError(f"unknown server record {record['what']!r}")


def cache_fields(track: Any) -> dict[str, Any]:
    """What a usage record adds for the cache diagnosis (nothing when there is no message id yet)."""
    message_id = getattr(track, "message_id", "")
    return {"message_id": message_id, "cached": getattr(track, "cached", 0)} if message_id else {}
