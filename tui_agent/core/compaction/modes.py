"""The compaction strategies by name, and the one reader of the `COMPACT` variable.

The policy (`enabled=None`), the seed's options and the settings all ask here, so `COMPACT=off` means the
same to each of them (one of them used to read only `0`). Imports nothing of tui-agent, so every
compaction module can use it.
"""

from __future__ import annotations

import os
from typing import Mapping

MODES = ("v2", "v1", "seed", "off", "server-clear", "server-compact")  # server-*: the API's own (compaction/strategies/server.py)
ALIASES = {"0": "off", "1": "v2", "on": "v2", "false": "off", "true": "v2", "": "v2"}
ENV = "COMPACT"


def mode_word(value: str) -> str:
    """A mode as typed (`0`, `on`, `V1` …) in its one spelling; an unknown word is returned as it is."""
    word = value.strip().lower()
    return ALIASES.get(word, word)


def env_mode(env: Mapping[str, str] | None = None) -> str:
    """The mode `COMPACT` asks for (v2 when unset); read when asked, so a test can set it at any time."""
    return mode_word((os.environ if env is None else env).get(ENV, "v2"))


def off_in_env(env: Mapping[str, str] | None = None) -> bool:
    """`COMPACT=0` (or off / false): compaction is off wherever nothing else decided."""
    return env_mode(env) == "off"
