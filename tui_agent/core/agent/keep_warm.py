"""Keep the prompt cache warm while a live session is idle: the last request sent again before it expires.

A person who stops to think for six minutes, or a tool that runs for ten, leaves the prefix idle past the
5-minute time to live, and the next call writes the whole request again at the write price (15–45 % of
the bill on the shared Claude Code logs). A ping that repeats the last request exactly reads that prefix
at the read price and starts its time to live again. `core/cache_clock.py` says how often and how many
(`keep_warm_for`: every 0.9 × TTL, as many as half the rewrite pays for, within an hour); this is the live
part: one asyncio task per session, armed when a call is answered, cancelled by any new call, `/clear`,
`/model` and quitting (`Warmer.aclose` is one of the session's closers: no task is left pending).

What a ping sends is the provider's business (`providers/anthropic_ping.py`: the same body, `max_tokens`
1 when no thinking is asked for, read only up to the usage of `message_start`). Here: each ping that
answered restarts the loop's cache clock (`LoopState.answered_at`, so a call after a warm gap is not told
the cache went cold) and is told as `CacheKeptWarm` (the ledger adds its price to the session's cost, the
meter shows it); warming that stops on its own is told once as `KeepWarmStopped`. A failed ping stops
warming, never retried and never raised. Pings change nothing that is sent later: the history, the
compactor and the cache-miss track (`LoopState.cache`) are left as they are, so a resumed session sends
what this one would have.

Only providers that cache and can ping (`Pinger`: Anthropic with prompt caching) get pings; the demo and
OpenAI models (which cache on their own, for free) get `NEVER_WARM`. Headless `-p` gets none (it exits);
the door (`core/agent/door.py`) installs this for every other face.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from tui_agent.core import events as ev
from tui_agent.core import trace
from tui_agent.core.cache_clock import NEVER_WARM, KeepWarm, keep_warm_for
from tui_agent.core.models import for_provider

if TYPE_CHECKING:
    from tui_agent.core.agent.loop import LoopState
    from tui_agent.core.messages import UsageInfo
    from tui_agent.core.providers.base import ModelRequest, Provider

ENV = "TUI_AGENT_KEEP_WARM"  # minutes of idleness to keep warm (0: off); unset: what the price pays for


@runtime_checkable
class Pinger(Protocol):
    """A provider that can send a request again only to read its cached prefix (and report the usage)."""

    async def ping(self, request: "ModelRequest") -> "UsageInfo": ...


class WarmSession(Protocol):
    """What the warmer needs of a session (`Session` is one): its provider, its loop state, its events."""

    provider: "Provider"
    state: "LoopState"

    def emit(self, event: Any) -> None: ...


def keep_warm_of(provider: "Provider", minutes: float | None = None) -> KeepWarm:
    """The pings for `provider`'s price (`keep_warm_for`), or `NEVER_WARM` when it cannot ping or does
    not cache (the demo model, OpenAI, Anthropic with prompt caching off)."""
    if not isinstance(provider, Pinger) or not getattr(provider, "prompt_caching", False):
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
    one that returns at once)."""

    session: WarmSession
    minutes: float | None = None
    keep: KeepWarm | None = None
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep
    task: asyncio.Task[None] | None = field(default=None, repr=False)

    def settings(self) -> KeepWarm:
        provider = self.session.provider
        if self.keep is not None:
            return self.keep if isinstance(provider, Pinger) else NEVER_WARM
        return keep_warm_of(provider, self.minutes)

    def heard(self, event: Any) -> None:
        """A call answered: warming starts over from now. Anything that makes or changes the next call
        (a call starting, `/clear`, `/model`) stops it first."""
        match event:
            case ev.Usage(purpose="call"):
                self.arm()
            case ev.ModelCallStarted() | ev.TurnStarted() | ev.SessionCleared() | ev.ModelSwitched():
                self.cancel()

    def arm(self) -> None:
        self.cancel()
        keep, request = self.settings(), self.session.state.last_request
        if keep.max_pings <= 0 or request is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # fed outside an event loop (a replay, a test): nothing to keep warm
            return
        self.task = loop.create_task(self._warm(self.session.provider, request, keep))
        self._emit(ev.KeepWarmArmed(keep.max_pings, keep.interval_seconds))

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

    async def _warm(self, provider: "Provider", request: "ModelRequest", keep: KeepWarm) -> None:
        assert isinstance(provider, Pinger)
        for n in range(1, keep.max_pings + 1):
            await self.sleep(keep.interval_seconds)
            try:
                usage = await provider.ping(request)
            except Exception as error:  # noqa: BLE001 - any failure stops warming, quietly, never retried
                detail = str(error) or type(error).__name__
                trace.trace("keep_warm.failed", ping=n, error=detail[:120])
                self._emit(ev.KeepWarmStopped("failed", n - 1, detail))
                return
            self.session.state.answered_at = time.monotonic()  # the cache's clock starts over
            trace.trace("keep_warm.ping", ping=n, read=usage.cache_read_input_tokens,
                        written=usage.cache_creation_input_tokens)
            self._emit(ev.CacheKeptWarm(n, keep.max_pings, keep.interval_seconds, usage.input_tokens,
                                        usage.output_tokens, usage.cache_creation_input_tokens,
                                        usage.cache_read_input_tokens, usage.cache_write_1h))
        self._emit(ev.KeepWarmStopped("limit", keep.max_pings))

    def _emit(self, event: Any) -> None:
        try:
            self.session.emit(event)
        except Exception:  # noqa: BLE001 - a face that fails to show a ping must not end the warming task loudly
            pass


def install_keep_warm(session: Any, minutes: float | None = None, keep: KeepWarm | None = None,
                      sleep: Callable[[float], Awaitable[Any]] | None = None) -> Warmer:
    """Keep `session`'s cache warm while it is idle: its listener and its closer (the door calls this for
    every face but `-p`)."""
    warmer = Warmer(session, minutes, keep, sleep or asyncio.sleep)
    session.listeners.append(warmer.heard)
    session.closers.append(warmer.aclose)
    return warmer


def warm_line(ping: int, max_pings: int, seconds_to_next: float, pings_usd: float | None) -> str:
    """The meter's line after a ping: "kept warm: ping 3 of 12, next in 4:12 · pings so far ≈$0.0040";
    before the first (`ping` 0): "keeps warm while idle: first ping in 4:29 (up to 12)"."""
    whole = max(int(seconds_to_next), 0)
    clock = f"{whole // 60}:{whole % 60:02d}"
    if ping <= 0:
        return f"keeps warm while idle: first ping in {clock} (up to {max_pings})"
    if ping >= max_pings:
        what = f"kept warm: ping {ping} of {max_pings}, the last"
    else:
        what = f"kept warm: ping {ping} of {max_pings}, next in {clock}"
    return what + (f" · pings so far ≈${pings_usd:.4f}" if pings_usd is not None else "")
