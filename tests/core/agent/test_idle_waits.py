"""How long this user stays away, read cheaply from the journals of past sessions (`core/agent/idle_waits.py`):
the waits between a turn's last call and the call after the next prompt, and one that never ended per session."""

from __future__ import annotations

import math
import os

from tui_agent.core.agent.idle_waits import file_waits, journal_waits, prior_of
from tui_agent.core.idle import OWN_WEIGHT, PRIOR
from tui_agent.core.journal import records as rec


def _line(kind: str, at: str, **fields) -> str:
    return rec.dumps({"type": kind, "at": f"2026-12-01T09:{at}.000Z", **fields})


def _journal(*turns: tuple[str, list[str]]) -> bytes:
    """Each turn: the prompt's time and its calls' times (a tool result between calls)."""
    lines = [rec.dumps({"type": "header", "session_id": "s", "workspace": "/w", "model": "m", "provider": "p",
                        "started": "2026-12-01T09:00:00.000Z", "tui_agent_version": "0", "format": 2})]
    index = 0
    for prompt_at, calls in turns:
        lines.append(_line("message", prompt_at, index=index, message={"role": "user", "content": [
            {"type": "text", "text": "do it"}]}))
        index += 1
        for k, at in enumerate(calls):
            if k:
                lines.append(_line("message", at, index=index, message={"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}))
                index += 1
            lines.append(_line("call", at, call=k + 1, history_len=index))
    return ("\n".join(lines) + "\n").encode()


def test_the_waits_of_one_journal():
    raw = _journal(("00:00", ["00:01", "00:20"]), ("05:00", ["05:02"]), ("30:00", ["30:02", "31:00"]))
    # from the last call of a turn to the first call after the next prompt; the session's end never ended
    assert file_waits(raw) == [282.0, 1500.0, math.inf]
    assert file_waits(b"") == [] and file_waits(b"not json\n{\"type\":\"call\",\"at\":\"x\"}\n") == []


def test_the_prior_reads_the_newest_journals_only(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    for n in range(3):
        path = folder / f"2026120{n}-000000-aaaaa{n}.jsonl"
        path.write_bytes(_journal(("00:00", ["00:01"]), ("01:00", ["01:01"])))
        os.utime(path, (1_000 + n, 1_000 + n))
    assert journal_waits(folder, newest=2) == [60.0, math.inf] * 2
    assert journal_waits(folder, skip="20261202-000000-aaaaa2") == [60.0, math.inf] * 2
    resumed = prior_of({"TUI_AGENT_DATA_DIR": str(tmp_path)}, "20261202-000000-aaaaa2")  # its own waits weigh 3
    assert resumed.total == PRIOR.total + 4 + OWN_WEIGHT and resumed.never == PRIOR.never + 2
    prior = prior_of({"TUI_AGENT_DATA_DIR": str(tmp_path)})
    assert prior.total == PRIOR.total + 6 and prior.never == PRIOR.never + 3
    assert prior_of({"TUI_AGENT_DATA_DIR": str(tmp_path / "none")}) is PRIOR
