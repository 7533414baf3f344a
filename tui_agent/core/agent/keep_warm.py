"""Keep the prompt cache warm while a live session is idle: the last request sent again before it expires.

A person who stops to think for six minutes, or a tool that runs for ten, leaves the prefix idle past the
5-minute time to live, and the next call writes the whole request again at the write price (15–45 % of
the bill on the shared Claude Code logs). A ping that repeats the last request exactly reads that prefix
at the read price and starts its time to live again. `core/cache_clock.py` says how often and how many
(`keep_warm_for`: every 0.9 × TTL, as many as half the rewrite pays for, within an hour); this is the live
part: one asyncio task per session, cancelled by any new call and by quitting (`Warmer.aclose` is one of
the session's closers: no task is left pending).

It keeps only what the API said it caches (`warm_prefix.WarmPrefix`), and checks each ping against it:
- armed only after a call whose usage reported a cache read or write: a server that caches nothing gets no
  ping (each would be a full-price request);
- the clock runs from when the request was SENT (`LoopState.warm_since`), as the cache's time to live does:
  after a long answer the first ping still comes in time;
- a ping that reads less than the prefix (it wrote it again, or part of it) stops warming, said once with
  the reason: the server is not keeping it, and more pings could pay for writes;
- when the next request changes (`NextRequestChanged`: `/compact`, a pin, `/clear`, `/model`…) the pings go
  on only while it still starts with the cached request (`warm_prefix.still_read_by`; why not warm the new
  one is said there); a change back, while the prefix is still warm, arms them again;
- before each ping it asks one function, ping now, compact now or stop (`choose`: `cache_clock.until_the_limit`,
  or the priced idle policy, `idle_policy.IdlePolicy`, which may answer after a thought: an awaitable); the
  schedule's most (`KeepWarm.max_pings`) is a hard cap. "compact" asks `compact` (the policy's) for the
  request an idle compaction event leaves; its first ping writes it (the cache holds none of it yet) and the
  pings after it keep that smaller request warm.

What a ping sends is the provider's business (`providers/anthropic_ping.py`: the same body with
`max_tokens` 0, or the smallest form an endpoint that refuses 0 takes: remembered here for the session,
said once). Each ping that answered restarts the loop's cache clock and is told as `CacheKeptWarm` (the
ledger adds its price to the session's cost, the journal records it, the meter shows it); warming that
stops on its own is told once as `KeepWarmStopped`. A failed ping stops warming, never retried and never
raised. Pings change nothing that is sent later: the history and the compactor are left as they are, so a
resumed session sends what this one would have.

Only providers that cache and can ping (`Provider.can_ping`: Anthropic with prompt caching) get pings; the demo and
OpenAI models (which cache on their own, for free) get `NEVER_WARM`. Headless `-p` gets none (it exits);
the door (`core/agent/door.py`) installs this for every other face.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from tui_agent.core import events as ev
from tui_agent.core import trace
from tui_agent.core.agent.warm_prefix import WarmPrefix, change_cause, miss_detail, still_read_by
from tui_agent.core.cache_clock import NEVER_WARM, IdleMoment, KeepWarm, PingOrStop, keep_warm_for, until_the_limit
from tui_agent.core.models import for_provider

if TYPE_CHECKING:
    from tui_agent.core.agent.loop_state import LoopState
    from tui_agent.core.providers.base import ModelRequest, Provider

ENV = "TUI_AGENT_KEEP_WARM"  # minutes of idleness to keep warm (0: off); unset: what the price pays for
IdleChoice = Callable[[IdleMoment], "PingOrStop | str | Awaitable[PingOrStop | str]"]  # ping, stop or compact


class WarmSession(Protocol):
    """What the warmer needs of a session (`Session` is one): its provider, its loop state, its events."""

    provider: "Provider"
    state: "LoopState"

    def emit(self, event: Any) -> None: ...


def keep_warm_of(provider: "Provider", minutes: float | None = None) -> KeepWarm:
    """The pings for `provider`'s price (`keep_warm_for`), or `NEVER_WARM` when it cannot ping or does
    not cache (the demo model, OpenAI, Anthropic with prompt caching off)."""
    if not provider.can_ping or not provider.prompt_caching:
        return NEVER_WARM
    return keep_warm_for(for_provider(provider), minutes)


def minutes_from(env: Mapping[str, str], flag: float | None = None) -> float | None:
    """The minutes asked for: the flag, else `TUI_AGENT_KEEP_WARM`, else None (the price decides).
    A value that is not a number of minutes ≥ 0 is a `ValueError` with one line that names it."""
    raw = flag if flag is not None else env.get(ENV, "").strip() or None
    if raw is None:
        return None
    try:
        minutes = float(raw)
    except ValueError:
        minutes = math.nan
    if not math.isfinite(minutes) or minutes < 0:
        raise ValueError(f"--keep-warm / {ENV} takes minutes (0 = off), not {str(raw)[:40]!r}")
    return minutes


@dataclass
class Warmer:
    """One session's keep-warm task. `heard` is a session listener; `aclose` a session closer.

    `keep`: fixed figures (tests: a tiny interval); None: from the provider's price (and `minutes`) each
    time a call is answered, so `/model` takes the new model's. `sleep`: the clock's wait (tests inject
    one they open themselves). `choose`: ping now, compact now or stop, asked before each ping; `compact`: the
    request an idle compaction leaves (None: none was made); `schedule`: the pings a provider gets (the idle
    mode's: `idle_policy.IdlePolicy.schedule`), in place of what its price pays for."""

    session: WarmSession
    minutes: float | None = None
    keep: KeepWarm | None = None
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep
    choose: IdleChoice = until_the_limit
    compact: "Callable[[], ModelRequest | None] | None" = None
    schedule: "Callable[[Provider, float | None], KeepWarm] | None" = None
    task: asyncio.Task[None] | None = field(default=None, repr=False)
    prefix: WarmPrefix | None = None  # what the API said is cached, that the pings keep (None: nothing)
    zero: bool = True  # pings go with `max_tokens: 0` until the endpoint refuses it (then for the session)
    _changed: bool = False  # stopped because the next request changed: a change back arms it again
    _compacting: bool = False  # the change being told is the warmer's own idle compaction

    def settings(self) -> KeepWarm:
        provider = self.session.provider
        if self.keep is not None:
            return self.keep if provider.can_ping else NEVER_WARM
        if self.schedule is not None:
            return self.schedule(provider, self.minutes)
        return keep_warm_of(provider, self.minutes)

    def clock(self) -> float:
        return self.session.state.clock()

    def heard(self, event: Any) -> None:
        """A call answered: warming starts over for its prefix. A call starting stops it; a change of the next
        request (`/compact`, a pin, `/clear`, `/model`…) keeps it only while that still reads the prefix."""
        match event:
            case ev.Usage(purpose="call"):
                self.answered(event)
            case ev.ModelCallStarted() | ev.TurnStarted():
                self.cancel()
            case ev.NextRequestChanged():
                self.next_changed(event)

    def answered(self, usage: ev.Usage) -> None:
        """Arm for this call's prefix, only if the API reported it cached (a read or a write)."""
        self.cancel()
        state = self.session.state
        cached = usage.cache_read_input_tokens + usage.cache_creation_input_tokens
        request, since, self._changed = state.last_request, state.warm_since, False
        if not cached or request is None or since is None:
            self.prefix = None
            trace.trace("keep_warm.uncached", call=usage.call)  # nothing cached: a ping would pay full price
            return
        self.prefix = WarmPrefix(request, cached, since, usage.call, sent=since)
        self.arm()

    def arm(self) -> None:
        self.cancel()
        keep, prefix = self.settings(), self.prefix
        if prefix is None or keep.max_pings <= prefix.pings:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # fed outside an event loop (a replay, a test): nothing to keep warm
            return
        self.task = loop.create_task(self._warm(prefix, keep))
        self._emit(ev.KeepWarmArmed(keep.max_pings, keep.interval_seconds, prefix.cached_tokens))

    def next_changed(self, event: ev.NextRequestChanged) -> None:
        prefix = self.prefix
        if prefix is None or self._compacting:
            return
        request = event.plan.request
        if still_read_by(request, prefix.request):
            idle = self.clock() - prefix.since
            if self._changed and not self.running and not for_provider(self.session.provider).expired(idle):
                self._changed = False
                self.arm()  # changed back while the prefix is still warm: keep it again
            return
        if self.running:
            self.cancel()
            self._changed = True
            cause = change_cause(event.why, request, prefix.request, event.plan.plan)
            self._emit(ev.KeepWarmStopped("changed", prefix.pings, cause))

    def cancel(self) -> None:
        task, self.task = self.task, None
        if task is not None and not task.done():
            task.cancel()

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    async def aclose(self) -> None:
        """Quitting: the pending ping is cancelled and awaited (no task left pending at exit)."""
        task, self.task = self.task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _warm(self, prefix: WarmPrefix, keep: KeepWarm) -> None:
        """Ping before each time to live runs out (counted from the last request sent), while `choose` says so."""
        while prefix.pings < keep.max_pings:
            await self.sleep(max(keep.interval_seconds - (self.clock() - prefix.since), 0.0))
            moment = IdleMoment(prefix.pings, keep, prefix.cached_tokens, self.clock() - prefix.sent,
                                 prefix.request.model)
            try:
                choice = self.choose(moment)
                if inspect.isawaitable(choice):
                    choice = await choice
            except Exception as error:  # noqa: BLE001 - a policy that fails stops the warming, said once
                self._emit(ev.KeepWarmStopped("failed", prefix.pings, f"the idle policy failed: {error}"[:160]))
                return
            if choice == "compact":
                prefix = self._compacted(prefix) or prefix
            elif choice != "ping":
                self._emit(ev.KeepWarmStopped("policy", prefix.pings))
                return
            if not await self._ping(prefix, keep):
                return
        self._emit(ev.KeepWarmStopped("limit", prefix.pings))

    def _compacted(self, prefix: WarmPrefix) -> WarmPrefix | None:
        """The idle policy's compaction event now (its own `NextRequestChanged` does not stop the warming):
        the request it leaves is what the pings keep from here, not cached yet (the next ping writes it)."""
        if self.compact is None:
            return None
        self._compacting = True
        try:
            request = self.compact()
        finally:
            self._compacting = False
        if request is None:
            return None
        self.prefix = WarmPrefix(request, 0, prefix.since, prefix.call, prefix.sent, prefix.pings)
        return self.prefix

    async def _ping(self, prefix: WarmPrefix, keep: KeepWarm) -> bool:
        """One ping, told; False when warming stops here (it failed, or it read less than the prefix)."""
        provider, state = self.session.provider, self.session.state
        n = prefix.pings + 1
        # named after the last answer: the cache diagnosis, where it is on, says why a ping missed
        request = replace(prefix.request, previous_message_id=state.cache.message_id)
        sent = self.clock()
        try:
            if not provider.can_ping:
                raise TypeError(f"{provider.name} cannot ping")
            pinged = await provider.ping(request, self.zero)
        except Exception as error:  # noqa: BLE001 - any failure stops warming, quietly, never retried
            detail = str(error) or type(error).__name__
            trace.trace("keep_warm.failed", ping=n, error=detail[:120])
            self._emit(ev.KeepWarmStopped("failed", n - 1, detail))
            return False
        usage = pinged.usage
        prefix.pings, prefix.since = n, sent
        written_now = not prefix.cached_tokens  # the first ping of an idle compaction's request writes it
        if written_now:
            prefix.cached_tokens = usage.cache_read_input_tokens + usage.cache_creation_input_tokens
        state.warm_since = sent  # the cache's clock starts over from this request
        state.cache.pings += 1
        note = ""
        if pinged.refused and self.zero:
            self.zero = False
            note = (f"The endpoint refused max_tokens 0 for a keep-warm ping ({pinged.refused}); pings go with "
                    f"max_tokens {pinged.max_tokens} from now on.")
        trace.trace("keep_warm.ping", ping=n, read=usage.cache_read_input_tokens,
                    written=usage.cache_creation_input_tokens, expected=prefix.cached_tokens,
                    max_tokens=pinged.max_tokens)
        self._emit(ev.CacheKeptWarm(n, keep.max_pings, keep.interval_seconds, usage.input_tokens, usage.output_tokens,
                                    usage.cache_creation_input_tokens, usage.cache_read_input_tokens,
                                    usage.cache_write_1h, 0 if written_now else prefix.cached_tokens, pinged.max_tokens,
                                    note, prefix.call, pinged.cache_miss))
        if written_now and not prefix.cached_tokens:
            self._emit(ev.KeepWarmStopped("missed", n, "wrote nothing to the cache (the server caches nothing now)"))
            return False
        if usage.cache_read_input_tokens < prefix.cached_tokens and not written_now:
            self._emit(ev.KeepWarmStopped("missed", n, miss_detail(
                usage.cache_read_input_tokens, usage.cache_creation_input_tokens, prefix.cached_tokens,
                pinged.cache_miss)))
            return False
        return True

    def _emit(self, event: Any) -> None:
        try:
            self.session.emit(event)
        except Exception:  # noqa: BLE001 - a face that fails to show a ping must not end the warming task loudly
            pass


def install_keep_warm(session: Any, minutes: float | None = None, keep: KeepWarm | None = None,
                      sleep: Callable[[float], Awaitable[Any]] | None = None,
                      choose: IdleChoice | None = None, compact: "Callable[[], ModelRequest | None] | None" = None,
                      schedule: "Callable[[Provider, float | None], KeepWarm] | None" = None) -> Warmer:
    """Keep `session`'s cache warm while it is idle: its listener and its closer (the door calls this for
    every face but `-p`). `choose`: the idle choice asked before each ping (default: until the limit);
    `compact` and `schedule`: the idle policy's (`idle_policy.install_idle_policy` passes them)."""
    warmer = Warmer(session, minutes, keep, sleep or asyncio.sleep, choose or until_the_limit, compact, schedule)
    session.listeners.append(warmer.heard)
    session.closers.append(warmer.aclose)
    return warmer


def warm_line(ping: int, max_pings: int, seconds_to_next: float, pings_usd: float | None,
              decided: bool = False) -> str:
    """The meter's line after a ping: "kept warm: ping 3 of 12, next in 4:12 · pings so far ≈$0.0040";
    before the first (`ping` 0): "keeps warm while idle: first ping in 4:29 (up to 12)". `decided`: the idle
    policy (`--idle auto`) prices each ping when it is due, so the slots are a ceiling, not a plan: "(up to 13,
    each only if the cheapest)", "ping 3 of up to 13" (the line said "up to 13" as if all were coming)."""
    whole = max(int(seconds_to_next), 0)
    clock = f"{whole // 60}:{whole % 60:02d}"
    if ping <= 0:
        return f"keeps warm while idle: first ping in {clock} (up to {max_pings}{', each only if the cheapest' if decided else ''})"
    of = f"of up to {max_pings}" if decided else f"of {max_pings}"
    if ping >= max_pings:
        what = f"kept warm: ping {ping} {of}, the last"
    else:
        what = f"kept warm: ping {ping} {of}, next in {clock}"
    return what + (f" · pings so far ≈${pings_usd:.4f}" if pings_usd is not None else "")


def pings_line(pings: int, pings_usd: float | None, missed_anyway: int = 0) -> str:
    """The meter's standing line once pings were sent and none is planned: what they cost so far (they are
    in the session's cost, pings after the last call too) and how many calls missed the cache anyway:
    "keep-warm pings: 7 so far ≈$0.0123 (in the session cost) · 1 call missed anyway"; "" before any."""
    if pings <= 0:
        return ""
    line = f"keep-warm pings: {pings} so far" + (f" ≈${pings_usd:.4f} (in the session cost)" if pings_usd is not None
                                                 else "")
    if missed_anyway:
        line += f" · {missed_anyway} call{'s' * (missed_anyway != 1)} missed anyway"
    return line
