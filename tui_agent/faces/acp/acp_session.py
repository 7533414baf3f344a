"""One ACP session's state (`AcpSession`): the engine's session, its running turn, what the next request
will hold and what the client was told. Its own module, below the agent (`agent.py`) and the slash commands
(`commands.py`) that both act on it, so neither imports the other."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from tui_agent.core import events as ev
from tui_agent.core.agent.session import Session
from tui_agent.faces.acp import compaction_approval
from tui_agent.faces.acp.compaction import CompactionReporter


@dataclass
class AcpSession:
    """One ACP session: the engine's session, its running turn, and what the next request will hold."""

    session: Session
    turn: asyncio.Task | None = None
    next_request: ev.NextRequestChanged | None = None
    pending_usage: bool = False  # a call ended and its usage (if the provider reports one) is not in yet
    notices: list[ev.Notice] = field(default_factory=list)
    compactions: CompactionReporter = field(default_factory=CompactionReporter)
    # A request of the client is being answered: it sends the next request's usage when it is done. Between
    # requests, a change of the next request (a summary written in the background) is sent on its own.
    busy: bool = True
    told: ev.NextRequestChanged | None = None  # the next request whose figures the client was sent last
    approvals: int = 0  # compaction questions asked (their cards' ids)
    asked: compaction_approval.AskedCard | None = None  # answered; closed by the turn's next event
