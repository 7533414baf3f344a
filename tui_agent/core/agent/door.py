"""The one door every face opens a session through: `open_session(SessionOptions(...))`.

A face (the TUI, `-p`, each `serve` tab, `--print-outbound`, and the next ones: an ACP server, a proxy) needs
the same steps in the same order, and each face used to copy them: build the session from flags and the
environment, refuse a budget no request fits before anything runs or is saved, load a transcript's messages
(leaving out thinking another model signed), attach the journal (resume it or start one), then name the
session in trace lines. Here they are once; a face only says what it wants (`SessionOptions`) and shows the
notices it gets back. The session's figures (`session.ledger`, a `BudgetLedger`) are the session's own, fed
by its events before any face sees them, so every face reads the same numbers.

Nothing here prints, reads the terminal or imports an SDK: a face decides how a refusal and the notices
look (one line on stderr, a modal, an ACP error), and the first model call imports what it needs.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core import trace
from tui_agent.core.agent.budget_check import session_below_base, session_budget_error
from tui_agent.core.agent.factory import build_session
from tui_agent.core.agent.session import Session
from tui_agent.core.compaction.settings import CompactSettings
from tui_agent.core.compaction.strategies.server_edits import server_strategy_error
from tui_agent.core.events import Notice
from tui_agent.core.messages import Message

# What to do with a built session before its first turn (the faces' journal hook: resume a saved session,
# or start saving this one); returns notices to show.
Prepare = Callable[[Session], list[Notice]]


@dataclass(frozen=True)
class SessionOptions:
    """What a face asks for. Every field but `workspace` has the default a plain `tui-agent` run uses."""

    workspace: Path
    face: str = "tui"  # named in the `cli.start` trace line: tui, headless, outbound, acp, proxy…
    model: str | None = None  # a model id, or "demo"; None: the environment's default
    provider: str | None = None  # force a provider (a key of PROVIDERS in factory.py)
    headless: bool = False  # nobody can be asked: permissions refuse what they would ask
    allow_write: bool | None = None  # headless: allow tools that change things (None: ALLOW_WRITE decides)
    max_turns: int | None = None
    context_window: int | None = None
    max_output_tokens: int | None = None
    compact: CompactSettings | None = None  # None: from the environment (COMPACT…)
    trust_project_mcp: bool = False
    demo_delay: float = 0.0  # seconds between the demo model's chunks (the TUI's 0.01 makes it look alive)
    history: Sequence[Message] = ()  # messages loaded before the first turn (a Claude Code transcript)
    history_notice: Notice | None = None  # what the face says about `history` ("Loaded 120 messages from …")
    written_by: Mapping[int, str] = field(default_factory=dict)  # history index → the model that wrote it
    prepare: Sequence[Prepare] = ()  # run in order once the history is in (the journal hook)
    env: Mapping[str, str] = field(default_factory=lambda: os.environ)
    approve_compaction: bool | None = None  # ask before each compaction event (None: COMPACT_APPROVE decides)
    # what the session does while it waits: auto, ping, compact or cold (None: the organisation policy's, else
    # the settings files', else auto: `core/access/effective_settings.py`); never wider than the policy's
    idle: str | None = None


@dataclass
class OpenedSession:
    """A session ready for its first turn and what its opening has to say (shown by the face, in order)."""

    session: Session
    notices: list[Notice]
    idle: str = "auto"  # the idle policy in force (`SessionOptions.idle` within the organisation policy)
    ping_cap_usd: float | None = None  # what pings may cost this session (None: no cap was set)


_OPENED: "list[weakref.ref[Session]]" = []  # (a Session is a dataclass: no hash, so no WeakSet)


def opened_sessions() -> list[Session]:
    """The sessions opened in this process and still alive: a crash report keeps their conversation out
    of its log (`core/crash_text.py`) without holding them alive."""
    alive = [session for ref in _OPENED if (session := ref()) is not None]
    _OPENED[:] = [weakref.ref(session) for session in alive]
    return alive


class SessionRefused(Exception):
    """The options cannot make a working session (a budget no request fits): one line, nothing was run or
    saved. A face shows `str(error)` as a usage error."""


def open_session(options: SessionOptions) -> OpenedSession:
    """Build, check, fill and prepare a session for `options`; raise `SessionRefused` when none can work.

    The steps, in the order every face needs: the session from flags and environment (`build_session`:
    provider, tools, permissions, settings, MCP queued on `background_start`); the budget check, before
    anything runs or is saved; the loaded history, without thinking another model signed; each `prepare`
    hook (a journal now has the session's id); the session named in trace lines. Slow start-up work stays
    queued on `session.background_start`: the TUI runs it after its first frame, other faces await
    `session.start_background()` before the first turn.
    """
    from tui_agent.core.providers.cloud import CloudConfigError

    try:
        session, notices = build_session(
            options.workspace, model=options.model, provider=options.provider, headless=options.headless,
            allow_write=options.allow_write, max_turns=options.max_turns, env=options.env,
            demo_delay=options.demo_delay, context_window=options.context_window,
            max_output_tokens=options.max_output_tokens, compact=options.compact,
            trust_project_mcp=options.trust_project_mcp)
    except CloudConfigError as error:  # CLAUDE_CODE_USE_BEDROCK=1 without AWS_REGION, ...: one line, nothing run
        raise SessionRefused(str(error)) from None
    from tui_agent.core.agent.approval import env_approve

    wanted = options.approve_compaction
    session.approve_compaction = env_approve(dict(options.env)) if wanted is None else wanted
    problem = (session_budget_error(session) or session_below_base(session)
               or server_strategy_error(session.compaction_mode(), session.provider))
    if problem:
        raise SessionRefused(problem)
    idle, cap, told = _idle_settings(options)
    if not options.headless:  # -p exits when its turn ends: nothing idle to keep warm
        _keep_warm(session, options.env, idle, cap)
    if options.history:
        session.history.extend(options.history)
        notices += [options.history_notice] if options.history_notice is not None else []
        notices += _foreign_thinking(session, options.written_by)
    for prepare in options.prepare:
        notices += prepare(session)
    opened_sessions()  # (the dead ones go)
    _OPENED.append(weakref.ref(session))
    trace.bind_session(session.trace_id)  # after `prepare`: a journaled session has its id by now
    trace.trace("cli.start", mode=options.face)
    return OpenedSession(session, notices + told, idle, cap)


def _idle_settings(options: SessionOptions) -> tuple[str, float | None, list[Notice]]:
    """The idle policy and the ping spend cap in force: the face's choice (`--idle`, else TUI_AGENT_IDLE) within
    the organisation policy (a wider one is refused in one line), else the policy's or the settings files'."""
    from tui_agent.core.access.effective_settings import effective_settings, merge
    from tui_agent.core.access.org_policy import IDLE_POLICIES, Layer, policy_path, read_layer
    from tui_agent.core.idle import ENV, mode_from

    settings = effective_settings(options.workspace, options.env)  # its notices were the factory's to show
    wanted, source = options.idle, f"{options.face} idle"
    if wanted is None and options.env.get(ENV, "").strip():
        try:
            wanted, source = mode_from(options.env), ENV
        except ValueError as error:
            raise SessionRefused(str(error)) from None
    if wanted is None:
        return settings.idle, settings.ping_cap_usd, []
    if wanted not in IDLE_POLICIES:
        raise SessionRefused(f"idle policy {wanted!r} is not one of {', '.join(IDLE_POLICIES)}")
    path = policy_path(options.env)
    policy, _ = read_layer(path, f"organisation policy {path}", policy=True)
    chosen = merge(policy, [Layer(settings.idle_source, idle=settings.idle), Layer(source, idle=wanted)])
    return chosen.idle, settings.ping_cap_usd, [Notice(line, "warning") for line in chosen.notices]


def _keep_warm(session: Session, env: Mapping[str, str], idle: str, cap: float | None) -> None:
    """What the session does while it waits (`idle_policy.py`): the idle mode's choice at each moment a ping is
    due, within `--keep-warm` / TUI_AGENT_KEEP_WARM minutes (0: never) and the ping spend cap; the prior of how
    long this user stays away is read from the journals once, at the first decision. A bad value refuses."""
    from tui_agent.core.agent.idle_policy import install_idle_policy
    from tui_agent.core.agent.idle_waits import prior_of
    from tui_agent.core.agent.keep_warm import minutes_from

    try:
        minutes = minutes_from(env)
    except ValueError as error:
        raise SessionRefused(str(error)) from None
    # (read at the first decision: a resumed session has its id by then, and its own earlier waits count as its)
    install_idle_policy(session, idle, minutes, prior=lambda: prior_of(env, session.session_id), ping_cap_usd=cap)


def _foreign_thinking(session: Session, written_by: Mapping[int, str]) -> list[Notice]:
    """Leave out the transcript's thinking that another model signed, before the first call (see
    `core.thinking`); a notice says how much."""
    from tui_agent.core.thinking import strip_foreign_thinking

    removed = strip_foreign_thinking(session.history, written_by, session.model)
    if not removed:
        return []
    return [Notice(f"Left out {removed} thinking block{'s' if removed != 1 else ''} of the transcript: "
                   f"another model signed {'them' if removed != 1 else 'it'}, so {session.model} would refuse "
                   "them.", "info")]
