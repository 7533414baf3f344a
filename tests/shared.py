"""Where the shared material lives, defined once: `../shared/transcripts` beside the repository (real
Claude Code logs; a fresh clone has it next to it, as the project guide says)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPTS = ROOT.parent / "shared" / "transcripts"
TRANSCRIPT_FILES = sorted(TRANSCRIPTS.glob("*.jsonl")) if TRANSCRIPTS.is_dir() else []

#: A small Claude Code log made by `tests/replay/test_replay_core.compacting_log` (rounds, the agent's own
#: compact_boundary and summary, rounds again): the acceptance tests run on it on every machine, so none
#: of them can skip silently when `../shared/` is missing.
SYNTHETIC_TRANSCRIPT = ROOT / "tests" / "data" / "synthetic-claude-code.jsonl"
