"""A headless `--continue` counts only its own calls and pings as "this run" (issue 40: an earlier
session's keep-warm ping was counted as this run's). The resumed pings are the session's: in its total."""

from __future__ import annotations

import io
import json
from pathlib import Path

from tui_agent.core.agent.budget import fmt_usd
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.resume import resume_journaled
from tui_agent.core.journal.writer import journal_of, start_journal
from tui_agent.core.messages import UsageInfo
from tui_agent.core.models import cost_usd
from tui_agent.faces.headless import consume

from .helpers import LocalClaude, run, session_on

USAGE = UsageInfo(1_200, 40, 300, 900)
PING = {"type": "ping", "at": "2026-12-07T16:00:00.000Z", "ping": 1, "input_tokens": 3, "output_tokens": 1,
        "cache_read_input_tokens": 60_000}


def claude(replies: list) -> LocalClaude:
    return LocalClaude(replies=replies, usage=USAGE, context_window=40_000, max_output_tokens=1_000)


async def test_a_resumed_ping_is_the_sessions_not_this_runs(tmp_path: Path) -> None:
    session = session_on(tmp_path, claude([[{"type": "text", "text": "one"}]]))
    journal = start_journal(session)
    await run(session, "first")
    journal_of(session).close()
    with journal.path.open("a") as handle:
        handle.write(json.dumps(PING) + "\n")  # the earlier process kept the cache warm once
    load = read_journal(journal.path)
    assert len(load.pings) == 1 and load.warnings == []

    fresh = session_on(tmp_path, claude([[{"type": "text", "text": "two"}]]))
    resumed, _ = resume_journaled(fresh, load)
    err = io.StringIO()
    await consume(fresh, "second", io.StringIO(), err)
    resumed.close()

    call = cost_usd(fresh.model, USAGE)
    ping = cost_usd(fresh.model, UsageInfo(3, 1, 0, 60_000))
    assert call and ping and fmt_usd(call) != fmt_usd(call + ping)  # (the ping shows in the figures)
    line = next(line for line in err.getvalue().splitlines() if line.startswith("[budget]"))
    assert line.startswith("[budget] 1 call ·"), line  # this process's one call
    assert line.endswith(f"this run {fmt_usd(call)} (session {fmt_usd(2 * call + ping)})"), line


async def test_a_fresh_run_still_says_session(tmp_path: Path) -> None:
    session = session_on(tmp_path, claude([[{"type": "text", "text": "one"}]]))
    err = io.StringIO()
    await consume(session, "first", io.StringIO(), err)
    assert err.getvalue().rstrip().endswith(f"· session {fmt_usd(cost_usd(session.model, USAGE))}"), err.getvalue()
