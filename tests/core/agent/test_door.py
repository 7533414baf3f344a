"""`open_session` is the one door every face opens a session through (the TUI, -p, serve's tabs, and the next
ones: ACP, a proxy): these tests drive it as a new face would, with no CLI in between."""

from __future__ import annotations

import pytest

from tui_agent.core import events as ev
from tui_agent.core import trace
from tui_agent.core.agent.door import SessionOptions, SessionRefused, open_session
from tui_agent.core.agent.budget import BudgetLedger
from tui_agent.core.messages import protocol_errors, user_text


async def test_a_new_face_opens_a_session_runs_a_turn_and_reads_the_sessions_own_figures(tmp_path):
    opened = open_session(SessionOptions(workspace=tmp_path, face="acp", model="demo", headless=True, env={}))
    session = opened.session
    assert isinstance(session.ledger, BudgetLedger)
    for notice in await session.start_background():
        assert isinstance(notice, ev.Notice)
    events = [e async for e in session.run_turn("what is here?")]
    assert events[-1].reason == "completed"
    assert not protocol_errors(session.history)
    # the ledger is the session's, fed by its events before any face: every face reads the same figures
    assert session.ledger.calls and session.ledger.model == session.model
    assert session.ledger.summary_line()
    await session.aclose()


def test_a_budget_no_request_fits_is_refused_before_anything_runs_or_is_saved(tmp_path):
    hooks = []
    with pytest.raises(SessionRefused, match="Impossible budget"):
        open_session(SessionOptions(workspace=tmp_path, model="demo", context_window=100, env={},
                                    prepare=(lambda session: hooks.append(session) or [],)))
    assert hooks == []  # the journal hook never ran: nothing was saved


def test_history_then_prepare_hooks_then_the_trace_name_in_that_order(tmp_path, monkeypatch):
    seen = []
    bound = []
    monkeypatch.setattr(trace, "bind_session", lambda sid: bound.append(sid))

    def journal(session):
        seen.append(len(session.history))
        session.session_id = "abc123"
        return [ev.Notice("journaled", "info")]

    history = [user_text("earlier prompt"), {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    opened = open_session(SessionOptions(workspace=tmp_path, model="demo", env={}, history=history,
                                         prepare=(journal,)))
    assert seen == [2]  # the hook saw the loaded history
    assert [n.text for n in opened.notices][-1] == "journaled"
    assert bound == ["abc123"]  # trace lines name the journaled id, set by the hook


def test_providers_come_from_one_table(tmp_path):
    from tui_agent.core.providers.config import PROVIDERS, provider_from_env

    assert set(PROVIDERS) == {"anthropic", "openai", "bedrock", "vertex", "foundry"}  # the clouds are rows too
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    assert provider_from_env(env).name == PROVIDERS["openai"].name
    env = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
    assert provider_from_env(env).name == PROVIDERS["anthropic"].name  # the first key in the table wins
    env = {**env, "CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "a",
           "AWS_SECRET_ACCESS_KEY": "s"}  # a Bedrock that can run (credentials: issue 40)
    assert provider_from_env(env).name == PROVIDERS["bedrock"].name  # a CLAUDE_CODE_USE_* switch wins over keys
