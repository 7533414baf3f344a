"""The faces a `tui-agent NAME` subcommand opens: one row each in `FACES`, read by the dispatcher
(`run_subcommand`, before the main parser: each face parses its own flags) and by `tui-agent --help`
(`faces/cli.py`). A new face is one row here plus its module (`tests/test_extension_points.py` says what a
row still lacks). `serve` is not a row: it shares the session flags, so the main parser reads it.

Only the standard library here (`--version` and `--help` stay fast); a face's module loads when it runs.
"""

from __future__ import annotations

import importlib


class Face:
    """One subcommand: its name, its line in `tui-agent --help`, and where it starts (`module:function`,
    a function of the arguments after NAME returning the exit code). A plain class: `dataclasses` costs
    start-up time here."""

    def __init__(self, name: str, help: str, entry: str) -> None:
        self.name, self.help, self.entry = name, help, entry

    @property
    def module(self) -> str:
        return self.entry.partition(":")[0]

    @property
    def function(self) -> str:
        return self.entry.partition(":")[2]

    def run(self, argv: list[str]) -> int:
        return getattr(importlib.import_module(self.module), self.function)(argv)


FACES = (
    Face("sessions", "list saved sessions (tui-agent sessions --help)", "tui_agent.faces.sessions:sessions_command"),
    Face("export", "print a saved session as Markdown or JSON (tui-agent export --help)",
         "tui_agent.faces.sessions:export_command"),
    Face("replay", "step through a recorded session call by call (tui-agent replay --help)",
         "tui_agent.faces.replay:replay_command"),
    Face("watch", "follow a Claude Code session log being written (tui-agent watch --help)",
         "tui_agent.faces.watch:watch_command"),
    Face("proxy", "record an agent's exact model requests through a local proxy (tui-agent proxy --help)",
         "tui_agent.faces.proxy:proxy_command"),
    Face("report", "every recorded session replayed and priced: terminal, HTML page, table (tui-agent report --help)",
         "tui_agent.faces.report:report_command"),
    Face("acp", "serve an editor (Zed, Toad…) over the Agent Client Protocol on stdio (tui-agent acp --help)",
         "tui_agent.faces.acp.serve:acp_command"),
)
SUBCOMMANDS = tuple(face.name for face in FACES)


def run_subcommand(argv: list[str]) -> int:
    """`argv[0]` names a row of `FACES`; the face gets the rest."""
    face = next(face for face in FACES if face.name == argv[0])
    return face.run(argv[1:])
