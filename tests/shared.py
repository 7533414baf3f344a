"""Where the shared material lives, defined once: `../shared/transcripts` beside the repository (real
Claude Code logs; a fresh clone has it next to it, as the project guide says)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPTS = ROOT.parent / "shared" / "transcripts"
TRANSCRIPT_FILES = sorted(TRANSCRIPTS.glob("*.jsonl")) if TRANSCRIPTS.is_dir() else []
