"""Process exit codes of `tui-agent` (headless and the CLI's own checks), one meaning each.

Scripts branch on them, so a usage error must never look like a run that stopped early: argparse
already exits with 2 for a bad flag, so 2 means "usage" everywhere and the early stops get their own
codes. Standard library only: `cli.py` imports this before anything heavy.
"""

from __future__ import annotations

OK = 0  # the request was answered
ERROR = 1  # the turn failed (provider, network...): one line on stderr
USAGE = 2  # bad flags or input (argparse's own code too): nothing ran
MAX_TURNS = 3  # stopped early: the request reached --max-turns model calls
DENIED = 4  # stopped early: a tool call was denied (headless allows no changes without --allow-write)
INTERRUPTED = 130  # Ctrl+C (128 + SIGINT)

TABLE = (
    (OK, "answered"),
    (ERROR, "error (one line on stderr)"),
    (USAGE, "usage error: bad flag or input, nothing ran"),
    (MAX_TURNS, "stopped early at --max-turns"),
    (DENIED, "stopped early: a tool call was denied"),
    (INTERRUPTED, "interrupted (Ctrl+C)"),
)
