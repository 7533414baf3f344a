"""What the server did on its own and why the cache missed: `ServerEdited` and `CacheMissed`, with their
words. Re-exported by `core/events`.

Its own group because these are not steps of our loop but readings of the API's answer (its
`context_management` report, its cache diagnosis, or our own diagnosis of a short cache read,
`core/agent/server_watch.py`): the ledger keeps them apart as `server_events`, the panel lists them beside our
compaction events, and each says itself in one line. The fields only grow (the journal and replays read them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tui_agent.core.messages import AppliedEdit, CompactionUsage


@dataclass(frozen=True)
class ServerEdited:
    """The server managed the context of call `call` on its own (`--compact server-clear` /
    `server-compact`), as its response reports: the edits it applied (tool uses or thinking turns
    cleared, input tokens freed) or the compaction block its reply starts with (at `history_index`)
    and that compaction's own usage. Drawn like our own compaction events."""

    call: int
    history_index: int
    edits: tuple[AppliedEdit, ...] = ()
    compacted: bool = False
    summary: str = ""
    compaction_usage: CompactionUsage | None = None
    # The call this clearing began at, when it goes on from the call before: the server clears again what it
    # cleared then (a request that only grew), plus what joined since. One clearing, listed once (10 entries in
    # one turn were the same clearing told again); None: a clearing or compaction that happens now.
    since: int | None = None

    @property
    def continued(self) -> bool:
        return self.since is not None

    def line(self) -> str:
        """"call 7 · server cleared 4 tool uses (12,300 tok)" ("calls 7–12 · …" for a clearing that went on) or
        "call 9 · server compacted the conversation (its own call: 151,000 in, 2,100 out)"."""
        parts = []
        for edit in self.edits:
            what = "thinking turn" if "thinking" in edit.kind else "tool use"
            parts.append(f"cleared {edit.cleared} {what}{'s' * (edit.cleared != 1)} ({edit.tokens:,} tok)")
        if self.compacted:
            cost = self.compaction_usage
            own = f" (its own call: {cost.input_tokens:,} in, {cost.output_tokens:,} out)" if cost else ""
            parts.append(f"compacted the conversation into a summary{own}")
        calls = f"calls {self.since}–{self.call}" if self.since is not None else f"call {self.call}"
        return f"{calls} · server " + (", ".join(parts) or "changed nothing")


CacheMissSource = Literal["api", "ours"]


@dataclass(frozen=True)
class CacheMissed:
    """Call `call` read less from the prompt cache than the previous request left there: `expected`
    tokens were cached, `read` were read, so `missed` were written (or sent) again. `reason` is the
    API's (`messages_changed`, `system_changed`, `tools_changed`, `model_changed`, ...; source "api") or
    ours (`ttl_expired`, `our_compaction` from message `from_message`, `server_edit`, `unknown`; "ours").
    `extra_cost_usd`: what re-writing the missed tokens cost over reading them (None: price unknown)."""

    call: int
    expected: int
    read: int
    reason: str
    source: CacheMissSource = "ours"
    from_message: int | None = None
    our_reason: str = ""  # ours beside the API's, when both are known
    extra_cost_usd: float | None = None
    after_pings: int = 0  # keep-warm pings since the previous call: kept warm, and missed anyway

    @property
    def kept_warm(self) -> bool:
        """The cache was kept warm before this call (pings read its prefix), and it missed anyway."""
        return self.after_pings > 0

    @property
    def missed(self) -> int:
        return max(self.expected - self.read, 0)

    def why(self) -> str:
        words = MISS_WORDS.get(self.reason, self.reason.replace("_", " "))
        if self.reason == "our_compaction" and self.from_message is not None:
            words = f"our compaction rewrote from message {self.from_message}"
        if self.source == "api":
            words = f"the API says: {words}"
            if self.our_reason and self.our_reason != "unknown":
                words += f"; ours: {MISS_WORDS.get(self.our_reason, self.our_reason)}"
        return words

    def line(self) -> str:
        money = f", ≈${self.extra_cost_usd:.4f} more" if self.extra_cost_usd is not None else ""
        warm = f" after {self.after_pings} keep-warm ping{'s' * (self.after_pings != 1)}" if self.kept_warm else ""
        return f"call {self.call} · cache missed {self.missed:,} tok{warm} ({self.why()}){money}"


MISS_WORDS = {
    "messages_changed": "an earlier message changed", "system_changed": "the system prompt changed",
    "tools_changed": "the tool definitions changed", "model_changed": "the model changed",
    "previous_message_not_found": "the previous request is unknown to the API",
    "unavailable": "no diagnosis", "ttl_expired": "the cache's time to live ran out",
    "our_compaction": "our compaction rewrote the request", "server_edit": "the server edited the context",
    "kept_warm_missed": "kept warm, missed anyway: the server let the prefix go before its time to live",
    "unknown": "reason unknown",
}
