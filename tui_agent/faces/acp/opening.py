"""What `session/new` and `session/load` check and keep before a session is opened through the door.

- The `cwd`: the protocol says "the working directory for this session; must be an absolute path". A
  relative one would be resolved against wherever the editor happened to start the agent, an empty one is
  the agent's own folder, a missing one a folder nobody meant: each is refused with an error that says
  which (`-32602`, the reason in the message, where clients show it). A missing `cwd` member is the SDK's
  schema's refusal, explained by `frames.explain_schema_errors`.
- The journal, at once: a new session is saved the moment it is created (its header), not with its first
  message as in the TUI, because an ACP client names a session by the id `session/new` returned and may
  load it from another process before anything was said (`acpx sessions new`, then `acpx prompt -s`).
  `tui-agent sessions` still lists only sessions that said something. After `/clear` the new
  conversation's file is created at once too, and loading the id the client holds follows the chain to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import RequestError

if TYPE_CHECKING:
    from tui_agent.core.agent.session import Session
    from tui_agent.core.journal.reader import JournalLoad

INVALID_PARAMS = -32602
MAX_CLEARS = 1_000  # `/clear`s followed from the id a client holds to the conversation it is in now


def invalid_params(reason: str, **data: Any) -> RequestError:
    """`-32602` whose message says what is wrong (clients show the message, not the data)."""
    return RequestError(INVALID_PARAMS, f"Invalid params: {reason}", {"reason": reason, **data})


def checked_cwd(cwd: str) -> Path:
    """The session's folder: `cwd` when it is an absolute path to an existing folder; raises otherwise."""
    if not cwd or not cwd.strip():
        raise invalid_params("cwd is empty: give the session's folder as an absolute path", cwd=cwd)
    path = Path(cwd)
    if not path.is_absolute():
        raise invalid_params(f"cwd {cwd!r} is a relative path: the protocol asks for an absolute one", cwd=cwd)
    if not path.exists():
        raise invalid_params(f"cwd {cwd!r} does not exist", cwd=cwd)
    if not path.is_dir():
        raise invalid_params(f"cwd {cwd!r} is not a folder", cwd=cwd)
    return path


def read_saved(session_id: str) -> "JournalLoad":
    """The conversation session `session_id` holds now: its journal, or the one `/clear` continued it in
    (the ACP id stays the one `session/new` returned); raises `-32602` saying why it cannot be loaded."""
    from tui_agent.core.journal import JournalError
    from tui_agent.core.journal.reader import read_journal
    from tui_agent.core.journal.store import find_session

    if not session_id or not session_id.strip():
        raise invalid_params("sessionId is empty", sessionId=session_id)
    try:
        load = read_journal(find_session(session_id))
        for _ in range(MAX_CLEARS):
            if load.cleared_to is None:
                break
            load = read_journal(find_session(load.cleared_to))
        return load
    except (JournalError, OSError) as error:
        raise invalid_params(f"session {session_id!r} cannot be loaded: {error}", sessionId=session_id) from error


def save_now(session: "Session") -> str | None:
    """Create the session's journal file now (its header), so `session/load` finds it before any prompt;
    the problem in one line when it cannot be written."""
    from tui_agent.core.journal.writer import journal_of

    journal = journal_of(session)
    if journal is None or journal.problem is not None:
        return None
    try:
        journal.open()
    except OSError as error:
        return f"This session is not saved yet: its journal could not be created ({error})."
    return None


__all__ = ["INVALID_PARAMS", "checked_cwd", "invalid_params", "read_saved", "save_now"]
