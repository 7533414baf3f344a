"""The peers' compaction, as strategies on the economics replay (`core.economics`): what other agents
send, on the same sessions, the same ruler and the same prices as ours, so a figure compares like with like.

Each is a model of its documented rule, not its code:
- `cc-77` / `cc-92` — Claude Code's autocompact: append-only until the request passes a share of the window
  (≈155k of 200k observed in its logs, and the 92 % of its docs), then one summary call replaces everything
  before the round in progress with a summary of about 2.9k tokens (modelled as the most-mentioned
  identifiers, the last files read and the last prompt); the summary call is priced.
- `opencode` — opencode's prune: at each new user turn, tool outputs older than the newest 40k tokens of
  tool output (the last two turns always kept) are erased, sticky, when that frees at least 20k; a summary
  as above when the request would overflow the window.
- `cc-idle` — Claude Code 2.1.286+: `cc-77` plus its idle compaction: about 54 minutes after the last reply,
  a session whose request is at least 200k tokens is summarised before its (1-hour) cache expires, so the
  summary call reads the prefix warm and the next call writes only the summary and the new prompt.
- `clear-100k` — Anthropic's server-side context editing `clear_tool_uses` (trigger 100k input tokens,
  keep the 3 newest tool uses): above the trigger every older tool result is replaced by a placeholder,
  the inputs kept; the client still sends everything, so the clearing moves with every call.
A placeholder and a summary are traces: the honest coverage does not count them (`core.coverage`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tui_agent.core import tokens as tk
from tui_agent.core.recordings.coverage import held_text, identifiers, vocabulary
from tui_agent.core.messages import Message, blocks, is_user_text, text_of, tool_results, tool_uses

PEERS = ("cc-77", "cc-92", "cc-idle", "opencode", "clear-100k")
IDLE_AFTER_SECONDS, IDLE_MIN_TOKENS = 54 * 60, 200_000  # Claude Code's idle compaction
SUMMARY_TOKENS = 2_900  # Claude Code's summaries in the shared logs are about this long
OPENCODE_PROTECT, OPENCODE_MINIMUM = 40_000, 20_000
CLEAR_TRIGGER, CLEAR_KEEP = 100_000, 3
OPENCODE_ERASED = "[Old tool result content cleared]"
CLEARED = "[cleared: tool result removed by context editing]"


@dataclass(frozen=True)
class PeerEvent:
    major: bool = True


@dataclass(frozen=True)
class PeerPlan:
    event: PeerEvent | None


@dataclass(frozen=True)
class PeerResult:
    messages: list[Message]
    plan: PeerPlan


class Peer:
    """What every peer shares: sizes on the session's ruler, a sticky summary and erased results."""

    mode = "peer"
    steerable = False

    def __init__(self, window: int, ruler: Any | None) -> None:
        self.window = window
        self._baseline = float(getattr(ruler, "baseline", 0.0))
        self._ratio = float(getattr(ruler, "ratio", 1.0))
        self._sizes: dict[int, tuple[Message, int]] = {}
        self._copies: dict[tuple[int, int], Message] = {}  # (history index, erased count): the sent copy
        self.summary: Message | None = None
        self.start = 0  # the history index the request goes on from (after the summary)
        self.erased: set[str] = set()  # tool_use ids whose results are sent as a placeholder
        self._summary_call: tuple[float, float] | None = None
        self._sent = 0.0  # the size of the previous request

    # the replay's side of the protocol
    def compact(self, history: Sequence[Message], call: int | None = None) -> PeerResult:
        """The request this peer sends for `history` (each peer says how)."""
        raise NotImplementedError

    def take_summary_call(self) -> tuple[float, float] | None:
        made, self._summary_call = self._summary_call, None
        return made

    def observe_usage(self, input_tokens_total: int) -> None:
        self._sent = float(input_tokens_total)

    def set_baseline(self, baseline_tokens: int) -> None:
        return None

    def size(self, messages: Sequence[Message]) -> float:
        total = 0
        for m in messages:
            known = self._sizes.get(id(m))
            if known is None or known[0] is not m:
                known = (m, tk.message_tokens(m))
                self._sizes[id(m)] = known
            total += known[1]
        return self._baseline + self._ratio * total

    def render(self, history: Sequence[Message], placeholder: str, erased: set[str] | None = None) -> list[Message]:
        erased = self.erased if erased is None else erased
        out: list[Message] = [self.summary] if self.summary is not None else []
        for i in range(self.start, len(history)):
            message = history[i]
            gone = [r for r in tool_results(message) if r.get("tool_use_id") in erased] if erased else []
            if not gone:
                out.append(message)
                continue
            key = (i, len(gone))
            copy = self._copies.get(key)
            if copy is None:
                copy = {"role": message["role"], "content": [
                    {**b, "content": placeholder} if b.get("type") == "tool_result"
                    and b.get("tool_use_id") in erased else b for b in blocks(message)]}
                self._copies[key] = copy
            out.append(copy)
        return out

    def summarise(self, history: Sequence[Message], request_tokens: float) -> None:
        """The summary event: everything before the round in progress becomes one summary message."""
        cut = _round_start(history)
        self.summary = {"role": "user", "content": [{"type": "text", "text": summary_text(history[:cut])}]}
        self.start = cut
        self.erased = set()
        self._summary_call = (request_tokens, float(SUMMARY_TOKENS))


def _round_start(history: Sequence[Message]) -> int:
    """Where the round in progress starts: the last user prompt, or the assistant message whose tool
    results end the history (so no tool_result loses its tool_use)."""
    if not history:
        return 0
    last = len(history) - 1
    if tool_results(history[last]) and last >= 1:
        return last - 1
    return last


def summary_text(dropped: Sequence[Message]) -> str:
    """A stand-in for Claude Code's summary of ≈2.9k tokens: the most-mentioned identifiers, the last
    files read and the last prompt (what its summaries in the shared logs name most)."""
    stop = vocabulary(dropped)
    counts: Counter[str] = Counter()
    for message in dropped:
        counts.update(identifiers(held_text(message)) - stop)
    reads: list[str] = []
    for message in reversed(dropped):
        for use in reversed(tool_uses(message)):
            path = (use.get("input") or {}).get("file_path") if isinstance(use.get("input"), dict) else None
            if use.get("name") == "Read" and isinstance(path, str) and path not in reads:
                reads.append(path)
        if len(reads) >= 10:
            break
    prompt = next((text_of(m) for m in reversed(dropped) if is_user_text(m) and text_of(m).strip()), "")
    budget = SUMMARY_TOKENS * 4
    head = ("This session is being continued from a previous conversation that ran out of context. Summary:\n"
            f"Last request: {prompt[:2000]}\nFiles read last: {', '.join(reads)}\nKey names: ")
    names: list[str] = []
    used = len(head)
    # ties by name: a set's order changes with each process's string hashing, and the figures must not
    for name, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        if used + len(name) + 2 > budget:
            break
        names.append(name)
        used += len(name) + 2
    return head + ", ".join(names)


class ClaudeCodeStandIn(Peer):
    """Autocompact at `share` of the window: a summary of everything before the round in progress."""

    def __init__(self, window: int, ruler: Any | None, share: float) -> None:
        super().__init__(window, ruler)
        self.trigger = window * share

    def compact(self, history: Sequence[Message], call: int | None = None) -> PeerResult:
        request = self.render(history, "")
        tokens = self.size(request)
        if tokens <= self.trigger:
            return PeerResult(request, PeerPlan(None))
        self.summarise(history, tokens)
        return PeerResult(self.render(history, ""), PeerPlan(PeerEvent()))


class ClaudeCodeIdle(ClaudeCodeStandIn):
    """`cc-77` and Claude Code's idle compaction: a wait of 54 minutes or more after a request of at least
    200k tokens is spent summarising (at the 54th minute: `summary_idle`, what the summary call's cache had
    been idle then)."""

    def __init__(self, window: int, ruler: Any | None) -> None:
        super().__init__(window, ruler, 0.775)
        self._pending_idle = False
        self.summary_idle: float | None = None

    def waited(self, gap_seconds: float | None) -> None:
        """Told by the replay before each call: how long the session waited."""
        self._pending_idle = gap_seconds is not None and gap_seconds >= IDLE_AFTER_SECONDS \
            and self._sent >= IDLE_MIN_TOKENS

    def compact(self, history: Sequence[Message], call: int | None = None) -> PeerResult:
        if self._pending_idle:
            self._pending_idle = False
            self.summarise(history, self._sent)
            self.summary_idle = IDLE_AFTER_SECONDS
            return PeerResult(self.render(history, ""), PeerPlan(PeerEvent()))
        return super().compact(history, call)


class OpencodePrune(Peer):
    """opencode: prune old tool outputs at each user turn; summarise when the window would overflow."""

    def __init__(self, window: int, ruler: Any | None, reserve: int) -> None:
        super().__init__(window, ruler)
        self.limit = window - reserve

    def compact(self, history: Sequence[Message], call: int | None = None) -> PeerResult:
        event = None
        if history and is_user_text(history[-1]):
            event = self._prune(history)
        request = self.render(history, OPENCODE_ERASED)
        tokens = self.size(request)
        if tokens > self.limit:
            self.summarise(history, tokens)
            return PeerResult(self.render(history, OPENCODE_ERASED), PeerPlan(PeerEvent()))
        return PeerResult(request, event or PeerPlan(None))

    def _prune(self, history: Sequence[Message]) -> PeerPlan | None:
        turns, protected, freed = 0, 0.0, 0.0
        candidates: list[str] = []
        for i in range(len(history) - 1, self.start - 1, -1):
            message = history[i]
            if is_user_text(message):
                turns += 1
            if turns < 2:
                continue
            for result in tool_results(message):
                rid = str(result.get("tool_use_id"))
                if rid in self.erased:
                    return self._apply(candidates, freed)  # opencode stops at what it pruned before
                size = self._ratio * tk.block_tokens(result)
                protected += size
                if protected > OPENCODE_PROTECT:
                    candidates.append(rid)
                    freed += size
        return self._apply(candidates, freed)

    def _apply(self, candidates: list[str], freed: float) -> PeerPlan | None:
        if freed < OPENCODE_MINIMUM:
            return None
        self.erased |= set(candidates)
        return PeerPlan(PeerEvent())


class ClearToolUses(Peer):
    """Context editing `clear_tool_uses_20250919`: over the trigger, keep the newest 3 tool results."""

    def compact(self, history: Sequence[Message], call: int | None = None) -> PeerResult:
        if self.size(history) <= CLEAR_TRIGGER:
            return PeerResult(list(history), PeerPlan(None))
        ids = [str(r.get("tool_use_id")) for m in history for r in tool_results(m)]
        cleared = set(ids[:-CLEAR_KEEP]) if len(ids) > CLEAR_KEEP else set()
        grew = len(cleared) > len(self.erased)
        self.erased = cleared
        return PeerResult(self.render(history, CLEARED), PeerPlan(PeerEvent(major=False) if grew else None))


def make_peer(name: str, policy: Any, ruler: Any | None) -> Peer:
    """A peer by its bench name, for `policy`'s window, thresholds on the session's `ruler`."""
    window = policy.context_window
    if name == "cc-77":
        return ClaudeCodeStandIn(window, ruler, 0.775)
    if name == "cc-92":
        return ClaudeCodeStandIn(window, ruler, 0.92)
    if name == "cc-idle":
        return ClaudeCodeIdle(window, ruler)
    if name == "opencode":
        return OpencodePrune(window, ruler, policy.max_output_tokens)
    if name == "clear-100k":
        return ClearToolUses(window, ruler)
    raise ValueError(f"unknown strategy {name!r} (peers: {', '.join(PEERS)})")
