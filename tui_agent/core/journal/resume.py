"""Put a read journal back into a Session and keep journaling it.

The restored session continues exactly where the old one was: the same history, usage and call counter,
and the compactor's sticky decisions (with its calibration of estimates to real tokens; the cached
prefix is part of the plan), so the first request after a resume is the request the old process would
have sent next.

A crash can leave the history one message short of valid: a `kill -9` while a tool ran leaves a tool_use
with no result. That call is answered with a synthetic error result (the in-flight message is the one
thing lost), appended and journaled like any message. Damage in the middle of a file (a lost line) is
not repaired in place, because the file must stay append-only: the valid part continues in a new
session file that names the old one as its parent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from tui_agent.core import events as ev
from tui_agent.core.journal.compaction_record import import_compaction_state
from tui_agent.core.paths import is_own_journal
from tui_agent.core.journal.reader import JournalLoad
from tui_agent.core.journal.records import new_session_id
from tui_agent.core.journal.writer import Journal, JournalLocked, start_journal
from tui_agent.core.messages import (
    NO_CONTENT,
    Message,
    left_out_notice,
    protocol_errors,
    round_trip_blocks,
    tool_result_block,
    tool_uses,
)

if TYPE_CHECKING:
    from tui_agent.core.agent.session import Session

INTERRUPTED_RESULT = "Not run to the end: tui-agent stopped before this tool finished (the session was resumed)."


@dataclass
class Restored:
    notices: list[ev.Notice] = field(default_factory=list)
    repaired: int = 0  # synthetic messages appended to make the history valid
    kept: int = 0  # journaled messages kept (all of them unless the file was damaged in the middle)
    fork: bool = False  # the history was cut: continue in a new file


def valid_prefix(history: list[Message]) -> tuple[list[Message], list[Message]]:
    """(the longest valid part of `history`, the repair messages to append after it)."""
    kept = history[:_valid_length(history)]
    repairs: list[Message] = []
    if kept and tool_uses(kept[-1]):
        repairs.append({"role": "user", "content": [
            tool_result_block(use["id"], INTERRUPTED_RESULT, True) for use in tool_uses(kept[-1])]})
    return kept, repairs


def _valid_length(history: list[Message]) -> int:
    """The length of the longest prefix `protocol_errors` accepts (a final unanswered tool_use is repaired
    by the caller). A prefix with an error keeps it in every longer one, so the length is found by halving:
    dropping one message at a time made a journal broken near its start cost n² checks (minutes at 20,000)."""
    if not protocol_errors(history, allow_pending=True):
        return len(history)
    good, bad = 0, len(history)  # the empty prefix is valid; the whole one is not
    while bad - good > 1:
        middle = (good + bad) // 2
        if protocol_errors(history[:middle], allow_pending=True):
            bad = middle
        else:
            good = middle
    return good


def sendable(history: list[Message]) -> tuple[list[Message], list[ev.Notice]]:
    """`history` as the API will take it back, and what was changed: blocks of a type the API refuses in a
    request (an older version kept them as they came) are left out, and a message with no content (which
    the API refuses) says so in words. Messages are replaced, never removed, so every index the saved
    compaction state names still points at its message."""
    out: list[Message] = []
    left: list[str] = []
    emptied = 0
    for message in history:
        content = message.get("content")
        if isinstance(content, list) and content:
            kept, gone = round_trip_blocks(content)
            if gone:
                left += gone
                message = {**message, "content": kept}
                content = kept
        if content in ([], ""):
            emptied += 1
            message = {**message, "content": [{"type": "text", "text": NO_CONTENT}]}
        out.append(message)
    notices = [ev.Notice(left_out_notice(left, "the resumed history"), "warning")] if left else []
    if emptied:
        notices.append(ev.Notice(f"{emptied} saved message{'s' if emptied != 1 else ''} had no content (the API "
                                 f"refuses that); each now says {NO_CONTENT!r}.", "warning"))
    return out, notices


def restore(session: "Session", load: JournalLoad) -> Restored:
    """Fill `session` (fresh, empty history) from `load`."""
    result = Restored()
    history, result.notices = sendable(load.history)
    kept, repairs = valid_prefix(history)
    result.kept, result.repaired = len(kept), len(repairs)
    result.fork = len(kept) < len(history)
    session.history.extend(kept + repairs)
    session.usage_history.extend(load.usage)
    session.resumed_calls = [(call.call, call.estimated_tokens, None if call.undone else call.event)
                             for call in load.calls]
    if load.idle_event:  # made while idle for the next call, which has no size yet (0: `Ledger.resumed`)
        session.resumed_calls.append((load.calls_made + 1, 0, load.idle_event))
    session.state.calls = load.calls_made  # (the calibration is part of the compactor's state)
    session.state.cache.message_id, session.state.cache.cached = load.last_message_id, load.cached
    for event in load.server_events:  # the server's edits and cache misses, where they happened
        session.ledger.feed(event)
    for ping in load.pings:  # what the pings cost: the resumed meter's money is the quit session's
        session.ledger.feed(ping)
    session.ledger.warm = None  # (no ping since this process's last call: it has made none)
    if load.idle is not None:  # the meter says what the idle policy last chose; nothing sent depends on it
        session.ledger.feed(load.idle)
    warning = import_compaction_state(session, load.compaction_state, load.compaction_mode)
    if warning:
        result.notices.append(ev.Notice(warning, "warning"))
    for text in load.warnings[:5]:
        result.notices.append(ev.Notice(text, "warning"))
    if len(load.warnings) > 5:
        result.notices.append(ev.Notice(f"… and {len(load.warnings) - 5} more unreadable lines.", "warning"))
    if result.fork:
        result.notices.append(ev.Notice(
            f"The journal lost messages in the middle; kept the first {len(kept)} of {len(load.history)} "
            "and continue in a new session file.", "warning"))
    if repairs:
        result.notices.append(ev.Notice(
            "The last tool call was cut off when the session stopped; it is marked as not finished.", "warning"))
    calls = f"{load.calls_made} model call{'s' if load.calls_made != 1 else ''}"
    note = f"Resumed session {load.session_id}: {len(kept)} message{'s' if len(kept) != 1 else ''}, {calls}"
    if load.model and load.model != session.model:
        note += f" (was {load.model}, now {session.model})"
    result.notices.insert(0, ev.Notice(note + ".", "info"))
    return result


def resume_journaled(session: "Session", load: JournalLoad,
                     environ: Mapping[str, str] | None = None) -> tuple[Journal, list[ev.Notice]]:
    """Restore `load` into `session` and keep journaling: in the same file, or in a new one that names
    the old session as its parent when the history had to be cut."""
    restored = restore(session, load)
    if not is_own_journal(load.path, load.session_id, environ):
        journal = start_journal(session, source=f"file {load.path}", environ=environ)
        restored.notices.append(ev.Notice(
            f"{load.path} is not one of this data dir's session journals: it continues as a new session "
            f"{session.session_id} in {session.workspace} (its recorded workspace and id are not used).", "info"))
    elif restored.fork:
        journal = start_journal(session, source=f"session {load.session_id}", environ=environ)
    else:
        journal = _continue_or_fork(session, load, restored, environ)
    journal.carry_idle_event(load.idle_event)
    if load.model and load.model != session.model:
        journal(ev.ModelSwitched(load.model, session.model, session.provider.name))
    session.announce_next("resume")
    return journal, restored.notices


def _continue_or_fork(session: "Session", load: JournalLoad, restored: Restored,
                      environ: Mapping[str, str] | None) -> Journal:
    """Append to the session's own file, or, when another live process is writing it (its lock is
    held), continue in a new file linked to it as its parent: two writers never share one journal."""
    try:
        return start_journal(session, session_id=load.session_id, resumed_written=restored.kept, environ=environ)
    except JournalLocked:
        journal = start_journal(session, session_id=new_session_id(), source=f"session {load.session_id}",
                                environ=environ, parent=load.session_id)
        restored.notices.append(ev.Notice(
            f"Session {load.session_id} is open in another tui-agent process: this one continues as a new "
            f"session {session.session_id} (linked to it), so neither loses the other's turns.", "warning"))
        return journal


def reopen(session: "Session", load: JournalLoad,
           environ: Mapping[str, str] | None = None) -> tuple[Journal, list[ev.Notice]]:
    """Replace what `session` holds with the journaled session `load` (the TUI's `/resume`): the current
    journal is closed as it is (nothing is lost: it is already on disk), the session emptied, then
    restored and journaled into `load`'s file."""
    from tui_agent.core.journal.writer import stop_journal

    stop_journal(session)
    session.clear()  # no journal listens now: this starts no new file
    session.state.calls = 0
    return resume_journaled(session, load, environ)
