"""A Session: the full, append-only conversation across turns plus the model and tool configuration.

Every face drives the engine through a Session: `async for event in session.run_turn(prompt)`. The
history list is only ever appended to (by the loop) or replaced wholesale by `/clear`; compaction works
on outbound copies, so everything that was said can still be shown. What the user steers of the outbound
copy (pin, exclude, expand, `/compact`, the summary draft) is `steering.py`, called from here.
"""

from __future__ import annotations

import uuid
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable

from tui_agent.core import events as ev
from tui_agent.core import trace
from tui_agent.core.agent.base_prompt import BASE_SYSTEM_PROMPT
from tui_agent.core.agent import steering
from tui_agent.core.agent.budget import BudgetLedger
from tui_agent.core.agent.call import CallPlan, plan_call
from tui_agent.core.agent.commands import CommandRegistry
from tui_agent.core.compaction import make_compactor
from tui_agent.core.compaction.protocol import CompactorProtocol
from tui_agent.core.agent.context_report import ContextView
from tui_agent.core.agent.summary_draft import BackgroundSummaries, SummaryDraft
from tui_agent.core.agent.system_prompt import base_breakdown
from tui_agent.core.agent.loop_state import DEFAULT_MAX_TURNS, LoopState
from tui_agent.core.redact import redact_event
from tui_agent.core.messages import Message
from tui_agent.core.access.gate import PermissionPolicy
from tui_agent.core.providers.base import Provider
from tui_agent.core.tokens import text_tokens, tools_tokens
from tui_agent.core.tools.base import ToolContext, ToolRegistry

if TYPE_CHECKING:
    from tui_agent.core.agent.approval import Approver
    from tui_agent.core.compaction import CompactOptions, CompactPlan, CompactPolicy
    from tui_agent.core.agent.loop import LoopConfig
    from tui_agent.core.agent.commands import SkillCommandState
    from tui_agent.core.mcp.state import McpState
    from tui_agent.core.providers.base import ModelRequest
    from tui_agent.core.access.trust import Answer, TrustQuestion



def trace_id() -> str:
    """A short stand-in id for a session that is not journaled, so its trace lines still stand apart."""
    return uuid.uuid4().hex[:6]


@dataclass
class Session:
    provider: Provider
    tools: ToolRegistry
    workspace: Path
    # None: the tiered v2 compactor with `compact_policy`; CompactOptions: the first landing's v1 with them.
    compact: CompactOptions | None = None
    compact_mode: str = "v2"  # v2 | v1 | seed | off
    compact_policy: CompactPolicy | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    permissions: PermissionPolicy = field(default_factory=PermissionPolicy)
    system_prompt_builder: Callable[["Session"], str] | None = None
    history: list[Message] = field(default_factory=list)
    usage_history: list[ev.Usage] = field(default_factory=list)
    resumed_calls: list[tuple[int, int, str | None]] = field(default_factory=list)  # journaled: call, tokens, event
    commands: CommandRegistry = field(default_factory=CommandRegistry)
    # Slow start-up work (MCP servers, SDK imports) that must not block the TUI's first frame: the TUI
    # runs these in a worker after mounting, headless awaits them before the first turn. Each returns
    # notices (warnings such as a skipped MCP server) to show.
    background_start: list[Callable[["Session"], Awaitable[list[ev.Notice]]]] = field(default_factory=list)
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    # Engine-owned state of the optional parts, in typed fields (set by their installers).
    mcp: "McpState | None" = None
    skill_commands: "SkillCommandState | None" = None
    # Set when the session is journaled (`journal.start_journal`): the id `--resume ID` takes.
    session_id: str | None = None
    # Called with every engine event of a turn and every session event (model switch, /clear, turn
    # closed), in order, before any face sees it: the journal is one. A listener must not raise.
    listeners: list[Callable[[Any], None]] = field(default_factory=list)
    # How the face asks "trust this project's MCP servers / allow rules?" (the TUI's modal). None: nobody
    # can be asked (headless), so what the repository wants stays off unless a flag says otherwise.
    ask_trust: Callable[["TrustQuestion"], Awaitable["Answer"]] | None = None
    # The session's figures (context, cache, cost), fed by its own events before any listener: every face
    # (panel, meter, -p's budget line, an ACP or proxy face) reads this one ledger.
    ledger: BudgetLedger = field(default_factory=BudgetLedger)
    # Approve before compacting (`approval.py`): asked through what only a face with a user sets (the TUI).
    approve_compaction: bool = False
    ask_approval: "Approver | None" = None

    def __post_init__(self) -> None:
        self.workspace = Path(self.workspace).resolve()
        self.ctx = ToolContext(workspace=self.workspace)
        if self.permissions.workspace is None:
            self.permissions.workspace = self.workspace  # remembered rules are rooted here
        # Tools that read many files at once (Grep) consult the policy to leave out what a deny rule
        # forbids reading; the loop's gate only sees the paths a call names.
        self.ctx.permissions = self.permissions
        self.ctx.context_view = self.context_view  # the Context tool reads the one plan through it
        self.state = LoopState()
        self.running = False
        self._compactor: CompactorProtocol | None = None  # made at its first use (`compactor`)
        self._trace_id = trace_id()
        self.summaries = BackgroundSummaries(self._heard_in_background, self._summary_ready)
        self.ledger.configure(self.provider.model, self.provider.context_window, self.provider.max_output_tokens)

    @property
    def compactor(self) -> CompactorProtocol:
        """The compaction strategy, made the first time it is asked for rather than with the session: the
        engine behind it (tiers, facts, recap, the other strategies) is not needed to draw the TUI's first
        frame, and loads after it (the first plan, the prewarm, `/budget`…). Made from the session's
        strategy, policy and provider as they are then; a model switch makes it before the switch."""
        if self._compactor is None:
            self._compactor = self._make_compactor()
        return self._compactor

    @compactor.setter
    def compactor(self, compactor: CompactorProtocol) -> None:
        self._compactor = compactor

    def compaction_mode(self) -> str:
        """The strategy the compactor is (or will be) made for: v2, v1 (CompactOptions given), seed, off or a
        server mode."""
        return "v1" if self.compact is not None and self.compact_mode == "v2" else self.compact_mode

    def policy_in_force(self) -> CompactPolicy | None:
        """The compactor's policy once it is made (a `/budget` or a model switch moved it), else the
        session's, which it will be made from: the door's budget check reads it without making the compactor."""
        made = getattr(self._compactor, "policy", None) if self._compactor is not None else None
        return made or self.compact_policy

    def _make_compactor(self) -> CompactorProtocol:
        return make_compactor(self.compaction_mode(), self.provider.context_window, self.provider.max_output_tokens,
                              policy=self.compact_policy, options=self.compact, rerunnable=self.tools.rerunnable)

    # -- configuration -------------------------------------------------------------------------
    def system_prompt(self) -> str:
        if self.system_prompt_builder is not None:
            return self.system_prompt_builder(self)
        return BASE_SYSTEM_PROMPT.format(workspace=self.workspace)

    def loop_config(self) -> LoopConfig:
        from tui_agent.core.agent.loop import LoopConfig  # the loop loads with the first turn (`loop_state.py`)

        return LoopConfig(
            provider=self.provider,
            tools=self.tools,
            system_prompt=self.system_prompt,
            compactor=self.compactor,
            max_turns=self.max_turns,
            permissions=self.permissions,
            answer_denials=self.permissions.mode == "headless",
            headless=self.permissions.mode == "headless",
            summaries=self.summaries,
            approve=self.ask_approval if self.approve_compaction and self.permissions.mode != "headless" else None,
        )

    @property
    def model(self) -> str:
        return self.provider.model

    # -- turns ---------------------------------------------------------------------------------
    async def run_turn(self, prompt: str) -> AsyncIterator[ev.EngineEvent]:
        """One user prompt → events until the turn ends (completed, max_turns, denied, error)."""
        steering.swap_summary(self, "turn start")  # a draft that came in during the last turn joins the recap now
        self.running = True
        trace.bind_session(self.trace_id)  # the turn's task: its trace lines name this session
        # `aclosing`: when this generator is closed (the face's task cancelled while it was busy with an
        # event), the loop's generator is closed right away too, so its repair runs now, not whenever
        # the garbage collector gets to it.
        from tui_agent.core.agent.loop import run_turn

        try:
            async with aclosing(run_turn(self.history, prompt, self.loop_config(), self.ctx, self.state)) as events:
                async for event in events:
                    if isinstance(event, ev.Usage):
                        self.usage_history.append(event)
                    self.emit(event)
                    yield event
        finally:
            self.running = False
            self.emit(ev.TurnClosed(len(self.history)))
            if not steering.swap_summary(self, "turn end"):
                self.announce_next("turn end")

    @property
    def trace_id(self) -> str:
        """What trace lines call this session: its journal id, or a stand-in when it is not journaled."""
        return self.session_id or self._trace_id

    def emit(self, event: Any) -> None:
        """Hand `event` to the ledger, then every listener (a failing one is skipped, never fatal)."""
        event = redact_event(event)  # a server's words in it (a keep-warm ping's error): `core/redact.py`
        self.ledger.feed(event)
        for listener in list(self.listeners):
            try:
                listener(event)
            except Exception:  # noqa: BLE001 - a journal failure must not end the user's turn
                pass

    def clear(self) -> None:
        """`/clear`: a new, empty history; the system prompt, tools and permissions stay."""
        dropped = len(self.history)
        self.summaries.cancel()
        self.summaries.draft = None
        self.history = []
        self.usage_history = []
        self.ctx.read_files.clear()
        self.state.last_plan = None
        self.state.calls = 0  # the one counter: the next call is call 1 again
        # A new conversation gets a new compactor (same strategy and policy): nothing of the old one's
        # decisions applies, and a compactor that saw its history replaced would report an event for it.
        self.compactor = self._make_compactor()
        self._trace_id = trace_id()
        self.emit(ev.SessionCleared(dropped))  # the journal moves to a new file and session id here
        trace.bind_session(self.trace_id)
        self.announce_next("/clear")

    async def switch_model(self, provider: Provider) -> ev.ModelSwitched:
        """Send the next calls to `provider` (closing the old one) and tell the listeners.

        The one way to change the model mid-session, so the journal records it and a resumed session
        continues with the model it last used.
        """
        if self.running:
            raise RuntimeError("a turn is running; cancel it before switching the model")
        compactor = self.compactor  # (made for the old model, then moved to the new one, as ever)
        old, self.provider = self.provider, provider
        if old is not provider:
            try:
                await old.aclose()
            except Exception:  # noqa: BLE001 - closing the old client must not block the switch
                pass
        from tui_agent.core.models import for_model  # the new model's cache prices price its cuts

        price = for_model(provider.model)
        compactor.retarget(provider.context_window, provider.max_output_tokens, price.read, price.write)
        self.ledger.configure(provider.model, provider.context_window, provider.max_output_tokens)
        event = ev.ModelSwitched(old.model, provider.model, provider.name)
        self.emit(event)
        self.announce_next("/model")
        return event

    async def start_background(self) -> list[ev.Notice]:
        """Run the background start-up work once; a failing task becomes a warning, never a crash."""
        notices: list[ev.Notice] = []
        tasks, self.background_start = self.background_start, []
        for task in tasks:
            try:
                notices.extend(await task(self))
            except Exception as error:  # noqa: BLE001
                notices.append(ev.Notice(f"Start-up task failed: {error}", "warning"))
        return notices

    async def aclose(self) -> None:
        """Shut down what the session started (MCP servers, HTTP clients), in reverse order."""
        self.summaries.cancel()
        closers, self.closers = self.closers, []
        for close in reversed(closers):
            try:
                await close()
            except Exception:  # noqa: BLE001 - shutting down must not raise
                pass
        await self.provider.aclose()

    # -- budget views --------------------------------------------------------------------------
    @property
    def last_plan(self) -> CompactPlan | None:
        return self.state.last_plan

    def context_view(self) -> ContextView:
        """The history and the plan of the call being answered: what the Context tool reports from."""
        return ContextView(self.history, self.state.last_plan)

    def baseline_tokens(self) -> tuple[int, int]:
        """(system prompt, tool definitions) token estimates: what every call pays before any message."""
        return text_tokens(self.system_prompt()), tools_tokens(self.tools.schemas())

    @property
    def next_call(self) -> int:
        """The number of the next model call: the session's one counter (`state.calls`) plus one."""
        return self.state.calls + 1

    def plan_call(self) -> CallPlan:
        """What the next call would send (`core/agent/call.py`), without calling anything or keeping a decision:
        the loop plans its real call the same way, so the preview and the call cannot drift."""
        return plan_call(self.compactor, self.provider, self.system_prompt(), self.tools.schemas(), self.history,
                         self.next_call, keep=False, asked=self.state.asked_event)

    def announce_next(self, why: str) -> None:
        """Tell the listeners the next request may have changed (`NextRequestChanged`): the journal saves
        the compactor's state from it and the panel redraws from it."""
        if self.listeners:
            self.emit(ev.NextRequestChanged(self.plan_call(), base_breakdown(self), why))

    def switch_compaction(self, mode: str) -> None:
        """Another strategy (v2, v1, seed, off) from the next call on."""
        if self._compactor is None:  # made first with the strategy it had: a mode refused below leaves it in place
            self._compactor = self._make_compactor()
        self.compact_mode = mode
        self.compact = None
        self.compactor = self._make_compactor()
        self.announce_next("compaction strategy")

    # -- the user's steering of what is sent (`steering.py`: the history never changes) ---------------
    def pin(self, index: int, on: bool = True) -> None:
        steering.pin(self, index, on)

    def exclude(self, index: int, on: bool = True) -> None:
        steering.exclude(self, index, on)

    def expand(self, index: int, on: bool = True) -> None:
        steering.expand(self, index, on)

    async def compact_now(self, focus: str = "") -> str:
        return await steering.compact_now(self, focus)

    def edit_summary_draft(self, text: str) -> str:
        return steering.edit_summary_draft(self, text)

    # -- the summary draft (core/agent/summary_draft.py) ----------------------------------------------
    def summary_draft(self) -> SummaryDraft | None:
        """The newest summary draft (being written, ready, in the next request, sent, failed or stale)."""
        return self.summaries.draft

    async def wait_summary(self) -> SummaryDraft | None:
        """Until the summary being written is done (and swapped in when the session is idle)."""
        await self.summaries.wait()
        return self.summaries.draft

    def _summary_ready(self) -> None:
        if not self.running:
            steering.swap_summary(self, "summary ready")

    def _heard_in_background(self, event: Any) -> None:
        """Events of the background summary call: its usage is the session's like any call's."""
        if isinstance(event, ev.Usage):
            self.usage_history.append(event)
        self.emit(event)

    @property
    def calibration(self) -> float:
        """Real tokens per estimated token, learned from usage (1.0 before any)."""
        return self.compactor.ratio

    def calibrated(self, estimated_tokens: int) -> int:
        """An estimate scaled by what the API reported (still an estimate: show it with ≈)."""
        return round(estimated_tokens * self.calibration)

    def next_request(self) -> "ModelRequest":
        """The request the next call would send (compacted), e.g. for an exact `count_tokens`."""
        return self.plan_call().request

    async def count_next_tokens(self) -> int | None:
        """Exact input tokens of the next call where the provider can count them (None otherwise)."""
        if not self.history:
            return None
        return await self.provider.count_tokens(self.next_request())

