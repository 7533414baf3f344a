"""The sessions on disk: list them (newest activity first), find one by id or prefix, pick the latest
of a workspace (`--continue`). Each entry is summarised from its journal: first prompt, last activity,
messages, tokens of the last call, model."""

from __future__ import annotations

import glob
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from tui_agent.core.paths import SUFFIX, sessions_dir
from tui_agent.core.journal.reader import JournalLoad
from tui_agent.core.journal.records import FORMAT_VERSION, HEADER, Header, JournalError
from tui_agent.core.journal.safe_read import as_int, check_message, loads_line, read_journal_bytes
from tui_agent.core.messages import is_user_text, text_of


@dataclass(frozen=True)
class SessionInfo:
    session_id: str
    path: Path
    workspace: str
    model: str
    started: str
    last_activity: str
    messages: int
    tokens: int  # context tokens of the last call (real when the API reported them, else ≈)
    first_prompt: str
    parent: str | None = None
    cleared_to: str | None = None

    @classmethod
    def of(cls, load: JournalLoad) -> "SessionInfo":
        first = next((text_of(m) for m in load.history if is_user_text(m) and text_of(m).strip()), "")
        tokens = load.usage[-1].context_tokens if load.usage else (load.calls[-1].estimated_tokens if load.calls else 0)
        return cls(load.session_id, load.path, load.header.workspace, load.model, load.header.started,
                   load.last_activity, len(load.history), tokens, " ".join(first.split()), load.header.parent,
                   load.cleared_to)

    def line(self) -> str:
        prompt = self.first_prompt[:60] + ("…" if len(self.first_prompt) > 60 else "")
        return (f"{self.session_id}  {short_time(self.last_activity)}  "
                f"{self.messages:>4} msgs  {self.tokens:>7,} tok  {self.model:<18}  {prompt}")


def short_time(stamp: str) -> str:
    """`2026-12-01T09:26:24.123Z` → `2026-12-01 09:26` (UTC)."""
    return stamp[:16].replace("T", " ")


def list_sessions(workspace: Path | None = None, environ: Mapping[str, str] | None = None,
                  warnings: list[str] | None = None) -> list[SessionInfo]:
    """Readable sessions (of `workspace` when given), newest activity first. Unreadable files are left
    out (with a line in `warnings` when one is given): one bad file never fails the listing."""
    folder = sessions_dir(environ)
    if not folder.is_dir():
        return []
    infos = []
    wanted = str(Path(workspace).resolve()) if workspace is not None else None
    for path in folder.glob(f"*{SUFFIX}"):
        info = _summarize_or_skip(path, warnings)
        if info is None or info.messages == 0:
            continue
        if wanted is not None and info.workspace != wanted:
            continue
        infos.append(info)
    infos.sort(key=lambda i: (i.last_activity, i.started, i.session_id), reverse=True)
    return infos


def _summarize_or_skip(path: Path, warnings: list[str] | None) -> SessionInfo | None:
    try:
        return summarize(path)
    except JournalError as error:
        problem = str(error)
    except (ValueError, TypeError, KeyError, ArithmeticError, RecursionError, MemoryError) as error:
        problem = f"{path} could not be summarised ({type(error).__name__})"
    if warnings is not None:
        warnings.append(f"{problem}; it was left out")
    return None


def summarize(path: Path) -> SessionInfo | None:
    """`SessionInfo.of(read_journal(path))` without decoding every message: the writer puts `"type"`
    first on each line, so message lines are counted by their prefix and only the first user prompt
    is decoded. Listing many long sessions (the picker, `sessions`) stays fast. None: not a journal."""
    raw = read_journal_bytes(path)  # JournalError: not a regular file, or over the cap
    header: Header | None = None
    messages, first, tokens, estimate = 0, "", None, 0
    model, last, cleared = "", b"", None
    lines = raw.split(b"\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        # (the fast path only for whole lines: a record still being written can end in "}" mid-way)
        whole = number < len(lines)
        if header is not None and whole and line.startswith(_MESSAGE) and line.rstrip().endswith(b"}"):
            messages += 1
            if not first:
                text = _prompt_of(line)
                first = text if text.strip() else ""
            last = line
            continue
        try:
            record = loads_line(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        if header is None:
            if record.get("type") != HEADER or not isinstance(record.get("format"), int) \
                    or record["format"] > FORMAT_VERSION:
                return None
            try:
                header = Header.from_record(record)
            except JournalError:
                return None
            model = header.model
            continue
        last = line
        kind = record.get("type")
        try:
            if kind == "usage":
                tokens = sum(as_int(record.get(k, 0) or 0) for k in
                             ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
            elif kind == "call":
                estimate = as_int(record.get("estimated_tokens", 0) or 0)
        except ValueError:  # a malformed record: the full reader skips it too
            continue
        if kind == "model":
            model = str(record.get("model", model))
        elif kind == "cleared" and isinstance(record.get("next"), str):
            cleared = record["next"]
    if header is None:
        return None
    return SessionInfo(header.session_id, path, header.workspace, model, header.started,
                       _at(last) or header.started, messages, tokens if tokens is not None else estimate,
                       " ".join(first.split()), header.parent, cleared)


_MESSAGE = b'{"type":"message"'


def _prompt_of(line: bytes) -> str:
    try:
        message = loads_line(line).get("message", {})
        check_message(message)
    except (ValueError, AttributeError):
        return ""
    return text_of(message) if is_user_text(message) else ""


def _at(line: bytes) -> str:
    """The `"at"` stamp of a record line (the second key the writer puts on every line)."""
    head = line[:80].decode("utf-8", "replace")
    marker = '"at":"'
    start = head.find(marker)
    if start < 0:
        return ""
    end = head.find('"', start + len(marker))
    return head[start + len(marker):end] if end > 0 else ""


def find_session(key: str, environ: Mapping[str, str] | None = None) -> Path:
    """The journal for an id, a unique id prefix or a path; `JournalError` says why none fits."""
    candidate = Path(key).expanduser()
    if candidate.suffix == SUFFIX and candidate.is_file():
        return candidate
    if "/" in key or candidate.suffix == SUFFIX:  # a path, not an id: never a glob pattern
        what = ("does not exist" if not candidate.exists() else "is not a regular file" if not candidate.is_file()
                else f"is not a session journal (a {SUFFIX} file)")
        raise JournalError(f"the session file {key} {what}")
    folder = sessions_dir(environ)
    exact = folder / f"{key}{SUFFIX}"
    if exact.is_file():
        return exact
    matches = sorted(folder.glob(f"{glob.escape(key)}*{SUFFIX}")) if key and folder.is_dir() else []
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise JournalError(f"no session {key!r} in {folder} (`tui-agent sessions` lists them)")
    raise JournalError(f"{key!r} matches {len(matches)} sessions; give more of the id")


def latest_session(workspace: Path, environ: Mapping[str, str] | None = None) -> SessionInfo | None:
    sessions = list_sessions(workspace, environ)
    return sessions[0] if sessions else None
