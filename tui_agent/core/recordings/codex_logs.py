"""Which agent wrote a log (Claude Code, Codex, `tui-agent proxy`), where Codex writes its rollouts, the newest.

Why one door: `replay`, `watch` and `--transcript` take a log without being told whose it is. A Codex rollout
line is `{"timestamp", "type", "payload"}` with a type of its own (`session_meta`, `response_item`, ...); a
Claude Code line has a `type` of user/assistant/system/... and no payload. The first line that says which is
enough: `LogReader` reads it and then folds every line with the reader of that agent. Each format is one row of
`FORMATS` (a new one: a row and its reader; `tests/test_extension_points.py` names what a row lacks); a format
that keeps its sessions in a store that is not lines (opencode's SQLite) gives its row a `store`, which
recognises such a file by its first bytes and reads it whole, never line by line.

Codex writes each session to `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` (`CODEX_HOME`
defaults to `~/.codex`); the folders are by date, not by project, so a project's rollouts are the ones whose
`session_meta` names its directory as `cwd`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.core.recordings.codex_rollout import RolloutReader, is_legacy_record
from tui_agent.core.recordings.proxy_log import RECORD_TYPE, ProxyReader
from tui_agent.core.recordings.transcripts import MAX_TRANSCRIPT_BYTES, TranscriptLoad, TranscriptReader

ROLLOUT_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted", "token_usage_record",
                 "world_state"}
HEAD_BYTES = 256 * 1024  # a session_meta line carries the base instructions: tens of KB


def is_rollout_record(record: Any) -> bool:
    """A line of a Codex rollout: `{"timestamp", "type", "payload"}`, or an early unwrapped one."""
    if not isinstance(record, dict):
        return False
    return record.get("type") in ROLLOUT_TYPES and isinstance(record.get("payload"), dict) or is_legacy_record(record)


class LogReader:
    """A `TranscriptReader` for a log of either agent: the first JSON object line decides which reader folds
    the log (lines before it that are not JSON are counted as the chosen reader would)."""

    def __init__(self, *, keep_thinking: bool = True, keep_meta: bool = True) -> None:
        self._options = {"keep_thinking": keep_thinking, "keep_meta": keep_meta}
        self.reader: TranscriptReader | RolloutReader | ProxyReader | None = None
        self._waiting: list[str] = []  # lines before the first that tells

    @property
    def context_window(self) -> int | None:
        return self.reader.context_window if isinstance(self.reader, RolloutReader) else None

    @property
    def skipped_lines(self) -> int:
        return self._chosen().skipped_lines

    @property
    def repairs_restarted(self) -> int:
        return self._chosen().repairs_restarted

    def feed(self, lines: Iterable[str]) -> LogReader:
        if self.reader is not None:
            self.reader.feed(lines)
            return self
        lines = list(lines)
        for n, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(record, dict):
                self.reader = _reader_for(record)(**self._options)
                self.reader.feed(self._waiting + lines)
                self._waiting = []
                return self
        self._waiting += lines
        return self

    def load(self) -> TranscriptLoad:
        return self._chosen().load()

    def finish(self) -> LogReader:
        """The log is complete (a replay, not a watch): nothing waits for more lines."""
        if (finish := getattr(self.reader, "finish", None)) is not None:  # a reader that holds a last record back
            finish()
        return self

    def _chosen(self) -> TranscriptReader | RolloutReader | ProxyReader:
        if self.reader is None:  # nothing told yet: what a Claude Code reader says of these lines
            return TranscriptReader(**self._options).feed(self._waiting)
        return self.reader


@dataclass(frozen=True)
class LogStore:
    """The seam for a log that is not lines (a database): `sniff(head)` says from a file's first bytes whether
    it is one, `load(path)` reads the whole session from it."""

    sniff: Callable[[bytes], bool]
    load: Callable[[Path], TranscriptLoad]


@dataclass(frozen=True)
class LogFormat:
    """One agent's log: what `log_kind` calls it, the reader that folds its lines (`feed`, `finish`, `load`),
    whether a first JSON record is one of its own (`claims`), or, for a store that is not lines, `store`."""

    kind: str
    reader: type
    claims: Callable[[dict[str, Any]], bool]
    store: LogStore | None = None


# Asked in order; the last (Claude Code's) claims any record: the default, also for an unreadable file.
FORMATS = (
    LogFormat("codex", RolloutReader, is_rollout_record),
    LogFormat("proxy", ProxyReader, lambda record: record.get("type") == RECORD_TYPE),
    LogFormat("claude-code", TranscriptReader, lambda record: True),
)


def _format_for(record: dict[str, Any]) -> LogFormat:
    """The format of the log whose first record is `record`: the first row that claims it."""
    return next(row for row in FORMATS if row.claims(record))


def _reader_for(record: dict[str, Any]) -> type:
    """The reader of the log whose first record is `record`: Codex's, the proxy's, else Claude Code's."""
    return _format_for(record).reader


def _stored(head: bytes) -> LogFormat | None:
    """The format whose store (not lines) this file is, from its first bytes; None: a log of lines."""
    return next((row for row in FORMATS if row.store is not None and row.store.sniff(head)), None)


def log_kind(path: str | Path) -> str:
    """Whose log `path` is: "codex", "proxy" or "claude-code" (the default, also for an unreadable file)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return FORMATS[-1].kind
    if (stored := _stored(head)) is not None:
        return stored.kind
    for line in head.split(b"\n"):
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            return _format_for(record).kind
    return FORMATS[-1].kind


def logged_window(path: str | Path) -> int | None:
    """The model's context window a Codex rollout states (`model_context_window`) in its first MB, or None."""
    import re

    try:
        with open(path, "rb") as handle:
            head = handle.read(4 * HEAD_BYTES)
    except OSError:
        return None
    found = re.search(rb'"model_context_window":\s*(\d{4,9})', head)
    return int(found.group(1)) if found else None


def read_log(path: str | Path, *, keep_thinking: bool = True, keep_meta: bool = True) -> LogReader:
    """Every line of the log at `path` folded (FileNotFoundError when nothing readable is there)."""
    from tui_agent.core.config_files import read_bytes_capped

    data = read_bytes_capped(path, MAX_TRANSCRIPT_BYTES)
    if data is None:
        raise FileNotFoundError(2, "No such file or directory", str(path))
    lines = data.decode("utf-8", errors="replace").split("\n")
    return LogReader(keep_thinking=keep_thinking, keep_meta=keep_meta).feed(lines).finish()


def load_log(path: str | Path, *, keep_thinking: bool = True, keep_meta: bool = True) -> TranscriptLoad:
    """`load_transcript` for a log of any format (a store that is not lines is read whole by its row)."""
    if any(row.store is not None for row in FORMATS):
        try:
            with open(path, "rb") as handle:
                stored = _stored(handle.read(HEAD_BYTES))
        except OSError:
            stored = None
        if stored is not None and stored.store is not None:
            return stored.store.load(Path(path))
    return read_log(path, keep_thinking=keep_thinking, keep_meta=keep_meta).load()


# -- where Codex writes ---------------------------------------------------------------------------------
def codex_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    configured = env.get("CODEX_HOME")
    return Path(configured).expanduser() if configured else Path(env.get("HOME") or Path.home()) / ".codex"


def rollout_cwd(path: Path) -> str | None:
    """The working directory a rollout's `session_meta` names (None: unreadable or none)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return None
    for line in head.split(b"\n"):
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if is_rollout_record(record) and record.get("type") == "session_meta":
            cwd = record["payload"].get("cwd")
            return cwd if isinstance(cwd, str) else None
    return None


def rollout_logs(cwd: str | Path, *, all_projects: bool = False,
                 env: Mapping[str, str] | None = None) -> list[tuple[float, str, Path]]:
    """Codex's rollouts (of the project at `cwd`, or all), as (mtime, name, path), newest first."""
    root = codex_home(env) / "sessions"
    found: list[tuple[float, str, Path]] = []
    for path in root.glob("*/*/*/rollout-*.jsonl"):
        try:
            found.append((path.stat().st_mtime, path.name, path))
        except OSError:
            continue
    found.sort(key=lambda item: (item[0], item[1]), reverse=True)
    if all_projects:
        return found
    here = os.path.realpath(str(cwd))
    return [entry for entry in found if (where := rollout_cwd(entry[2])) and os.path.realpath(where) == here]


def agent_logs(cwd: str | Path, *, all_projects: bool = False, env: Mapping[str, str] | None = None) -> list[Path]:
    """The session logs of both agents (Claude Code's and Codex's) for `cwd` or every project, newest first."""
    from tui_agent.core.recordings.claude_logs import session_logs

    claude = session_logs(cwd, all_projects=all_projects, env=env)
    entries = [(_mtime(p), p.name, p) for p in claude] + rollout_logs(cwd, all_projects=all_projects, env=env)
    entries.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [path for _, _, path in entries]


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
