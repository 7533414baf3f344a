"""A key a server echoes is redacted wherever we show or store its words (issue 40: a gateway's 401 that
quotes the key showed ~85 characters of it on the chat line, the panel and in `TRACE=1` output). One
redaction (`core/redact.py`) for the turn's events (chat, panel, ACP, `serve`), trace lines, the journal,
the history's repair text, crash logs and OpenTelemetry attributes: the key we sent, and key shapes
(sk-ant-…, Bearer tokens, AWS keys). The real SDK against the fake Anthropic server on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import cli_env
from tests.fakes.fake_anthropic import FakeAnthropic, error_reply
from tests.turns import turn_events
from tui_agent.core import events as ev
from tui_agent.core import trace
from tui_agent.core.agent import telemetry
from tui_agent.core.agent.session import Session
from tui_agent.core.journal.writer import journal_of, start_journal
from tui_agent.core.providers.config import provider_from_env
from tui_agent.core.redact import redact
from tui_agent.core.tools import ToolRegistry, builtin_tools
from tui_agent.faces.acp.updates import session_updates
from tui_agent.core.crash import write_crash_log

KEY = "sk-ant-api03-" + "Gw7pQ2xZ" * 9 + "-Kq4AA"  # 89 characters, as a real key
AWS = "AKIAIOSFODNN7EXAMPLE"
GATEWAY_401 = f"invalid x-api-key: {KEY} (seen as Authorization: Bearer {KEY}; upstream id {AWS})"


def pieces(secret: str, size: int = 12) -> list[str]:
    return [secret[at:at + size] for at in range(0, len(secret) - size + 1, 4)]


def leaked(text: str) -> list[str]:
    return [piece for secret in (KEY, AWS) for piece in pieces(secret, min(12, len(secret))) if piece in text]


def session_for(fake: FakeAnthropic, root: Path) -> Session:
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_MODEL": "claude-fake-1",
           "MODEL_MAX_RETRIES": "0"}
    return Session(provider_from_env(env), ToolRegistry(builtin_tools()), workspace=root)


async def test_a_401_that_echoes_the_key_reaches_no_face_log_or_file(tmp_path: Path, monkeypatch) -> None:
    lines: list[str] = []
    monkeypatch.setenv("TRACE", "1")
    trace.set_sink(lines.append)
    try:
        with FakeAnthropic(api_key=KEY) as fake:
            fake.replies.append(error_reply(401, "authentication_error", GATEWAY_401))
            session = session_for(fake, tmp_path)
            start_journal(session)
            events = await turn_events(session, "hello")
            await session.aclose()
    finally:
        trace.set_sink(None)
    ended = events[-1]
    assert isinstance(ended, ev.TurnEnded) and ended.reason == "error"
    assert "[redacted]" in (ended.error or "") and "401" in (ended.error or "")  # still says what happened
    shown = [repr(event) for event in events]  # what every face (chat, panel, meter, serve) draws from
    acp = [json.dumps(update.model_dump(mode="json"), default=str) for event in events
           for update in session_updates(event, session.ledger)] + [f"[error] {ended.error}"]
    journal = journal_of(session).path.read_text()
    history = json.dumps(session.history)
    assert not leaked("\n".join(shown + acp + lines) + journal + history)
    assert any("query.turn_end reason=error" in line for line in lines)  # the trace was on


def test_the_key_we_sent_is_redacted_whatever_its_shape(tmp_path: Path) -> None:
    """A gateway's own key (no known shape) read from a mapping that is not os.environ: the key the
    provider sends is known to the redaction from then on."""
    odd = "gwtok.Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA"
    assert redact(f"denied {odd}") == f"denied {odd}"  # unknown until a provider sends it
    provider_from_env({"ANTHROPIC_API_KEY": odd, "ANTHROPIC_MODEL": "claude-fake-1"})
    assert redact(f"denied {odd} for you") == "denied [redacted] for you"


def test_crash_logs_and_span_attributes_use_the_same_redaction(tmp_path: Path) -> None:
    try:
        raise RuntimeError(f"gateway said: {GATEWAY_401}")
    except RuntimeError as error:
        path = write_crash_log(error, tmp_path)
    assert path is not None and not leaked(path.read_text())
    attributes = telemetry.attributes(telemetry.CallSpan("replay", "s", 1, f"claude {KEY}"))  # a recorded log's
    assert not leaked(json.dumps(attributes)) and "[redacted]" in attributes["gen_ai.request.model"]


def test_headless_with_trace_prints_the_error_without_the_key(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    with FakeAnthropic(api_key=KEY) as fake:
        fake.replies.append(error_reply(401, "authentication_error", GATEWAY_401))
        env = cli_env(tmp_path, fake, ANTHROPIC_API_KEY=KEY, TRACE="1", MODEL_MAX_RETRIES="0")
        done = subprocess.run([sys.executable, "-m", "tui_agent", "-p", "hello"], cwd=workspace, env=env,
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 1
    assert "error: " in done.stderr and "[redacted]" in done.stderr and "[trace]" in done.stderr
    assert not leaked(done.stdout + done.stderr), done.stderr


def test_what_is_said_outside_a_turn_is_redacted_too(tmp_path: Path) -> None:
    """A keep-warm ping that fails between turns, a summary drafted in the background: their words reach
    the listeners (the TUI's meter, the journal) through `Session.emit`, redacted there."""
    with FakeAnthropic(api_key=KEY) as fake:
        session = session_for(fake, tmp_path)
    heard: list[object] = []
    session.listeners.append(heard.append)
    session.emit(ev.KeepWarmStopped("failed", 1, f"ping refused: {GATEWAY_401}"))
    session.emit(ev.SummaryWritten(3, None, GATEWAY_401, 4))
    assert len(heard) == 2 and not leaked(repr(heard)) and repr(heard).count("[redacted]") >= 4
