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
from tui_agent.core.journal.safe_read import as_int, opt_float, opt_int
from tui_agent.core.providers.server_report import AppliedEdit, CompactionUsage

SERVER = "server"  # {"what": "edited" | "missed", ...}: a ServerEdited or CacheMissed event


def server_fields(event: ev.ServerEdited | ev.CacheMissed) -> dict[str, Any]:
    """The record's fields (JSON-safe) for one event."""
    fields = asdict(event)
    fields["what"] = "edited" if isinstance(event, ev.ServerEdited) else "missed"
    return fields


def server_event(record: dict[str, Any]) -> ev.ServerEdited | ev.CacheMissed:
    """The event a `server` record holds, each field of its type and in bounds (`safe_read`); raises
    KeyError/TypeError/ValueError on a malformed one (the reader skips it with a warning). A field of the
    wrong type used to reach the meter, where a count of "12" or a list broke a sum or a format."""
    if record["what"] == "edited":
        usage = record.get("compaction_usage")
        return ev.ServerEdited(
            as_int(record["call"]), as_int(record["history_index"]),
            tuple(AppliedEdit(_text(edit["kind"]), as_int(edit["cleared"]), as_int(edit["tokens"]))
                  for edit in _list(record.get("edits"))),
            _flag(record.get("compacted", False)), _text(record.get("summary", "")),
            CompactionUsage(**{name: as_int(usage.get(name, 0)) for name in _USAGE}) if isinstance(usage, dict)
            else None, opt_int(record.get("since")))
    if record["what"] == "missed":
        source = record.get("source", "ours")
        if source not in ("api", "ours"):
            raise ValueError("an unknown source of a cache miss")
        return ev.CacheMissed(as_int(record["call"]), as_int(record["expected"]), as_int(record["read"]),
                              _text(record["reason"]), source, opt_int(record.get("from_message")),
                              _text(record.get("our_reason", "")), opt_float(record.get("extra_cost_usd")))
    raise ValueError(f"unknown server record {str(record['what'])[:40]!r}")


_USAGE = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("a text field holds something else")
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("a yes/no field holds something else")
    return value


def _list(value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise ValueError("the edits are not a list of objects")
    return value


def cache_fields(track: Any) -> dict[str, Any]:
    """What a usage record adds for the cache diagnosis (nothing when there is no message id yet)."""
    message_id = getattr(track, "message_id", "")
    return {"message_id": message_id, "cached": getattr(track, "cached", 0)} if message_id else {}
