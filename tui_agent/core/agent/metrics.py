"""OpenTelemetry metrics beside the spans (`telemetry.py`): what a team's dashboard adds up across sessions.

Sent only when an OTLP endpoint is configured (`OTEL_EXPORTER_OTLP_ENDPOINT`, or
`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, or the organisation policy's `telemetry`), over OTLP/HTTP by
`opentelemetry-sdk` (the `[otel]` extra); nothing is imported otherwise. The names follow the GenAI
semantic conventions where they have one and are `tui_agent.*` where they do not:

| instrument | kind, unit | attributes beside the common ones |
|---|---|---|
| `gen_ai.client.token.usage` | histogram, {token} per call | `gen_ai.token.type` input / output |
| `tui_agent.token.usage` | counter, {token} | `tui_agent.token.kind`: the `gen_ai.usage.*` kinds: input, cache_read.input, cache_creation.input, output |
| `tui_agent.cost` | counter, USD | `tui_agent.cost.cause`: conversation, pings, idle_rewrites, summaries |
| `tui_agent.compaction.events` | counter, {event} | `tui_agent.compaction.kind` (the event's kinds, `+`-joined) |
| `tui_agent.compaction.kept` | histogram, 1 | the share of the request's tokens an event kept |
| `tui_agent.compaction.coverage` | histogram, 1 | (replayed) the share of what the next replies used still sent |
| `tui_agent.keep_warm.pings` | counter, {ping} | |
| `tui_agent.keep_warm.spared` | counter, USD | the rewrites the pings spared |
| `tui_agent.idle.choices` | counter, {choice} | `tui_agent.idle.choice` ping / compact / cold, `tui_agent.idle.mode` (`--idle`) |
| `tui_agent.cache.misses` | counter, {miss} | `tui_agent.cache.miss_reason` |
| `tui_agent.cache.missed_tokens` | counter, {token} | `tui_agent.cache.miss_reason` |

Common attributes: `gen_ai.operation.name` chat, `gen_ai.provider.name`, `gen_ai.request.model`,
`tui_agent.source` (live, report) and, for the report, `tui_agent.agent` (recorded, ours, a peer). The
cardinality is bounded: no session id, path or prompt is ever an attribute; a reason or model outside the
known ones is `other`. The resource carries `service.name` and `OTEL_RESOURCE_ATTRIBUTES` (team, user…).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from tui_agent.core.agent.telemetry import PROVIDER, ExportLog, enabled, missing_extra, resource_of, with_policy

CLOSE_SECONDS = 1.0  # what the exit waits at most for the last export (as the spans' `CallTracer.close`)
MISS_REASONS = frozenset({"ttl_expired", "our_compaction", "server_edit", "unknown", "messages_changed",
                          "system_changed", "tools_changed", "model_changed", "previous_message_not_found",
                          "unavailable", "agent_compaction", "compaction"})
IDLE_CHOICES = frozenset({"ping", "compact", "cold"})  # the idle policy's (`--idle`); its modes add auto
CAUSES = frozenset({"conversation", "pings", "idle_rewrites", "summaries"})
TOKEN_KINDS = ("input", "cache_read.input", "cache_creation.input", "output")
MAX_LABEL = 64


def bounded(value: str, known: frozenset[str] | None = None) -> str:
    """An attribute value with a bounded set of values: a known one, else `other`; short, no controls."""
    text = "".join(ch for ch in str(value) if ch.isprintable())[:MAX_LABEL]
    if known is not None and text not in known:
        return "other"
    return text or "other"


def metrics_endpoint(environ: Mapping[str, str]) -> str:
    metrics = environ.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "").strip()
    if metrics:
        return metrics
    return environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip().rstrip("/") + "/v1/metrics"


class CallMetrics:
    """The instruments, on an SDK meter provider of its own (the process-wide one is left alone)."""

    def __init__(self, provider: Any, endpoint: str = "", log: ExportLog | None = None, source: str = "live") -> None:
        self.provider, self.endpoint, self.log, self.source = provider, endpoint, log, source
        meter = provider.get_meter("tui_agent")
        self.token_usage = meter.create_histogram("gen_ai.client.token.usage", unit="{token}",
                                                  description="Tokens used per model call (input includes cached)")
        self.tokens = meter.create_counter("tui_agent.token.usage", unit="{token}", description="Tokens by kind")
        self.cost = meter.create_counter("tui_agent.cost", unit="USD", description="List-price cost by cause")
        self.events = meter.create_counter("tui_agent.compaction.events", unit="{event}", description="Compaction events")
        self.kept = meter.create_histogram("tui_agent.compaction.kept", unit="1",
                                           description="Share of the request's tokens a compaction event kept")
        self.coverage = meter.create_histogram("tui_agent.compaction.coverage", unit="1",
                                               description="Share of what the next replies used that was still sent")
        self.pings = meter.create_counter("tui_agent.keep_warm.pings", unit="{ping}", description="Keep-warm pings")
        self.spared = meter.create_counter("tui_agent.keep_warm.spared", unit="USD",
                                           description="Rewrites after idle the pings spared")
        self.idle = meter.create_counter("tui_agent.idle.choices", unit="{choice}",
                                         description="The idle policy's decisions while a session waited (--idle)")
        self.misses = meter.create_counter("tui_agent.cache.misses", unit="{miss}", description="Prompt cache misses")
        self.missed_tokens = meter.create_counter("tui_agent.cache.missed_tokens", unit="{token}",
                                                  description="Tokens written again instead of read, by reason")

    def common(self, model: str, **more: str) -> dict[str, str]:
        return {"gen_ai.operation.name": "chat", "gen_ai.provider.name": PROVIDER,
                "gen_ai.request.model": bounded(model), "tui_agent.source": self.source, **more}

    def call(self, model: str, uncached: int, cache_read: int, cache_write: int, output: int,
             cost_usd: float | None, **more: str) -> None:
        """One model call's usage (and its list price, when known)."""
        attrs = self.common(model, **more)
        self.token_usage.record(uncached + cache_read + cache_write, {**attrs, "gen_ai.token.type": "input"})
        self.token_usage.record(output, {**attrs, "gen_ai.token.type": "output"})
        for kind, count in zip(TOKEN_KINDS, (uncached, cache_read, cache_write, output)):
            if count:
                self.tokens.add(count, {**attrs, "tui_agent.token.kind": kind})
        if cost_usd:
            self.add_cost(model, "conversation", cost_usd, **more)

    def add_cost(self, model: str, cause: str, usd: float, **more: str) -> None:
        if usd:
            self.cost.add(usd, {**self.common(model, **more), "tui_agent.cost.cause": bounded(cause, CAUSES)})

    def miss(self, model: str, reason: str, tokens: float, calls: int = 1, **more: str) -> None:
        attrs = {**self.common(model, **more), "tui_agent.cache.miss_reason": bounded(reason, MISS_REASONS)}
        self.misses.add(calls, attrs)
        self.missed_tokens.add(tokens, attrs)

    def event(self, model: str, kinds: tuple[str, ...], kept: float | None, **more: str) -> None:
        attrs = self.common(model, **more)
        self.events.add(1, {**attrs, "tui_agent.compaction.kind": bounded("+".join(sorted(set(kinds))))})
        if kept is not None:
            self.kept.record(kept, attrs)

    def begin_close(self) -> None:
        """Start sending what is still held, in a thread of its own (the spans' exit runs meanwhile)."""
        import time

        def send() -> None:
            try:  # shutting the reader down collects and exports once more (a flush first would send twice)
                self.provider.shutdown(timeout_millis=int(CLOSE_SECONDS * 1000))
            except Exception:  # noqa: BLE001 - a failed export is told in one line by `end_close`
                self.failed = True

        self.failed = False
        self._deadline = time.monotonic() + CLOSE_SECONDS
        self._sending = threading.Thread(target=send, name="otel-metrics-close", daemon=True)
        self._sending.start()

    def end_close(self, err: Any = None) -> None:
        """Wait for `begin_close`'s export until `CLOSE_SECONDS` after it began; a failure is one line on
        `err`, unless the spans' exit already named the collector (`ExportLog.told`): one line in all."""
        import sys
        import time

        sending = getattr(self, "_sending", None)
        if sending is None:
            self.begin_close()
            sending = self._sending
        sending.join(max(self._deadline - time.monotonic(), 0.0))
        why = self.log.reason() if self.log is not None else None
        if (sending.is_alive() or self.failed or why) and not (self.log is not None and self.log.told):
            print(f"[warning] OpenTelemetry: metrics could not be sent to {self.endpoint} "
                  f"({why or f'no answer within {CLOSE_SECONDS:g} s'}).", file=err or sys.stderr, flush=True)
            if self.log is not None:
                self.log.told = True

    def close(self, err: Any = None) -> None:
        self.begin_close()
        self.end_close(err)


def metrics_from_env(environ: Mapping[str, str] | None = None, source: str = "live") -> CallMetrics | None:
    """Instruments when an OTLP endpoint is configured, else None (nothing imported). RuntimeError with a
    one-line install hint when the extra is missing."""
    environ = with_policy(environ)
    if not enabled(environ):
        return None
    try:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource
    except ImportError as error:
        raise missing_extra(error) from None
    log = ExportLog.install()
    endpoint = metrics_endpoint(environ)
    reader = PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=endpoint, timeout=CLOSE_SECONDS),
                                           export_interval_millis=60_000)
    return CallMetrics(MeterProvider(resource=Resource.create(resource_of(environ)), metric_readers=[reader]),
                       endpoint, log, source)


class LiveMetrics:
    """A Session listener: each answered call's tokens and cost, pings and what they spared, cache misses
    and compaction events, as they happen. A call's cost is told once its miss (if any) is known: a rewrite
    after idle is its own cause, the rest of the call the conversation's."""

    def __init__(self, metrics: CallMetrics) -> None:
        self.metrics = metrics
        self.model = ""
        self._pending: tuple[int, float] | None = None  # (call, USD) not yet told
        self._answered: float | None = None  # monotonic time of the last answered call
        self._pings = 0  # since that call

    def __call__(self, event: Any) -> None:
        """One engine event, mapped from its wire form (`core/agent/event_wire.py`) by `BY_KIND`."""
        from tui_agent.core.agent.event_wire import read

        wire = read(event)
        row = BY_KIND.get(wire.kind)
        if row is not None:
            row(self, wire)

    def _call_started(self, event: Any) -> None:
        self._flush()
        self.model = event["model"]

    def _miss(self, miss: Any) -> None:
        self.metrics.miss(self.model, miss["reason"], miss.source.missed)
        call = miss["call"]
        if miss["reason"] == "ttl_expired" and self._pending is not None and self._pending[0] == call:
            extra = min(miss["extra_cost_usd"] or 0.0, self._pending[1])
            self.metrics.add_cost(self.model, "idle_rewrites", extra)
            self._pending = (call, self._pending[1] - extra)

    def _ping(self, ping: Any) -> None:
        self._flush()
        self._pings += 1
        self.metrics.pings.add(1, self.metrics.common(self.model))
        self.metrics.add_cost(self.model, "pings", _usd(self.model, ping) or 0.0)

    def _idle(self, chosen: Any) -> None:
        if not chosen["ahead"]:  # bounded: three choices, four modes
            self.metrics.idle.add(1, self.metrics.common(self.model, **{
                "tui_agent.idle.choice": bounded(chosen["choice"], IDLE_CHOICES),
                "tui_agent.idle.mode": bounded(chosen["mode"], IDLE_CHOICES | {"auto"})}))

    def _compaction(self, event: Any) -> None:
        compaction = event["plan"]["event"]
        if compaction is not None and compaction.source.major:
            before = compaction["tokens_before"]
            self.metrics.event(self.model, tuple(compaction["kinds"]),
                               compaction["tokens_after"] / before if before else None)

    def _turn_over(self, _: Any) -> None:
        self._flush()

    def _usage(self, usage: Any) -> None:
        import time

        from tui_agent.core.models import for_model, model_info

        self._flush()
        cost = _usd(self.model, usage)
        if usage["purpose"] == "summary":
            self.metrics.add_cost(self.model, "summaries", cost or 0.0)
            return
        self.metrics.call(self.model, usage["input_tokens"], usage["cache_read_input_tokens"],
                          usage["cache_creation_input_tokens"], usage["output_tokens"], None)
        now = time.monotonic()
        if self._pings and self._answered is not None and for_model(self.model).expired(now - self._answered):
            info, price = model_info(self.model), for_model(self.model)  # warm thanks to the pings only
            if info.input_price is not None:
                spared = usage["cache_read_input_tokens"] * (price.write - price.read) * info.input_price / 1e6
                self.metrics.spared.add(spared, self.metrics.common(self.model))
        self._answered, self._pings = now, 0
        self._pending = (usage["call"], cost) if cost else None

    def _flush(self) -> None:
        if self._pending is not None:
            self.metrics.add_cost(self.model, "conversation", self._pending[1])
            self._pending = None

    async def aclose(self) -> None:
        """The session closes: the last call's cost is told and the export begins (`finish` waits for it)."""
        self._flush()
        self.metrics.begin_close()

    async def finish(self) -> None:
        self.metrics.end_close()


def _usd(model: str, usage: Any) -> float | None:
    """The price of the tokens a wire form of a `Usage` or a `CacheKeptWarm` carries."""
    import dataclasses

    from tui_agent.core.messages import UsageInfo
    from tui_agent.core.models import cost_usd

    return cost_usd(model, UsageInfo(**{field.name: usage.get(field.name, 0) for field in dataclasses.fields(UsageInfo)}))


# the event kinds the metrics read (the wire's kind names: core/agent/event_wire.EVENTS)
BY_KIND: dict[str, Callable[[LiveMetrics, Any], None]] = {
    "ModelCallStarted": LiveMetrics._call_started, "Usage": LiveMetrics._usage, "CacheMissed": LiveMetrics._miss,
    "CacheKeptWarm": LiveMetrics._ping, "IdleChosen": LiveMetrics._idle, "CompactionReported": LiveMetrics._compaction,
    "TurnEnded": LiveMetrics._turn_over, "TurnClosed": LiveMetrics._turn_over,
}


def attach(session: Any, environ: Mapping[str, str] | None = None) -> LiveMetrics | None:
    """Count `session`'s calls when an endpoint is configured (None otherwise)."""
    metrics = metrics_from_env(environ)
    if metrics is None:
        return None
    live = LiveMetrics(metrics)
    session.listeners.append(live)
    # closers run last first: this one begins the export before the spans' closer runs, and `finish`, run
    # after it, waits what is left of the same second: the exit waits about one second in all, not two
    session.closers.insert(0, live.finish)
    session.closers.append(live.aclose)
    return live
