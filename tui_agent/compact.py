"""Public contract of the compaction engine: `compact_messages(messages, options=None) -> CompactResult`.

Used by the query loop, the budget panel, the trace and external checks. The implementation lives in
`tui_agent.core.compaction` (the UI-free core); this module keeps the short, stable import path.
"""

from tui_agent.core.compaction import (
    TRUNCATION_NOTE,
    CompactOptions,
    CompactReport,
    CompactResult,
    TruncatedBlock,
    compact_messages,
)

__all__ = [
    "TRUNCATION_NOTE",
    "CompactOptions",
    "CompactReport",
    "CompactResult",
    "TruncatedBlock",
    "compact_messages",
]
