"""Compaction as an ACP client is told about it: the adapters' synthetic tool call, or the RFD's updates.

Two shapes exist, and which one a client gets depends on what it declared:
- the Claude and Codex adapters (claude-agent-acp #991, codex-acp #396) report a compaction as a tool
  call of kind `think` titled "Compact conversation" whose `_meta.contextCompaction` is
  `{version: 1, trigger: "manual" | "automatic", preTokens, postTokens, durationMs?, error?}`: every client
  can show that (a tool card), and clients that know the key draw it as a compaction;
- the "Session Compaction" RFD (ACP's `compaction_update`, stabilized for v1 behind the client's
  `clientCapabilities.session.compaction`): one ID-addressed entity per compaction. The engine drops on the
  spot, so a compaction with nothing more to come is `completed` at once; one whose summary is still being
  written (`/compact`, an automatic drop with the summary tier) is `in_progress` until the summary is
  written, then `completed` with it (or without it, saying why, when it failed or a newer compaction's
  summary replaced it), and `cancelled` when it is taken back first (`/undo-compaction`). Each entity gets
  exactly one terminal status; a summary the user edits afterwards (`/summary edit`) is a patch of the
  completed entity (the RFD's patch fields). Sending the tool call as well would show the same compaction
  twice, so such a client gets the RFD's update only.
Our own figures (the kinds of change, the reason, the one-line account) ride under `_meta.tuiAgent`.

The SDK we use (agent-client-protocol 0.12, the newest on PyPI) predates the RFD: it neither parses the
capability nor accepts the update in its `session_update`, so the capability is read from the raw
`initialize` message (a stream observer, the SDK's public hook) and the update is sent as JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from acp.helpers import start_tool_call, text_block, tool_content, update_tool_call

from tui_agent.core.compaction.plan import CompactEvent

TITLE = "Compact conversation"  # the adapters' title: clients match on the meta key, people read this
META_VERSION = 1
Trigger = Literal["manual", "automatic"]


@dataclass(frozen=True)
class CompactionReport:
    """One compaction as a client is told: its id, trigger, tokens before and after, and our account."""

    compaction_id: str
    trigger: Trigger
    pre_tokens: int
    post_tokens: int
    line: str  # the engine's one-line account ("dropped 14 old messages, … · 121k → 47k tok")
    duration_ms: int | None = None  # None: not timed apart (an automatic event is planned in the call)
    extra: dict[str, Any] = field(default_factory=dict)

    def meta(self) -> dict[str, Any]:
        facts: dict[str, Any] = {"version": META_VERSION, "trigger": self.trigger, "preTokens": self.pre_tokens,
                                 "postTokens": self.post_tokens}
        if self.duration_ms is not None:
            facts["durationMs"] = self.duration_ms
        return {"contextCompaction": facts, "tuiAgent": {"line": self.line, **self.extra}}


def event_report(compaction_id: str, event: CompactEvent, trigger: Trigger = "automatic",
                 duration_ms: int | None = None) -> CompactionReport:
    return CompactionReport(compaction_id, trigger, event.tokens_before, event.tokens_after, event.line(),
                            duration_ms, {"kinds": list(event.kinds), "reason": event.reason, "call": event.call})


def tool_lifecycle(report: CompactionReport) -> list[Any]:
    """The adapters' shape: a `think` tool call, started and completed at once, the account as its text."""
    meta = report.meta()
    start = start_tool_call(report.compaction_id, TITLE, kind="think", status="in_progress")
    start.field_meta = meta
    done = update_tool_call(report.compaction_id, title=TITLE, status="completed",
                            content=[tool_content(text_block(report.line))])
    done.field_meta = meta
    return [start, done]


Status = Literal["in_progress", "completed", "failed", "cancelled"]


def rfd_update(report: CompactionReport, status: Status = "completed", summary: str | None = None,
               why: str | None = None) -> dict[str, Any]:
    """The RFD's `compaction_update` (JSON): the entity's status, its summary when there is one, and in
    `_meta.tuiAgent.summaryState` why a completed compaction has none (failed, superseded, cleared)."""
    meta = report.meta()
    if why:
        meta["tuiAgent"] = {**meta["tuiAgent"], "summaryState": why}
    update: dict[str, Any] = {"sessionUpdate": "compaction_update", "compactionId": report.compaction_id,
                              "status": status, "_meta": meta}
    if summary:
        update["summary"] = [{"type": "text", "text": summary}]
    return update


def declares_compaction(message: dict[str, Any]) -> bool | None:
    """From a raw incoming JSON-RPC message: None unless it is `initialize`, else whether the client
    declared `clientCapabilities.session.compaction` (an object; omitted or null: not declared)."""
    if message.get("method") != "initialize":
        return None
    params = message.get("params") or {}
    session = ((params.get("clientCapabilities") or {}) if isinstance(params, dict) else {}).get("session")
    return isinstance(session, dict) and isinstance(session.get("compaction"), dict)


async def send_json_update(conn: Any, session_id: str, update: dict[str, Any]) -> None:
    """A `session/update` the SDK has no model for, sent on the SDK's own connection."""
    await conn._conn.send_notification("session/update", {"sessionId": session_id, "update": update})


def process_prefix() -> str:
    """Compaction ids of this process: `compaction-<random>`. A session loaded in another process goes on
    counting from 1, and an editor that keeps its transcript across reconnects would patch the old entity
    with a new compaction of the same id (the RFD: an id "MUST NOT be reused for another compaction")."""
    import secrets

    return f"compaction-{secrets.token_hex(4)}"


class CompactionReporter:
    """One ACP session's compactions: fresh ids (never reused, even after /clear restarts the call numbers
    or another process loads the session), the shape the client declared, and each RFD entity's lifecycle: `in_progress` while its
    summary is written, then exactly one terminal update."""

    def __init__(self, rfd: bool = False, prefix: str = "compaction") -> None:
        self.rfd = rfd
        self.prefix = prefix  # the agent's is unique to its process (see `process_prefix`)
        self.count = 0
        self.by_call: dict[int, CompactionReport] = {}  # the newest report per call, for its summary
        self.pending: dict[int, CompactionReport] = {}  # RFD entities in progress (their summary is coming)

    def next_id(self) -> str:
        self.count += 1
        return f"{self.prefix}-{self.count}"

    def updates(self, report: CompactionReport, call: int, summary_coming: bool = False) -> list[Any]:
        """The updates of a compaction that just happened; `summary_coming`: its summary is being written
        (a newer summary replaces any older one still being written: that compaction ends without it)."""
        self.by_call[call] = report
        if not self.rfd:
            return tool_lifecycle(report)
        if not summary_coming:
            return [rfd_update(report)]
        closed = self.close_pending("completed", "superseded: a later compaction's summary replaced it")
        self.pending[call] = report
        return closed + [rfd_update(report, "in_progress")]

    def event_updates(self, event: CompactEvent, summary_coming: bool = False) -> list[Any]:
        return self.updates(event_report(self.next_id(), event), event.call, summary_coming)

    def summary_updates(self, call: int, summary: str | None, error: str | None = None) -> list[Any]:
        """The summary of call `call`'s compaction is written (or failed: `error`): its entity completes
        with it. A summary that changes afterwards (edited by the user) patches the completed entity. The
        adapters' shape keeps the summary internal."""
        report = self.pending.pop(call, None)
        if not self.rfd:
            return []
        if report is not None:
            return [rfd_update(report, "completed", summary, None if summary else f"failed: {error or 'no summary'}")]
        report = self.by_call.get(call)
        return [rfd_update(report, "completed", summary)] if report is not None and summary else []

    def close_pending(self, status: Status, why: str) -> list[Any]:
        """End every entity still in progress (`/clear`: `completed`, without its summary). Their summaries
        will never be written (the engine drops a stale draft), so none patches them later."""
        closed = [rfd_update(report, status, why=why) for report in self.pending.values()]
        for call in self.pending:
            self.by_call.pop(call, None)
        self.pending.clear()
        return closed

    def undone(self, call: int) -> list[Any]:
        """`/undo-compaction` took call `call`'s compaction back (and stopped any summary being written):
        its entity, if still in progress, is `cancelled`; another one in progress completes without it."""
        report = self.pending.pop(call, None)
        self.by_call.pop(call, None)
        cancelled = [rfd_update(report, "cancelled", why="taken back by /undo-compaction")] if report else []
        return cancelled + self.close_pending("completed", "stopped: /undo-compaction took a compaction back")
