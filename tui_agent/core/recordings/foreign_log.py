"""What a reader of another agent's log shares (a Codex rollout, a proxy recording): its lines read as JSON
objects, the rest counted as skipped, and folded into Claude Code records that one `TranscriptReader` repairs
and loads, so repairs, validity and the watch's growth work the same for every agent."""

from __future__ import annotations

import json
from typing import Any, Iterator

from tui_agent.core.recordings.transcripts import TranscriptLoad, TranscriptReader


class ForeignLogReader:
    """The `TranscriptReader` interface (`feed`, `load`, `skipped_lines`) over an inner reader."""

    def __init__(self, *, keep_thinking: bool = True, keep_meta: bool = True) -> None:
        self.inner = TranscriptReader(keep_thinking=keep_thinking, keep_meta=keep_meta)
        self._skipped_own = 0
        self._last_role: str | None = None  # the role of the last record folded

    @property
    def skipped_lines(self) -> int:
        return self.inner.skipped_lines + self._skipped_own

    @property
    def repairs_restarted(self) -> int:
        return self.inner.repairs_restarted

    def load(self) -> TranscriptLoad:
        return self.inner.load()

    def _objects(self, lines: Any) -> Iterator[dict[str, Any]]:
        """Each non-blank line that is a JSON object; any other line is counted as skipped."""
        for line in lines:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                self._skipped_own += 1
                continue
            if not isinstance(record, dict):
                self._skipped_own += 1
                continue
            yield record

    def _emit(self, record: dict[str, Any]) -> None:
        """One Claude Code record into the inner reader (its role remembered: replies are merged by it)."""
        if record["type"] in ("user", "assistant"):
            self._last_role = record["type"]
        self.inner.feed([json.dumps(record, ensure_ascii=False)])
