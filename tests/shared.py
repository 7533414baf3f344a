"""Where the shared material lives, defined once: `../shared/transcripts` beside the repository (real
Claude Code logs; a fresh clone has it next to it, as the project guide says)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: `TUI_AGENT_TEST_TRANSCRIPTS=/nonexistent pytest ...` shows what a clone without `../shared` runs: the tests fall
#: back on the synthetic logs under tests/data, and the few that need one very session skip with one sentence
#: (`shared_log`), never a FileNotFoundError.
TRANSCRIPTS = Path(os.environ.get("TUI_AGENT_TEST_TRANSCRIPTS") or ROOT.parent / "shared" / "transcripts")
TRANSCRIPT_FILES = sorted(TRANSCRIPTS.glob("*.jsonl")) if TRANSCRIPTS.is_dir() else []

#: A small Claude Code log made by `tests/replay/test_replay_core.compacting_log` (rounds, the agent's own
#: compact_boundary and summary, rounds again): the acceptance tests run on it on every machine, so none
#: of them can skip silently when `../shared/` is missing.
SYNTHETIC_TRANSCRIPT = ROOT / "tests" / "data" / "synthetic-claude-code.jsonl"

#: A longer deterministic Claude Code log (`tests/replay/jsonl.long_session`: 48 calls of reads, writes,
#: edits, searches and a failing command, and the agent's own compaction): what the checks written against
#: the real logs run on when `../shared/` is missing, so they run everywhere instead of skipping.
SYNTHETIC_LONG = ROOT / "tests" / "data" / "synthetic-long-claude-code.jsonl"

#: The logs the whole-session checks run on: the real ones when present, else the long synthetic one.
LOGS = TRANSCRIPT_FILES or [SYNTHETIC_LONG]
SMALLEST_LOG = min(LOGS, key=lambda p: p.stat().st_size)
#: The small real log several checks were written on (39 calls), else the long synthetic one.
_SMALL_REAL = TRANSCRIPTS / "DRMacIver__claude-reliability__python-to-rust-port-transcript.jsonl"
SMALL_LOG = _SMALL_REAL if _SMALL_REAL.is_file() else SYNTHETIC_LONG


def shared_log(pattern: str) -> Path:
    """The real log in `TRANSCRIPTS` whose name matches `pattern`, for the few checks that need that very session
    (its size, where its agent compacted); without it the test skips, saying so in one sentence."""
    found = sorted(TRANSCRIPTS.glob(pattern)) if TRANSCRIPTS.is_dir() else []
    if not found:
        pytest.skip(f"needs the shared Claude Code log {pattern} in {TRANSCRIPTS} (../shared/transcripts is not here)")
    return found[0]


def shared_logs(count: int) -> list[Path]:
    """The real logs, at least `count` of them, or the test skips, saying so in one sentence."""
    if len(TRANSCRIPT_FILES) < count:
        pytest.skip(f"needs {count} shared Claude Code logs in {TRANSCRIPTS} ({len(TRANSCRIPT_FILES)} there)")
    return TRANSCRIPT_FILES
