"""The budget meter: one call's request against the model's context window, cached / new and priced.

Its numbers are the core's (`core.agent.budget.CallFigures`, set from above); the meter only draws them. The
bar splits the request into the prefix the provider reads from its cache and the part it reads new,
then free space up to the high-water mark (the tick: where compaction starts) and the output reserve.
Below it: the price of the call (list price, or new-token equivalents when the model has no price), the water
marks in words, the base broken down like Claude Code's `/context`, and the history beside what is
sent. Estimates carry ≈; when the API reports usage for the call, its count replaces the estimate.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from tui_agent.core.agent.budget import BaseBreakdown, BudgetLedger, CallFigures
from tui_agent.core.agent.keep_warm import pings_line, warm_line
from tui_agent.core.cache_clock import cache_outlook, caches_nothing, outlook_line
from tui_agent.core.models import CachePrice
from tui_agent.core.sanitize import strip_controls
from tui_agent.ui.budget_model import cache_parts, counted, fmt_k
from tui_agent.ui.themes import MUTED

if TYPE_CHECKING:
    from tui_agent.core.events import CacheKeptWarm, CacheMissed, IdleChosen, KeepWarmArmed, KeepWarmStopped, Usage


class BudgetMeter(Widget):
    """Headline, optional exact count, cached/new bar, key, price, base breakdown, sizes, cache split."""

    DEFAULT_CSS = """
    BudgetMeter { height: auto; padding: 0 1; }
    """

    meter: reactive[CallFigures | None] = reactive(None, layout=True)
    base: reactive[BaseBreakdown | None] = reactive(None, layout=True)
    history: reactive[tuple[int, int, int]] = reactive((0, 0, 0))  # history tokens, history msgs, sent msgs
    usage: reactive["Usage | None"] = reactive(None, layout=True)  # the last call's API usage
    exact: reactive[Content | None] = reactive(None, layout=True)  # exact count (or why not) for `meter`
    tool_line: reactive[str] = reactive("", layout=True)  # the Context tool's uses and their cost
    clock_line: reactive[str] = reactive("", layout=True)  # when the cache goes cold (live sessions only)
    pings_line: reactive[str] = reactive("", layout=True)  # what the keep-warm pings cost so far (none planned)
    idle_line: reactive[str] = reactive("", layout=True)  # the idle policy's choice and the three prices
    miss: "CacheMissed | None" = None  # the last call's cache miss: the clock says why before when
    CLOCK_SECONDS = 1.0

    def call_finished(self, price: CachePrice, input_price_per_token: float | None = None,
                      keep_warm: "KeepWarmArmed | None" = None, since: float | None = None) -> None:
        """A call reported its usage: from now the clock says how long its prefix stays cached and what
        the next call then writes (`core.cache_clock`), and when the first keep-warm ping is due if the
        session keeps it warm (`keep_warm`). The clock runs from `since` (`time.monotonic()` when the call
        was SENT: the cache's time to live runs from the request, not from the end of its answer). Only
        where the screen shows durations: a clock in a snapshot would differ from run to run."""
        if not getattr(self.app, "show_durations", False):
            return
        now = since if since is not None else time.monotonic()
        self._clock = (now, price, input_price_per_token)
        # (pings so far, most pings, seconds between pings, since when, what the pings cost): no ping yet
        self._warm: tuple[int, int, float, float, float | None] | None = (
            (0, keep_warm.max_pings, keep_warm.interval_seconds, now, None) if keep_warm is not None else None)
        if getattr(self, "_clock_timer", None) is None:
            self._clock_timer = self.set_interval(self.CLOCK_SECONDS, self._tick)
        self._tick()

    def kept_warm(self, ping: "CacheKeptWarm", ledger: "BudgetLedger", since: float | None = None) -> None:
        """A keep-warm ping read the prefix again: its time to live starts over from when it was sent
        (`since`; the outlook says warm), and a line above it says which ping it was, when the next comes
        and what the pings cost so far."""
        self.show_pings(ledger)
        if getattr(self, "_clock", None) is None:  # no clock on this screen (snapshots)
            return
        _, price, per_token = self._clock
        now = since if since is not None else time.monotonic()
        self._clock = (now, price, per_token)
        usd = ledger.ping_cost if ledger.priced else None
        self._warm = (ping.ping, ping.max_pings, ping.interval_seconds, now, usd)
        self._tick()

    def heard_warm(self, event: "CacheKeptWarm | KeepWarmStopped | IdleChosen", ledger: "BudgetLedger",
                   since: float | None = None) -> str:
        """A keep-warm ping, warming that stopped, or the idle policy's choice (`--idle`), drawn; returns the chat's
        line ("": none): a stop says why, except the idle policy's own (its choice said it, when it changed)."""
        from tui_agent.core import events as ev

        if isinstance(event, ev.CacheKeptWarm):
            self.kept_warm(event, ledger, since)
            return event.note  # the endpoint refused max_tokens 0: said once
        if isinstance(event, ev.KeepWarmStopped):
            self.warm_stopped(ledger)
            return "" if event.reason == "policy" else event.line
        self.idle_line = event.line
        self.idle_mode = event.mode
        if event.choice == "cold" and getattr(self, "_clock", None) is not None:
            self._warm = None  # no ping is coming: the clock says when the cache goes cold, alone
            self._tick()
        return event.said if event.news else ""

    def warm_stopped(self, ledger: "BudgetLedger | None" = None) -> None:
        """Warming stopped (its reason is said in the chat): the clock counts on from the last ping, alone, and
        what the pings cost so far stays on its own line."""
        if ledger is not None:
            self.show_pings(ledger)
        if getattr(self, "_clock", None) is not None:
            self._warm = None
            self._tick()

    def show_pings(self, ledger: "BudgetLedger") -> None:
        """The pings' cost so far (and the calls that missed anyway), unless the warm line says it (warming,
        with a ping since the last call). Pings after the session's last call are real money too: they stay."""
        warming = ledger.keep_warm is not None and ledger.warm is not None
        self.pings_line = "" if warming else pings_line(
            ledger.pings, ledger.ping_cost if ledger.priced else None, ledger.kept_warm_missed)

    def retick(self) -> None:
        """Redraw the clock line now (the last call's miss became known after its usage)."""
        if getattr(self, "_clock", None) is not None:
            self._tick()

    def _tick(self) -> None:
        since, price, per_token = self._clock
        meter = self.meter
        usage = self.usage
        nothing = caches_nothing(usage, price)  # the same value the ledger prices the next call by
        outlook = cache_outlook(time.monotonic() - since, price, meter.shown_total, 0, nothing) if meter else None
        line = outlook_line(outlook, per_token) if outlook is not None else ""
        miss = self.miss
        if miss is not None and line:  # the clock restarted from a rewrite: say what caused it
            line = f"last call missed {miss.missed:,} tok ({miss.why()}) · {line}"
        warm = getattr(self, "_warm", None)
        if warm is not None and line:
            pings, most, interval, at, usd = warm
            decided = getattr(self, "idle_mode", "") == "auto"  # each ping priced when due (`--idle auto`)
            line = warm_line(pings, most, interval - (time.monotonic() - at), usd, decided) + "\n" + line
        self.clock_line = line

    def watch_meter(self, old: CallFigures | None, new: CallFigures | None) -> None:
        """A count belongs to the request it measured: a new call or preview makes it stale."""
        if old is None or new is None or (old.label, old.messages, old.base) != (new.label, new.messages, new.base):
            self.exact = None

    def render(self) -> Content:
        meter = self.meter
        width = max(self.content_region.width, 10)
        history_tokens, history_count, sent_count = self.history
        if meter is None:
            base = self.base
            return Content.assemble(
                ("No model call yet.", "bold"), "\n",
                ("request = system + tools + sent messages, per call", MUTED), "\n",
                self.exact or "", "\n",
                (f"history ≈{fmt_k(history_tokens)} tok · {counted(history_count, 'msg')}", MUTED),
                *(("\n", self._base_line(None)) if base is not None else ()),
            )
        exact = meter.exact_total is not None
        total = meter.shown_total
        approx = "" if exact else "≈"
        kind = ("API usage", "$text-success") if exact else (
            ("calibrated", MUTED) if meter.calibrated else ("estimate", MUTED))
        headline = Content.assemble(
            (f"{meter.label} ", "bold"),
            (f"{approx}{total:,}", "bold $text"),
            f" / {fmt_k(meter.room)} tok {'budget' if meter.budget else 'room'} ({meter.percent}%) ",
            kind,
        )
        key = Content.assemble(
            ("■", "$text-accent"), f" cached {approx}{fmt_k(meter.cached)}  ",
            ("■", "$budget-messages"), f" new {approx}{fmt_k(meter.new)}  ",
            ("▒", "$budget-reserve"), f" out {fmt_k(meter.reserve)}", "\n",
            ("│", "bold $budget-threshold"), f" {meter.water_marks}",
            (" (high → low water)" if "→" in meter.water_marks else "", MUTED),
            *(("\n", (meter.budget_line, MUTED)) if meter.budget_line else ()),
            *(("\n", (meter.mark_warning, "$text-warning")) if meter.mark_warning else ()),
        )
        lines = [headline]
        if self.exact is not None:
            lines.append(self.exact)
        lines += [self._bar(meter, width), key, self._price_line(meter), self._base_line(meter),
                  self._sizes_line(meter, history_tokens, history_count, sent_count)]
        if self.usage is not None:
            lines.append(self._cache_line(self.usage))
        if self.tool_line:
            lines.append(Content.styled(strip_controls(self.tool_line), "$text-accent"))  # holds model input
        if self.clock_line:
            lines.append(Content.styled(self.clock_line, "$text-warning" if "cold" in self.clock_line else MUTED))
        if self.pings_line:
            lines.append(Content.styled(self.pings_line, MUTED))
        if self.idle_line:
            lines.append(Content.styled(self.idle_line, MUTED))
        return Content("\n").join(lines)

    @staticmethod
    def _price_line(meter: CallFigures) -> Content:
        who = "this call" if meter.call is not None else "next call"
        cost = meter.cost  # the same figure the replay and watch cards show for the call (`models.InputCost`)
        if cost.usd is not None:
            return Content.assemble((f"{who} ", MUTED), (cost.text(), "bold $text-success"),
                                    (" input, list price", MUTED))
        return Content.assemble((f"{who} ", MUTED), (cost.text(), "bold"),
                                (f" (no list price known; {cost.note()})", MUTED))

    def _base_line(self, meter: CallFigures | None) -> Content:
        base = self.base
        if base is None and meter is not None:
            return Content.styled(f"base {fmt_k(meter.base)}: system + tools", MUTED)
        parts = [f"{name} {fmt_k(tokens)}" for name, tokens in base.parts()]
        return Content.assemble(("base ", MUTED), (f"≈{fmt_k(base.total)}", "$budget-baseline"),
                                (": " + " · ".join(parts), MUTED))

    @staticmethod
    def _sizes_line(meter: CallFigures, history_tokens: int, history_count: int, sent_count: int) -> Content:
        free = max(meter.window - meter.reserve - meter.shown_total, 0)
        return Content.assemble(
            ("history ", MUTED), f"≈{fmt_k(history_tokens)} · {counted(history_count, 'msg')}",
            (" → sent ", MUTED), f"≈{fmt_k(meter.messages)} · {counted(sent_count, 'msg')}",
            (" · free ", MUTED), f"{fmt_k(free)}",
        )

    @staticmethod
    def _cache_line(usage: "Usage") -> Content:
        """The last call's input split: read from the cache, written to it, and sent uncached."""
        text, share = cache_parts(usage.cache_read_input_tokens, usage.cache_creation_input_tokens,
                                  usage.input_tokens)
        return Content.assemble(
            text, "\n",
            (f"call #{usage.call} input {fmt_k(usage.context_tokens)} · ", MUTED),
            (f"{share}% read from cache", "$text-success" if share >= 50 else MUTED),
        )

    @staticmethod
    def _bar(meter: CallFigures, width: int) -> Content:
        """Cells for cached | new | free | high-water tick | free | reserve; every non-zero part gets ≥1 cell."""
        window = max(meter.window, 1)

        def cells(tokens: int) -> int:
            return 0 if tokens <= 0 else max(1, round(tokens * width / window))

        reserve = cells(meter.reserve)
        total = meter.shown_total
        cached = cells(min(meter.cached, total))
        new = cells(max(total - meter.cached, 0))
        if cached + new + reserve + 1 > width:  # past the window: the request eats into the reserve
            new = max(width - cached, 0)
            return Content.assemble(("▇" * cached, "$text-accent"), ("▇" * new, "$budget-threshold"))
        free = width - cached - new - reserve - 1
        high = meter.high or max(meter.window - meter.reserve, 0)
        tick = min(max(round(high * width / window) - cached - new, 0), free)
        return Content.assemble(
            ("▇" * cached, "$text-accent"),
            ("▇" * new, "$budget-messages"),
            ("░" * tick, "$budget-free"),
            ("│", "bold $budget-threshold"),
            ("░" * (free - tick), "$budget-free"),
            ("▒" * reserve, "$budget-reserve"),
        )


def exact_note(exact: int | None, estimate: int | None, provider: str) -> Content:
    """The meter's exact-count line: the provider's count beside how far the estimate (≈) was from it."""
    if exact is None:
        return Content.styled(f"exact count: {provider} can't count tokens (≈ only)", MUTED)
    off = ((estimate if estimate is not None else exact) - exact) * 100 / exact if exact else 0.0
    how = "right" if round(off) == 0 else f"{abs(off):.0f}% {'low' if off < 0 else 'high'}"
    return Content.assemble(("exact ", "$text-success"), (f"{exact:,}", "bold"), (f" (count_tokens) · ≈ {how}", MUTED))
