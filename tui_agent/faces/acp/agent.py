"""The ACP agent: the SDK's `Agent` interface wired to `Session`s opened through the one door.

Each `session/new` opens a journaled session (so `session/load` can resume it by its id), each
`session/prompt` runs one turn as a task (so `session/cancel` can stop it; the loop repairs the history on
the way out) and streams `updates.session_updates` of its events. A permission prompt goes to the client
through `session/request_permission` and its answer is obeyed. Slash commands are advertised and run on
the engine itself (`commands.py`), and the `usage_update` sent after them is that next request's figures
(from `NextRequestChanged`, the panel's own source). How a turn ended is `turn_end.py`'s (a stop reason, or
an error response); what `session/new` and `session/load` check is `opening.py`'s; asking the editor before
a compaction is `compaction_approval.py`'s.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, schema
from acp.helpers import update_agent_message_text

from tui_agent import __version__
from tui_agent.core import events as ev
from tui_agent.core.access.gate import PermissionDecision
from tui_agent.core.agent.door import SessionOptions, SessionRefused, open_session
from tui_agent.core.agent.event_wire import WireView, read
from tui_agent.faces.acp import compaction_approval
from tui_agent.faces.acp.acp_session import AcpSession
from tui_agent.faces.acp.commands import advertised, prompt_text, run_command
from tui_agent.faces.acp.compaction import (
    CompactionReporter,
    declares_compaction,
    process_prefix,
    send_json_update,
)
from tui_agent.faces.acp.opening import checked_cwd, invalid_params, read_saved, save_now
from tui_agent.faces.acp.turn_end import TurnWatch
from tui_agent.faces.acp.updates import session_updates, tool_title, usage_update

PERMISSION_OPTIONS = (
    ("allow_once", "Allow once", "allow_once", PermissionDecision.ALLOW_ONCE),
    ("allow_session", "Allow for this session", "allow_always", PermissionDecision.ALLOW_SESSION),
    ("deny", "Deny", "reject_once", PermissionDecision.DENY),
)


class TuiAgent:
    """The SDK's `Agent`: `tui-agent acp` serves one client over stdio."""

    def __init__(self, model: str | None = None, env: dict[str, str] | None = None,
                 approve_compaction: bool | None = None) -> None:
        self.model = model
        self.env = env
        self.approve_compaction = approve_compaction  # None: COMPACT_APPROVE decides
        self.conn: Any = None
        self.sessions: dict[str, AcpSession] = {}
        self.client_capabilities: schema.ClientCapabilities | None = None
        self.compaction_rfd = False  # the client declared the Session Compaction RFD's capability
        self.tasks: set[asyncio.Task] = set()  # updates sent between the client's requests

    def observe(self, event: Any) -> None:
        """The SDK's stream observer: the raw `initialize` says what the SDK's schema cannot parse yet."""
        declared = declares_compaction(event.message) if event.direction == "incoming" else None
        if declared is not None:
            self.compaction_rfd = declared

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> schema.InitializeResponse:
        self.client_capabilities = client_capabilities
        capabilities = schema.AgentCapabilities(
            load_session=True, prompt_capabilities=schema.PromptCapabilities(embedded_context=True),
            mcp_capabilities=schema.McpCapabilities(http=True, sse=False))
        return schema.InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=capabilities,
                                         agent_info=schema.Implementation(name="tui-agent", title="tui-agent",
                                                                          version=__version__))

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> schema.NewSessionResponse:
        opened = await self._open(checked_cwd(cwd), None, mcp_servers=mcp_servers)
        return schema.NewSessionResponse(session_id=opened)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None,
                           **kwargs: Any) -> schema.LoadSessionResponse:
        workspace = checked_cwd(cwd)
        if session_id in self.sessions:  # open in this process (its journal is ours): the client is told again
            await self._replay(session_id)
            state = self.sessions[session_id]
            await self._send(session_id, schema.AvailableCommandsUpdate(
                session_update="available_commands_update", available_commands=advertised(state.session)))
            await self._send_next_usage(session_id, state)
            return schema.LoadSessionResponse()
        opened = await self._open(workspace, read_saved(session_id), session_id, mcp_servers=mcp_servers)
        await self._replay(opened)
        return schema.LoadSessionResponse()

    async def _open(self, cwd: Path, load: Any, wanted_id: str | None = None, mcp_servers: Any = None) -> str:
        """Open a session through the door (journaled: new, saved at once, or resumed from `load`), start
        its background work, advertise the commands and send the first usage update (what the next request
        holds)."""
        from tui_agent.faces.acp.client_mcp import env_with_client_servers
        from tui_agent.faces.sessions import journal_hook

        env, private = env_with_client_servers(mcp_servers or [], cwd.resolve(), self.env or os.environ)
        options = SessionOptions(workspace=cwd, face="acp", model=self.model, prepare=[journal_hook(load)],
                                 env=env, approve_compaction=self.approve_compaction)
        try:
            opened = open_session(options)
        except SessionRefused as error:
            raise invalid_params(str(error)) from error
        session = opened.session
        problem = save_now(session) if load is None else None
        if problem is not None:
            opened.notices.append(ev.Notice(problem, "warning"))
        if private is not None:
            session.closers.append(lambda: _remove(private))
        session_id = wanted_id or session.session_id or f"acp-{session.trace_id}"
        reporter = CompactionReporter(self.compaction_rfd, process_prefix())
        state = AcpSession(session, notices=opened.notices, compactions=reporter)
        session.listeners.append(lambda event: self._heard(session_id, state, event))
        session.ask_approval = self._approver(session_id, state)
        state.notices += await session.start_background()
        self.sessions[session_id] = state
        from tui_agent.faces.acp.client_fs import use_client_files
        from tui_agent.faces.acp.client_terminal import use_client_terminal

        use_client_terminal(session, self.conn, session_id, self.client_capabilities)
        use_client_files(session, self.conn, session_id, self.client_capabilities)
        session.announce_next("opened")
        await self._send(session_id, schema.AvailableCommandsUpdate(
            session_update="available_commands_update", available_commands=advertised(session)))
        await self._send_next_usage(session_id, state)
        self._idle(session_id, state)
        return session_id

    def _heard(self, session_id: str, state: AcpSession, event: Any) -> None:
        """Every engine event, in order, as it happens (turns and background work alike)."""
        wire = read(event)  # (the wire form's kind and fields: core/agent/event_wire.py)
        if wire.kind == "NextRequestChanged":
            state.next_request = event  # (its plan is handed to the ledger whole)
            if not state.busy:  # e.g. the summary /compact started joined the next request
                self._later(self._send_next_usage(session_id, state))
        elif wire.kind == "IdleChosen" and not state.busy and state.next_request is not None:
            self._later(self._send_next_usage(session_id, state))  # its `_meta` says the idle choice
        elif wire.kind == "SummaryWritten":
            for update in state.compactions.summary_updates(wire["call"], wire["summary"], wire["error"]):
                self._later(self._send(session_id, update))

    def _approver(self, session_id: str, state: AcpSession) -> Any:
        """The session's `ask_approval`: the editor is asked with a permission request (see
        `compaction_approval.py`); "stop asking" turns the mode off."""

        async def ask_approval(preview: Any) -> Any:
            state.approvals += 1
            card = f"compaction-approval-{state.approvals}"
            answer, keep = await compaction_approval.ask(self.conn, session_id, card, preview,
                                                         state.session.ledger.window)
            state.session.approve_compaction = state.session.approve_compaction and keep
            state.asked = compaction_approval.AskedCard(card, answer, preview.call)
            return answer

        return ask_approval

    def _idle(self, session_id: str, state: AcpSession) -> None:
        """The client's request is answered. A change that came while its last update was on its way is
        sent now: the client's meter always ends on the next request."""
        state.busy = False
        if state.next_request is not state.told:
            self._later(self._send_next_usage(session_id, state))

    def _later(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _replay(self, session_id: str) -> None:
        """`session/load`: the client is sent the conversation so far (the user's prompts and the answers)."""
        from acp.helpers import update_user_message_text

        for message in self.sessions[session_id].session.history:
            content = message.get("content")
            texts = [content] if isinstance(content, str) else [
                block.get("text", "") for block in content or [] if isinstance(block, dict) and block.get("type") == "text"]
            for text in filter(None, texts):
                update = (update_user_message_text(text) if message.get("role") == "user"
                          else update_agent_message_text(text))
                await self._send(session_id, update)

    async def _send(self, session_id: str, update: Any) -> None:
        if isinstance(update, dict):  # an update the SDK has no model for yet (compaction.py)
            await send_json_update(self.conn, session_id, update)
        else:
            await self.conn.session_update(session_id=session_id, update=update)

    async def _send_next_usage(self, session_id: str, state: AcpSession) -> None:
        """The meter between turns: the next request's figures, as the panel draws them."""
        told = state.told = state.next_request
        if told is None:
            return
        ledger = state.session.ledger
        figures = ledger.preview(told.plan.result, told.base.total)
        update = usage_update(ledger, figures)
        if update is not None:
            await self._send(session_id, update)

    # -- prompts -----------------------------------------------------------------------------------
    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> schema.PromptResponse:
        state = self._state(session_id)
        if state.turn is not None and not state.turn.done():
            raise RequestError.invalid_request({"reason": "a turn is already running in this session"})
        state.busy = True
        try:
            return await self._answer(session_id, state, prompt_text(prompt))
        finally:
            self._idle(session_id, state)

    async def _answer(self, session_id: str, state: AcpSession, text: str) -> schema.PromptResponse:
        if text.lstrip().startswith("/"):
            outcome = await run_command(state, text.strip())
            if outcome is not None:
                for update in outcome.updates:
                    await self._send(session_id, update)
                await self._send(session_id, update_agent_message_text(outcome.text))
                await self._send_next_usage(session_id, state)
                return schema.PromptResponse(stop_reason="end_turn")
        watch = TurnWatch(len(state.session.history))
        state.turn = asyncio.create_task(self._turn(session_id, state, text, watch))
        try:
            await state.turn
        except asyncio.CancelledError:
            if asyncio.current_task() is not None and asyncio.current_task().cancelling():  # type: ignore[union-attr]
                raise
        await self._send_next_usage(session_id, state)
        reason = watch.stop_reason(len(state.session.history))  # a failed turn raises its error response
        return schema.PromptResponse(stop_reason=reason)  # type: ignore[arg-type]

    async def _turn(self, session_id: str, state: AcpSession, text: str, watch: TurnWatch) -> None:
        for notice in state.notices:
            await self._send(session_id, update_agent_message_text(f"[{notice.level}] {notice.text}\n\n"))
        state.notices = []
        async for event in state.session.run_turn(text):
            watch.see(event)
            if state.asked is not None:  # the compaction question's card closes with what followed it
                asked, state.asked = state.asked, None
                await self._send(session_id, asked.closing(event))
            await self._before(session_id, state, event)
            for update in session_updates(event, state.session.ledger, state.compactions):
                await self._send(session_id, update)
            wire = read(event)
            if wire.kind == "PermissionRequested":
                await self._ask(session_id, wire)
            elif wire.kind == "AssistantMessage":
                state.pending_usage = True
            elif wire.kind == "Usage" and wire["purpose"] == "call":
                state.pending_usage = False
        await self._before(session_id, state, None)
        refused = watch.refusal_text() if not watch.started else None
        if refused:
            await self._send(session_id, update_agent_message_text(refused))

    async def _before(self, session_id: str, state: AcpSession, event: Any) -> None:
        """After a call whose provider reports no usage (the demo model), the ledger's estimate is the
        meter: sent as soon as the next event shows no usage is coming."""
        if state.pending_usage and (event is None or read(event).kind != "Usage"):
            state.pending_usage = False
            update = usage_update(state.session.ledger)
            if update is not None:
                await self._send(session_id, update)

    async def _ask(self, session_id: str, event: WireView) -> None:
        """`session/request_permission`; the client's choice is the decision (cancelled: denied). The decision
        is the event's future, which stays in this process (the wire form leaves it out)."""
        options = [schema.PermissionOption(option_id=option_id, name=name, kind=kind)  # type: ignore[arg-type]
                   for option_id, name, kind, _ in PERMISSION_OPTIONS]
        tool_call = schema.ToolCallUpdate(tool_call_id=event["id"], title=tool_title(event["tool_name"], event["summary"]),
                                          status="pending", raw_input=event["input"])
        decision = PermissionDecision.DENY
        try:
            response = await self.conn.request_permission(options=options, session_id=session_id,
                                                          tool_call=tool_call)
            chosen = getattr(response.outcome, "option_id", None)
            decision = next((d for option_id, _, _, d in PERMISSION_OPTIONS if option_id == chosen), decision)
        finally:
            future = event.source.decision
            if not future.done():
                future.set_result(decision)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        state = self.sessions.get(session_id)
        if state is not None and state.turn is not None and not state.turn.done():
            state.turn.cancel()

    async def aclose(self) -> None:
        """The client hung up: stop running turns, then shut down what each session started (MCP servers)."""
        for state in self.sessions.values():
            if state.turn is not None and not state.turn.done():
                state.turn.cancel()
            await state.session.aclose()

    def _state(self, session_id: str) -> AcpSession:
        state = self.sessions.get(session_id)
        if state is None:
            raise invalid_params(f"no session {session_id!r} in this agent (session/new or session/load "
                                 "opens one)", sessionId=session_id)
        return state


async def _remove(folder: Path) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
