"""Engine events: what the query loop reports, as plain frozen dataclasses.

Every face of the engine (the Textual app, the headless `-p` printer, the tests) consumes this one stream
with `match`/`case`. Nothing here knows about screens or terminals. A permission request carries an
`asyncio.Future` that the face resolves, so the engine can wait without knowing who answers. Two groups
live in their own modules of this wing and are re-exported here, so every face still reads one `events`:
what the server did on its own and why the cache missed (`server.py`), and keep-warm (`warm.py`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, Union

from tui_agent.core.messages import Message
from tui_agent.core.events.server import MISS_WORDS, CacheMissed, CacheMissSource, ServerEdited  # noqa: F401 - re-exported
from tui_agent.core.events.warm import CacheKeptWarm, IdleChosen, KeepWarmArmed, KeepWarmStopped  # noqa: F401 - re-exported

if TYPE_CHECKING:  # the compaction plans an event carries, named only: the ground floor imports no wing at run time
    from tui_agent.core.compaction import CompactPlan, CompactResult

TurnEndReason = Literal["completed", "max_turns", "cancelled", "error", "denied"]


@dataclass(frozen=True)
class BaseBreakdown:
    """What every call pays before any message, split like Claude Code's `/context` (≈ chars/4 tokens)."""

    system_prompt: int = 0  # the base instructions and tool guidance
    project_context: int = 0  # AGENTS.md / CLAUDE.md
    skills: int = 0  # the skills catalog
    builtin_tools: int = 0  # schemas of the built-in tools
    mcp_tools: int = 0  # schemas of MCP servers' tools

    @property
    def system(self) -> int:
        return self.system_prompt + self.project_context + self.skills

    @property
    def tools(self) -> int:
        return self.builtin_tools + self.mcp_tools

    @property
    def total(self) -> int:
        return self.system + self.tools

    def parts(self) -> list[tuple[str, int]]:
        return [("system prompt", self.system_prompt), ("built-in tools", self.builtin_tools),
                ("MCP tools", self.mcp_tools), ("project context", self.project_context), ("skills", self.skills)]


@dataclass(frozen=True)
class TurnStarted:
    """A user prompt was appended at `history_index` and the agentic turn begins."""

    prompt: str
    history_index: int


@dataclass(frozen=True)
class ModelCallStarted:
    """One model call within a turn; `call` counts calls across the session (1-based)."""

    call: int
    turn_call: int
    model: str


@dataclass(frozen=True)
class CompactionReported:
    """The plan of this call's request (sent on every call, changed or not) and the request's messages.

    `history_len` is the length of the full history at the time; `outbound_tokens` is the estimate of the
    whole request, system prompt and tool definitions included (calibrated on real usage when known).
    """

    call: int
    plan: CompactPlan
    history_len: int
    system_tokens: int
    tools_tokens: int
    messages: list[Message] = field(default_factory=list, repr=False)

    @property
    def outbound_tokens(self) -> int:
        return self.plan.estimated_tokens


@dataclass(frozen=True)
class SummaryWritten:
    """The summary tier's own model call for call `call`'s event: the summary, or why there is none."""

    call: int
    summary: str | None
    error: str | None = None
    covered: int = 0  # messages the summary stands for


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class AssistantMessage:
    """The model's complete reply for one call, as appended to history at `history_index`."""

    message: Message
    history_index: int
    stop_reason: str | None = None


@dataclass(frozen=True)
class Usage:
    """Token usage reported by the API for one call (estimates are never sent as Usage)."""

    call: int
    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    purpose: Literal["call", "summary"] = "call"  # a summary call's usage counts in cost, not as a call
    cache_write_1h: int = 0  # of the cache writes, those at the 1-hour TTL (priced 2x, not 1.25x)

    @property
    def context_tokens(self) -> int:
        """What the call's prompt occupied in the context window."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens


@dataclass(frozen=True)
class ToolStarted:
    tool_use_id: str
    name: str
    input: dict[str, Any]
    summary: str


@dataclass(frozen=True)
class ToolFinished:
    tool_use_id: str
    name: str
    content: str | list[dict[str, Any]]
    is_error: bool
    duration: float
    chars: int


@dataclass(frozen=True)
class ToolResultsAppended:
    """The user message carrying this round's tool_results was appended at `history_index`."""

    message: Message
    history_index: int


@dataclass
class PermissionRequested:
    """A tool needs the user's consent; the face sets `decision` to a `PermissionDecision`.

    `id` is the tool_use id the request is about: stable and unique within a session, so the answer
    (`PermissionAnswered`) can be journaled and matched to its request when a session is replayed.
    """

    tool_name: str
    input: dict[str, Any]
    summary: str
    preview: str
    decision: asyncio.Future = field(repr=False)
    id: str = ""


@dataclass(frozen=True)
class PermissionAnswered:
    """The answer to the `PermissionRequested` with the same `id` (a `PermissionDecision` value)."""

    id: str
    tool_name: str
    decision: str


@dataclass(frozen=True)
class Notice:
    """Something the user should see in the flow: demo mode, retrying, a skipped MCP server..."""

    text: str
    level: Literal["info", "warning", "error"] = "info"


@dataclass(frozen=True)
class TurnEnded:
    reason: TurnEndReason
    turn_calls: int
    error: str | None = None


# -- session events: changes made outside a turn, delivered to `Session.listeners` (the journal) --------
@dataclass(frozen=True)
class ModelSwitched:
    """`Session.switch_model()` replaced the provider; the next call goes to `model`."""

    old_model: str
    model: str
    provider: str


@dataclass(frozen=True)
class SessionCleared:
    """`/clear`: the history was replaced by an empty one (the journal starts a new file)."""

    dropped_messages: int


@dataclass(frozen=True)
class TurnClosed:
    """`Session.run_turn` returned, however it ended (also on cancel, where no `TurnEnded` is yielded):
    listeners can pick up messages the loop appended while repairing the history."""

    history_len: int


@dataclass(frozen=True)
class CompactionChanged:
    """The user changed a compaction decision between calls (`pin`, `exclude`, `expand` of message
    `index`, `on` or off): the journal records it with the compactor's new state."""

    action: str
    index: int | None = None
    on: bool = True


class RequestPlan(Protocol):
    """The next call's plan as `NextRequestChanged` carries it; `core/agent/call.CallPlan` is the one there is
    (mypy checks it satisfies this where the session tells the event). A Protocol, so the ground floor does not
    name a class of the agent's floor above it (tests/test_import_graph.py counts such arrows)."""

    @property
    def call(self) -> int: ...
    @property
    def result(self) -> CompactResult: ...
    @property
    def plan(self) -> CompactPlan: ...
    @property
    def messages(self) -> list[Message]: ...
    @property
    def request(self) -> Any: ...  # a `providers.base.ModelRequest` (naming it would climb to the providers' floor)
    @property
    def system_tokens(self) -> int: ...
    @property
    def tools_tokens(self) -> int: ...


@dataclass(frozen=True)
class NextRequestChanged:
    """What the next model call will send may have changed: a turn ended, a pin / exclude / expand,
    `/compact` (with its summary), `/clear`, `/model`, another strategy, a resume.

    The engine tells once and the faces listen: the journal saves the compactor's state from it (so a
    resumed session plans this very request), the panel redraws its "next call" from `plan`, and nobody
    asks the session for a plan of their own. `why` names the change in words (for traces and tests).
    """

    plan: RequestPlan
    base: "BaseBreakdown"  # what every call pays before any message, split by where it comes from
    why: str


SessionEvent = Union[ModelSwitched, SessionCleared, TurnClosed, CompactionChanged, NextRequestChanged,
                     KeepWarmArmed, CacheKeptWarm, KeepWarmStopped, IdleChosen]


EngineEvent = Union[
    TurnStarted,
    ModelCallStarted,
    CompactionReported,
    SummaryWritten,
    ServerEdited,
    CacheMissed,
    TextDelta,
    AssistantMessage,
    Usage,
    ToolStarted,
    ToolFinished,
    ToolResultsAppended,
    PermissionRequested,
    PermissionAnswered,
    Notice,
    TurnEnded,
]
