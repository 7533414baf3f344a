"""The journal writer: a `Session` listener that appends one JSON line per record.

Each record reaches the operating system (flushed) before the listener returns, so a killed process loses
nothing written; the file is fsynced once a turn has closed (and when it is closed), so only a power cut can
cost the turn in progress. An fsync per record (six per model call) was the biggest cost per call of a long
turn (bench/bench_turn.py): Claude Code does not sync its session files at all.

It follows the history by index rather than by event: on every event it first writes the history
entries it has not written yet. The loop's own repairs after a cancel or an error (a partial reply marked
interrupted, synthetic tool_results) are appended without an event of their own; `TurnClosed` picks them
up. So a `kill -9` loses at most what was not yet in the history: the message in flight.

Secrets: the journal never sees request headers or the environment. As a second line of defence every
line is redacted before it is written (`redact.py` says exactly what is caught: secret-named variables'
values, key shapes, `Bearer` tokens, private key blocks).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from tui_agent import __version__
from tui_agent.core import events as ev
from tui_agent.core.journal import records as rec
from tui_agent.core.journal.compaction_record import call_fields, export_compaction_state
from tui_agent.core.journal.server_record import SERVER, cache_fields, server_fields
from tui_agent.core.journal.journal_file import JournalFile, JournalLocked, lock_file  # noqa: F401
from tui_agent.core.redact import REDACTED, known_secrets, secret_values  # noqa: F401
from tui_agent.core.journal.state_delta import JournalStates
from tui_agent.core.paths import journal_path

if TYPE_CHECKING:
    from tui_agent.core.agent.session import Session


@dataclass
class Journal:
    """Keeps `session`'s journal: install with `start_journal`. The file (and its header) is created with
    the first record, so a TUI opened and closed without a prompt leaves no empty session behind."""

    session: "Session"
    path: Path
    secrets: list[str] = field(default_factory=list)
    written: int = 0  # history entries already in the file
    parent: str | None = None  # header fields of a file not created yet
    source: str | None = None
    problem: str | None = None  # set when a write failed (disk full...): journaling stopped
    problem_shown: bool = False
    file: JournalFile | None = None
    # A transcript view (`--transcript`): its loaded messages are saved only once the user sends something
    # (the history grows past them), so looking at a transcript leaves no session behind.
    view_until: int = 0
    _compaction_state: str | None = None
    _idle_event: str | None = None  # an idle compaction's words, for the call whose request it made
    _states: JournalStates = field(default_factory=JournalStates)  # deltas since the last whole state

    def __call__(self, event: Any) -> None:
        if self.problem is not None:
            return
        try:
            self._record(event)
        except Exception as error:  # noqa: BLE001 - disk full, or a bug: say so once, never break the turn
            what = str(error) if isinstance(error, OSError) else f"{type(error).__name__}: {error}"
            self.problem = f"The session journal {self.path} could not be written ({what}); journaling stopped."
            self.close()

    def carry_idle_event(self, line: str | None) -> None:
        """A resumed session's idle event that no call carried yet (the old process quit before its next
        call): the next call's record names it, as the old process's would have."""
        self._idle_event = line

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None

    def _record(self, event: Any) -> None:
        if isinstance(event, ev.SessionCleared):
            self._start_next_file()
            return
        if self._said_nothing():
            return
        if self.view_until and self.file is None and len(self.session.history) <= self.view_until:
            return  # still only a view of the transcript
        self.sync_messages()
        match event:
            case ev.CompactionReported():
                fields = call_fields(event)
                if self._idle_event and "event" not in fields:  # made while idle: this call's request
                    fields["event"] = self._idle_event
                self._idle_event = None
                self._append(rec.CALL, call=event.call, model=self.session.model, history_len=event.history_len,
                             system_tokens=event.system_tokens, tools_tokens=event.tools_tokens, **fields)
                self.sync_compaction_state()
            case ev.Usage():
                self._append(rec.USAGE, call=event.call, input_tokens=event.input_tokens,
                             output_tokens=event.output_tokens,
                             cache_creation_input_tokens=event.cache_creation_input_tokens,
                             cache_read_input_tokens=event.cache_read_input_tokens,
                             cost_usd=_cost(self.session.model, event),
                             calibration=self.session.calibration, calls=self.session.state.calls,
                             **_purpose(event), **_hour_writes(event),
                             **cache_fields(self.session.state.cache))
            case ev.CacheKeptWarm():  # its price is the session's (a resumed meter counts it), never a call
                self._append(rec.PING, ping=event.ping, input_tokens=event.input_tokens,
                             output_tokens=event.output_tokens,
                             cache_creation_input_tokens=event.cache_creation_input_tokens,
                             cache_read_input_tokens=event.cache_read_input_tokens,
                             cost_usd=_cost(self.session.model, event), **_hour_writes(event),
                             after_call=event.after_call, expected=event.expected, max_tokens=event.max_tokens)
            case ev.IdleChosen(ahead=False):  # what it chose, and what each choice was priced (None: not one)
                self._append(rec.IDLE, choice=event.choice, mode=event.mode, ping=_finite(event.ping),
                             compact=_finite(event.compact), cold=_finite(event.cold), waited=round(event.waited, 1),
                             back=round(event.back, 4), usd=event.usd, after_call=event.after_call)
            case ev.ServerEdited() | ev.CacheMissed():
                self._append(SERVER, **server_fields(event))
            case ev.PermissionAnswered():
                self._append(rec.PERMISSION, id=event.id, tool=event.tool_name, decision=event.decision)
            case ev.ModelSwitched():
                self._append(rec.MODEL, old=event.old_model, model=event.model, provider=event.provider)
            case ev.CompactionChanged():
                self._append(rec.COMPACTION_CHANGE, action=event.action, index=event.index, on=event.on)
            case ev.NextRequestChanged():
                self.sync_compaction_state()  # every change of the next request is saved (`/compact` too)
                if event.why == "idle compact" and event.plan.plan.event is not None:
                    self._idle_event = event.plan.plan.event.line()
                    self._append(rec.IDLE_EVENT, line=self._idle_event)  # a process may quit before that call
            case ev.TurnClosed():
                if self.file is not None:
                    self.file.sync()  # the turn is on disk for good

    # -- pieces ------------------------------------------------------------------------------
    def _said_nothing(self) -> bool:
        """No file yet and an empty history (a blank prompt never enters it): nothing is written, so a
        session that said nothing leaves no file, no listing entry and no parent link. Its
        header, written with the first message, carries the model and state of that moment."""
        return self.file is None and not self.session.history

    def _append(self, kind: str, flush: bool = True, **fields: Any) -> None:
        self.open().append({"type": kind, "at": rec.now_iso(), **fields}, flush)

    def open(self) -> JournalFile:
        """The file, created with its header on first use (existing files are appended to)."""
        if self.file is None:
            existed = self.path.exists() and self.path.stat().st_size > 0
            header = None if existed else _header(self.session, self.parent, self.source).record()
            self.file = JournalFile(self.path, self.secrets, header)  # never seen without its header
        return self.file

    def sync_messages(self) -> None:
        history = self.session.history
        if self.written >= len(history):
            return
        while self.written < len(history):
            self._append(rec.MESSAGE, flush=False, index=self.written, message=history[self.written])
            self.written += 1
        self.open().flush()  # one write for the batch (usually a single message)

    def sync_compaction_state(self) -> None:
        """The compactor's state, when it differs from the one written last: as a change of that one, or
        whole when the changes since the last whole state outweigh it (`state_delta.py`)."""
        state = export_compaction_state(self.session)
        key = rec.dumps(state)
        if key != self._compaction_state:
            self._append(rec.COMPACTION_STATE, **self._states.record(state, key), mode=self.session.compact_mode)
            self._compaction_state = key

    def _start_next_file(self) -> None:
        """`/clear`: close this file with a link to the next session, which links back as its parent.
        A session that said nothing has no file: it keeps its id (and its parent), as nothing ended."""
        if self.file is None:
            self._compaction_state = None
            self._states.forget()
            return
        old_id = self.session.session_id
        new_id = rec.new_session_id()
        self._append(rec.CLEARED, next=new_id)
        self.close()
        self.parent = old_id
        self.path = self.path.with_name(f"{new_id}{self.path.suffix}")
        self.source = None
        self.view_until = 0
        self.written = 0
        self._compaction_state = None
        self._states.forget()
        self.session.session_id = new_id


def _cost(model: str, usage: ev.Usage | ev.CacheKeptWarm) -> float | None:
    from tui_agent.core.providers.base import UsageInfo
    from tui_agent.core.models import cost_usd

    return cost_usd(model, UsageInfo.of(usage))


def _finite(price: float) -> float | None:
    """A price for JSON: `inf` (not a choice then) is written as null (a journal holds no non-finite number)."""
    return round(price, 8) if price == price and abs(price) != float("inf") else None


def _hour_writes(usage: ev.Usage | ev.CacheKeptWarm) -> dict[str, Any]:
    """The 1-hour cache writes, only when there are some (older journals and 5-minute sessions: no key)."""
    return {"cache_write_1h": usage.cache_write_1h} if usage.cache_write_1h else {}


def _header(session: "Session", parent: str | None, source: str | None) -> rec.Header:
    return rec.Header(
        session_id=session.session_id or "",
        workspace=str(session.workspace),
        model=session.model,
        provider=session.provider.name,
        started=rec.now_iso(),
        tui_agent_version=__version__,
        parent=parent,
        source=source,
    )


def start_journal(
    session: "Session",
    *,
    session_id: str | None = None,
    source: str | None = None,
    resumed_written: int | None = None,
    environ: Mapping[str, str] | None = None,
    parent: str | None = None,
    view: bool = False,
) -> Journal:
    """Journal `session` from now on. A new session gets a new file and a header, and any history it
    already holds (a loaded transcript) is written at once. With `resumed_written` the session was
    read back from its existing file (`session_id`): records are appended after a `resumed` marker.
    `parent` links a new file to the session it continues (a fork). With `view` the history it holds (a
    loaded transcript) waits for the user's first prompt: a transcript only looked at is no saved session.
    Raises OSError when a file that must be written now cannot be opened, `JournalLocked` when another
    process is writing it."""
    environ = os.environ if environ is None else environ
    secrets = list(known_secrets(environ).values)  # the environment's, and every key this process sends
    session.session_id = session_id or session.session_id or rec.new_session_id()
    journal = Journal(session, journal_path(session.session_id, environ), secrets, parent=parent, source=source)
    if resumed_written is not None:
        journal.written = resumed_written
        journal._append(rec.RESUMED, version=__version__, model=session.model, messages=resumed_written)
        journal._compaction_state = rec.dumps(export_compaction_state(session))
    if view and resumed_written is None:
        journal.view_until = len(session.history)
    else:
        journal.sync_messages()
        if session.history:
            journal.sync_compaction_state()
    session.listeners.append(journal)
    return journal


def stop_journal(session: "Session") -> None:
    """Detach and close `session`'s journal (before the TUI resumes another session into it)."""
    for listener in list(session.listeners):
        if isinstance(listener, Journal):
            session.listeners.remove(listener)
            listener.close()


def journal_of(session: "Session") -> Journal | None:
    return next((x for x in session.listeners if isinstance(x, Journal)), None)


def journal_problem(session: "Session") -> str | None:
    """A write failure of the session's journal, reported once (the face shows it as a warning)."""
    journal = journal_of(session)
    if journal is None or journal.problem is None or journal.problem_shown:
        return None
    journal.problem_shown = True
    return journal.problem


def _purpose(event: ev.Usage) -> dict[str, Any]:
    """A usage record names its purpose only when it is not a model call's (a summary's)."""
    return {"purpose": event.purpose} if event.purpose != "call" else {}
