"""Session journals: every session written to disk as it happens, so nothing is lost across processes.

One JSONL file per session under `<data dir>/sessions/` (see `paths.py`): a versioned header, then one
record per finalized message, model call, usage report, compaction-state change, permission answer,
model switch and `/clear`. The `Journal` (a `Session` listener, `writer.py`) appends each record (flushed at
once, fsynced when a turn closes); `reader.py` reads a file back (skipping broken lines with a warning, refusing newer formats);
`resume.py` puts a read journal back into a Session; `store.py` lists and finds sessions; `export.py`
renders one as Markdown or JSONL.
"""

from __future__ import annotations

from tui_agent.core.journal.records import FORMAT_VERSION, JournalError

__all__ = ["FORMAT_VERSION", "JournalError"]
