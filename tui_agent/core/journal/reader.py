"""Read a journal back: the header, the history and the state needed to continue exactly where it was.

Robust to what a crash or a hand edit leaves: a line that is not JSON (a record cut short by `kill -9`,
a stray edit) is skipped with a warning naming its line; so is a record of an unknown type or shape.
A file with no header, or written by a newer format version, is refused with a `JournalError` that says
what to do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tui_agent.core import events as ev
from tui_agent.core.journal import records as rec
from tui_agent.core.journal.server_record import SERVER, server_event
from tui_agent.core.journal.safe_read import (
    NotFinite,
    as_float,
    as_int,
    check_message,
    loads_lines,
    opt_float,
    opt_int,
    opt_str,
    out_of_bounds,
    read_journal_bytes,
)
from tui_agent.core.journal.state_delta import StateChain
from tui_agent.core.messages import Message


@dataclass
class CallRecord:
    call: int
    model: str
    estimated_tokens: int
    history_len: int
    plan_digest: str | None = None
    plan: str | None = None  # the plan's one-line summary
    sent: int | None = None  # history messages sent / left out by this call
    dropped: int | None = None
    event: str | None = None  # the compaction event of this call, in words
    summary: str | None = None  # the summary the summary tier wrote at this call
    usage: ev.Usage | None = None
    cost_usd: float | None = None
    server: list[str] = field(default_factory=list)  # what the server did at this call, why its cache missed
    undone: bool = False  # its event was taken back (`/undo-compaction`): listed, not counted


@dataclass
class JournalLoad:
    path: Path
    header: rec.Header
    history: list[Message] = field(default_factory=list)
    usage: list[ev.Usage] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    permissions: list[dict[str, str]] = field(default_factory=list)
    model: str = ""
    provider: str = ""
    calls_made: int = 0
    calibration: float = 1.0
    compaction_state: dict[str, Any] | None = None
    compaction_mode: str | None = None
    cleared_to: str | None = None  # /clear continued the conversation in this session
    last_activity: str = ""
    warnings: list[str] = field(default_factory=list)
    states: StateChain = field(default_factory=StateChain, repr=False)  # the state records, whole and changes
    server_events: list[ev.ServerEdited | ev.CacheMissed] = field(default_factory=list)  # `server` records
    pings: list[ev.CacheKeptWarm] = field(default_factory=list)  # keep-warm pings: their price is the session's
    idle: ev.IdleChosen | None = None  # the idle policy's last choice (`idle` records; the meter shows it)
    idle_event: str | None = None  # an idle compaction's words that no call record carries yet (it quit first)
    last_message_id: str = ""  # the last answer's id and what it left cached (the cache diagnosis goes on)
    cached: int = 0

    @property
    def session_id(self) -> str:
        return self.header.session_id


def read_journal(path: Path) -> JournalLoad:
    """Parse `path`; raises `JournalError` (one line) when it is not a usable journal at all (not a
    regular file, over the size cap, no header). A line that cannot be used is skipped with a warning."""
    raw = read_journal_bytes(path)
    load: JournalLoad | None = None
    early_warnings: list[str] = []
    name = Path(path).name  # once: a Path per line was a third of reading 200,000 small records
    numbered = [(number, line) for number, line in enumerate(raw.split(b"\n"), start=1) if line.strip()]
    for (number, line), record in zip(numbered, loads_lines([line for _, line in numbered])):
        where = f"{name} line {number}"
        problem = _unreadable(line, record)
        if problem is not None:
            (load.warnings if load else early_warnings).append(f"{where}: {problem} (skipped)")
            continue
        if load is None:
            if record.get("type") != rec.HEADER:
                raise rec.JournalError(f"{path} is not a tui-agent session journal (no header record)")
            load = _start(Path(path), record)
            load.warnings += early_warnings
            continue
        try:
            _apply(load, record)
        except (KeyError, TypeError, ValueError, ArithmeticError, RecursionError) as error:
            load.warnings.append(f"{where}: a {_kind(record)!r} record is malformed ({_said(error)}; skipped)")
    if load is None:
        raise rec.JournalError(f"{path} is empty or not a tui-agent session journal")
    load.compaction_state, broken = load.states.result()
    if broken:
        load.warnings.append(f"{Path(path).name}: {broken}; the next request is planned from the history")
    return load


def _unreadable(line: bytes, record: Any) -> str | None:
    """Why a parsed line is no record the reader may use, or None."""
    if isinstance(record, NotFinite):
        return f"holds a number no journal writes ({record})"
    if isinstance(record, ValueError):
        return "not a complete JSON record"
    if not isinstance(record, dict):
        return "not a JSON object"
    if record.get("type") != rec.MESSAGE:
        bounds = out_of_bounds(line, record)
        if bounds is not None:
            return f"a {_kind(record)!r} record holds {bounds}"
    return None


def _said(error: Exception) -> str:
    """An error in one warning line: short whatever the record held (a 4,000-digit number, a long key)."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 120 else text[:120] + "…"


def _kind(record: dict[str, Any]) -> str:
    kind = record.get("type")
    return kind[:30] if isinstance(kind, str) else "record"


def _start(path: Path, record: dict[str, Any]) -> JournalLoad:
    version = record.get("format")
    if not isinstance(version, int):
        raise rec.JournalError(f"{path}: the header has no format version")
    if version > rec.FORMAT_VERSION:
        raise rec.JournalError(
            f"{path} was written by a newer tui-agent (journal format {version}; this version reads format "
            f"{rec.FORMAT_VERSION} and older). Upgrade tui-agent to open it.")
    header = rec.Header.from_record(record)
    return JournalLoad(path=path, header=header, model=header.model, provider=header.provider,
                       last_activity=header.started)


def _apply(load: JournalLoad, record: dict[str, Any]) -> None:
    kind = record["type"]
    if isinstance(record.get("at"), str):
        load.last_activity = record["at"]
    if kind == rec.MESSAGE:
        index, message = as_int(record["index"]), record["message"]
        check_message(message)
        if index < len(load.history):
            raise ValueError(f"message {index} was already read")
        if index > len(load.history):
            load.warnings.append(f"{load.path.name}: messages {len(load.history)}–{index - 1} are missing")
        load.history.append(message)
    elif kind == rec.CALL:
        load.calls.append(CallRecord(as_int(record["call"]), str(record.get("model", load.model)),
                                     as_int(record.get("estimated_tokens", 0)), as_int(record.get("history_len", 0)),
                                     opt_str(record.get("plan_digest")), _text_or_none(record.get("plan")),
                                     opt_int(record.get("sent")), opt_int(record.get("dropped")),
                                     opt_str(record.get("event")), opt_str(record.get("summary"))))
        load.calls_made = max(load.calls_made, load.calls[-1].call)
        load.idle_event = None  # (a call carries the idle event's words that came before it)
    elif kind == rec.USAGE:
        purpose: Literal["call", "summary"] = "summary" if record.get("purpose") == "summary" else "call"
        usage = ev.Usage(as_int(record["call"]), as_int(record["input_tokens"]), as_int(record["output_tokens"]),
                         as_int(record.get("cache_creation_input_tokens", 0)),
                         as_int(record.get("cache_read_input_tokens", 0)), purpose,
                         as_int(record.get("cache_write_1h", 0)))
        calibration = as_float(record.get("calibration", load.calibration))
        cost = opt_float(record.get("cost_usd"))
        load.usage.append(usage)
        load.calibration = calibration
        load.calls_made = max(load.calls_made, as_int(record.get("calls", usage.call)))
        if isinstance(record.get("message_id"), str):
            load.last_message_id, load.cached = record["message_id"], as_int(record.get("cached", 0))
        for call in reversed(load.calls) if purpose == "call" else ():  # a summary's usage is no call's
            if call.call == usage.call:
                call.usage, call.cost_usd = usage, cost
                break
    elif kind == rec.PING:
        load.pings.append(ev.CacheKeptWarm(  # (the last three: since round 5; 0 in older journals)
            as_int(record.get("ping", 1)), 0, 0.0, as_int(record.get("input_tokens", 0)),
            as_int(record.get("output_tokens", 0)), as_int(record.get("cache_creation_input_tokens", 0)),
            as_int(record.get("cache_read_input_tokens", 0)), as_int(record.get("cache_write_1h", 0)),
            expected=as_int(record.get("expected", 0)), max_tokens=as_int(record.get("max_tokens", 0)),
            after_call=as_int(record.get("after_call", 0))))
    elif kind == rec.IDLE:
        load.idle = _idle_chosen(record)
    elif kind == rec.IDLE_EVENT:
        load.idle_event = opt_str(record.get("line"))
    elif kind == rec.COMPACTION_STATE:
        if "delta" in record:  # a change of the state before it (older journals hold whole states only)
            load.states.delta(record["delta"], record.get("base"), record.get("check"))
        else:
            load.states.whole(record["state"], record.get("check"))
        load.compaction_mode = record.get("mode")
    elif kind == SERVER:
        told = server_event(record)
        load.server_events.append(told)
        for call in reversed(load.calls):  # the call's own row says it too (export)
            if call.call == told.call:
                call.server.append(told.line().split(" · ", 1)[-1])
                break
    elif kind == rec.PERMISSION:
        load.permissions.append({"id": str(record["id"]), "tool": str(record["tool"]),
                                 "decision": str(record["decision"])})
    elif kind == rec.MODEL:
        load.model, load.provider = str(record["model"]), str(record.get("provider", load.provider))
    elif kind == rec.CLEARED:
        load.cleared_to = str(record["next"])
    elif kind == rec.COMPACTION_CHANGE and record.get("action") == "undo-event":
        for call in reversed(load.calls):  # that call's event was taken back: it no longer counts
            if call.call == record.get("index") and call.event:
                call.undone = True
                break
    elif kind in (rec.RESUMED, rec.COMPACTION_CHANGE, rec.LEGACY_CACHE_PREFIX):
        # markers for people and replay; the state that matters is in compaction_state (the cache prefix
        # older versions recorded is the plan's own now: such lines are read past)
        pass
    else:
        raise ValueError(f"unknown record type {kind!r}")


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _idle_chosen(record: dict) -> ev.IdleChosen:
    """An `idle` record: what the idle policy chose and what each choice was priced (None: not one)."""
    ping, compact, cold = (math.inf if record.get(name) is None else as_float(record[name])
                           for name in ("ping", "compact", "cold"))
    return ev.IdleChosen(str(record["choice"]), str(record.get("mode", "auto")), ping, compact, cold,
                         as_float(record.get("waited", 0.0)), as_float(record.get("back", 0.0)),
                         record.get("usd") is not False, after_call=as_int(record.get("after_call", 0)))
