"""Model calls as OpenTelemetry spans, for teams that already run a trace collector.

Only when the standard `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set:
otherwise `tracer_from_env` returns None and nothing of OpenTelemetry is imported or sent. With it set,
each model call becomes one span sent over OTLP/HTTP (protobuf) by `opentelemetry-sdk` and its exporter
(the optional extra `pip install 'tui-agent[otel]'`), which read the usual `OTEL_*` variables themselves
(headers, timeout, compression, `OTEL_SERVICE_NAME`). Langfuse, Phoenix, Jaeger and Grafana Tempo accept
OTLP/HTTP.

A span follows the GenAI semantic conventions (`gen_ai.operation.name` "chat", `gen_ai.provider.name`,
`gen_ai.request.model`, `gen_ai.usage.input_tokens` / `output_tokens` / `cache_read.input_tokens` /
`cache_creation.input_tokens`; the input count includes the cached tokens, as the conventions ask), and
carries the compaction decision of that call under `tui_agent.compaction.*`: how many messages were
sent, dropped, cut and masked, the request's tokens before and after compaction (chars/4, system and
tools included) and its calibrated estimate, the cached prefix (messages), the
event's reason and, where the replay measured it, the future-entity coverage.

Three sources make one span per call: the live loop (`LiveTracer`, a Session listener), `tui-agent
replay` and `tui-agent watch` (`step_tracer("replay" | "watch")`, called with each replayed step).
It lives in the agent's wing: it listens to a session's events and names the compaction plan of each call,
both from the floors below; the recordings wing above turns replayed steps into spans through it.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from tui_agent.core.access.effective_settings import ENDPOINT_VARIABLES
from tui_agent.core.agent.event_wire import WireView, read
from tui_agent.core.redact import redact

if TYPE_CHECKING:
    from tui_agent.core.compaction.plan import CompactPlan

SERVICE = "tui-agent"
PROVIDER = "anthropic"  # the recorded agents and our default provider speak the Anthropic Messages API


@dataclass(frozen=True)
class CallSpan:
    """One model call as the span will tell it (typed, so every source fills the same fields)."""

    source: str  # "live" | "replay" | "watch"
    session: str  # a journal id or a log's file name
    call: int  # 1-based
    model: str
    input_tokens: int | None = None  # uncached + cache written + cache read (the whole prompt)
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_creation_tokens: int | None = None
    plan: CompactPlan | None = None  # our compactor's decision for this call's request
    ours_tokens: float | None = None  # replay: our request on the session's fitted ruler
    ours_cached_tokens: float | None = None  # replay: the part of it read from the cache
    coverage: float | None = None  # replay with memory checks: our running future-entity coverage
    start_ns: int | None = None
    end_ns: int | None = None


def attributes(span: CallSpan) -> dict[str, Any]:
    """The span's attributes (None values left out: an attribute is there only when known)."""
    out: dict[str, Any] = {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": PROVIDER, "gen_ai.system": PROVIDER,
        "gen_ai.request.model": span.model, "gen_ai.usage.input_tokens": span.input_tokens,
        "gen_ai.usage.output_tokens": span.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": span.cache_read_tokens,
        "gen_ai.usage.cache_creation.input_tokens": span.cache_creation_tokens,
        "tui_agent.source": span.source, "tui_agent.session": span.session, "tui_agent.call": span.call,
        "tui_agent.compaction.ours_tokens": span.ours_tokens,
        "tui_agent.compaction.ours_cached_tokens": span.ours_cached_tokens,
        "tui_agent.compaction.coverage": span.coverage,
    }
    plan = span.plan
    if plan is not None:
        event = plan.event
        out.update({
            "tui_agent.compaction.mode": plan.mode, "tui_agent.compaction.sent": plan.sent_count,
            "tui_agent.compaction.dropped": plan.dropped_count,
            "tui_agent.compaction.cut": sum(len(v) for v in plan.cuts.values()),
            "tui_agent.compaction.masked": sum(len(v) for v in plan.masks.values()),
            "tui_agent.compaction.tokens_before": plan.message_tokens_before + plan.baseline_tokens,
            "tui_agent.compaction.tokens_after": plan.message_tokens_after + plan.baseline_tokens,
            "tui_agent.compaction.estimated_tokens": plan.estimated_tokens,  # calibrated on the usage so far
            "tui_agent.compaction.cached_messages": plan.cached_messages,
            "tui_agent.compaction.event": event.line() if event is not None and event.major else None,
            "tui_agent.compaction.event_reason": event.reason if event is not None else None,
            "tui_agent.compaction.event_kinds": list(event.kinds) if event is not None else None,
        })
    return {key: redact(value) if isinstance(value, str) else value for key, value in out.items() if value is not None}


class CallTracer:
    """Sends `CallSpan`s through an SDK tracer provider of its own (the process-wide one is left alone).

    At the end it waits at most `CLOSE_SECONDS` in all for what is still batched: an unreachable collector
    made every `-p` and `replay` exit wait out the exporter's retries (10 s), printing a bare exporter line,
    and one that accepts and never answers its request timeout (10 s more).
    The exporter's own log lines are kept (`ExportLog`), and `close` says once, in one line, which
    endpoint failed."""

    FLUSH_EVERY = 1_000  # spans: the SDK's batch queue holds 2,048 and drops the rest; a replay records in a burst
    CLOSE_SECONDS = 1.0

    def __init__(self, provider: Any, exporter: Any = None, endpoint: str = "", log: ExportLog | None = None) -> None:
        self.provider = provider
        self.tracer = provider.get_tracer("tui_agent")
        self.recorded = 0
        self.exporter, self.endpoint, self.log = exporter, endpoint, log

    def record(self, span: CallSpan) -> None:
        start = span.start_ns if span.start_ns is not None else time.time_ns()
        end = span.end_ns if span.end_ns is not None else start
        otel_span = self.tracer.start_span(f"chat {span.model}".strip(), start_time=start,
                                           attributes=attributes(span))
        otel_span.end(end_time=end)
        self.recorded += 1
        if self.recorded % self.FLUSH_EVERY == 0:
            self.provider.force_flush()

    def close(self, err: TextIO | None = None) -> None:
        """Send what is still batched and stop, waiting `CLOSE_SECONDS` in all; a failed export is told on
        `err` (stderr) in one line that names the endpoint."""
        deadline = time.monotonic() + self.CLOSE_SECONDS
        # The SDK's force_flush exports in the caller's thread and ignores its timeout (opentelemetry-python
        # issue 4568), and its shutdown joins the export thread for up to 30 s: a collector that accepts and
        # never answers held every exit for the exporter's 10 s request timeout. Each runs in a thread of
        # its own, waited for until the one deadline; what is still stuck then is abandoned (daemon threads,
        # and no shutdown left for the interpreter's exit: `shutdown_on_exit=False`).
        flushed = within(self.provider.force_flush, deadline, "otel-flush")
        if self.exporter is not None:
            self.exporter.shutdown()  # a retry waiting out its backoff gives up now (it only sets a flag)
        within(self.provider.shutdown, deadline, "otel-shutdown")
        unsent = self.recorded - getattr(self.exporter, "sent", self.recorded)  # failed, or still waiting
        if unsent or not flushed:
            why = (self.log.reason() if self.log is not None else None) or f"no answer within {self.CLOSE_SECONDS:g} s"
            print(f"[warning] OpenTelemetry: {unsent or 'the last'} span{'s' if unsent != 1 else ''} could not be "
                  f"sent to {self.endpoint} ({why}).", file=err or sys.stderr, flush=True)
            if self.log is not None:
                self.log.told = True


def within(work: Any, deadline: float, name: str) -> bool:
    """Run `work()` in a daemon thread and wait for it until `deadline` (monotonic) at most: whether it
    finished. Every wait of `CallTracer.close` is one of these, against one deadline."""
    thread = threading.Thread(target=work, name=name, daemon=True)
    thread.start()
    thread.join(max(0.0, deadline - time.monotonic()))
    return not thread.is_alive()


class ExportLog(logging.Handler):
    """The OpenTelemetry SDK's and exporter's warnings, kept instead of printed: the first one says why an
    export failed (`close` reports it in its line)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.first: str | None = None
        self.told = False  # a failed export was already told (the spans' and the metrics' exits say it once)

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if self.first is None and "shutdown" not in message.lower():
            errno = re.search(r"\[Errno -?\d+\][^'\")]*", message)  # "[Errno 111] Connection refused"
            self.first = errno.group(0).strip() if errno else " ".join(message.split())[:160]

    def reason(self) -> str | None:
        return self.first

    @classmethod
    def install(cls) -> ExportLog:
        """One for the process, on the `opentelemetry` loggers (they no longer reach stderr themselves)."""
        logger = logging.getLogger("opentelemetry")
        for handler in logger.handlers:
            if isinstance(handler, cls):
                handler.first, handler.told = None, False
                return handler
        handler = cls()
        logger.addHandler(handler)
        logger.propagate = False
        return handler


def enabled(environ: Mapping[str, str] | None = None) -> bool:
    environ = with_policy(environ)
    return any(environ.get(name, "").strip() for name in ENDPOINT_VARIABLES)


def with_policy(environ: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """`environ` (the process's when None) with the organisation policy's telemetry in force: its endpoint
    and resource attributes (`core/access/org_policy.py`); as it is when there is no policy file."""
    from tui_agent.core.access.effective_settings import policy_settings, telemetry_env

    environ = os.environ if environ is None else environ
    settings = policy_settings(environ)
    return telemetry_env(environ, settings) if settings.telemetry_endpoint else environ


def resource_attributes(environ: Mapping[str, str]) -> dict[str, str]:
    """`OTEL_RESOURCE_ATTRIBUTES` of `environ` (`team=payments,user=ada`, values percent-decoded), read here
    because the SDK's own detector reads only the process's environment."""
    from urllib.parse import unquote

    out: dict[str, str] = {}
    for pair in environ.get("OTEL_RESOURCE_ATTRIBUTES", "").split(","):
        key, sep, value = pair.partition("=")
        if sep and key.strip():
            out[key.strip()] = unquote(value.strip())
    return out


def resource_of(environ: Mapping[str, str]) -> dict[str, str]:
    """What the traces and the metrics say of who sent them: the resource attributes and the service name."""
    return {**resource_attributes(environ), "service.name": environ.get("OTEL_SERVICE_NAME") or SERVICE}


def missing_extra(error: ImportError) -> RuntimeError:
    """An endpoint is set but the `otel` extra is not installed: one line that says how to install it."""
    return RuntimeError("OTEL_EXPORTER_OTLP_ENDPOINT is set but OpenTelemetry is not installed "
                        f"(pip install 'tui-agent[otel]'): {error}")


def tracer_from_env(environ: Mapping[str, str] | None = None) -> CallTracer | None:
    """A tracer when an OTLP endpoint is configured, else None (and nothing imported). Raises
    RuntimeError with a one-line install hint when the variable is set but the extra is missing."""
    environ = with_policy(environ)
    if not enabled(environ):
        return None
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as error:
        raise missing_extra(error) from None
    log = ExportLog.install()  # an unreachable collector: said once at the end, never a line per retry
    endpoint = traces_endpoint(environ)
    exporter = _Once(OTLPSpanExporter(endpoint=endpoint))
    provider = TracerProvider(resource=Resource.create(resource_of(environ)),
                              shutdown_on_exit=False)  # `CallTracer.close` shuts it down, within its deadline
    provider.add_span_processor(BatchSpanProcessor(exporter))  # type: ignore[arg-type]  # a SpanExporter by shape
    return CallTracer(provider, exporter, endpoint, log)


class _Once:
    """The exporter, shut down once (`close` stops it before the SDK does; a second call logs a warning),
    counting the spans of the exports that succeeded (the rest failed, or never got an answer)."""

    def __init__(self, exporter: Any) -> None:
        self.exporter = exporter
        self.sent = 0
        self._shut = False

    def export(self, spans: Any) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        result = self.exporter.export(spans)
        if result is SpanExportResult.SUCCESS:
            self.sent += len(spans)
        return result

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.exporter.force_flush(timeout_millis)

    def shutdown(self) -> None:
        if not self._shut:
            self._shut = True
            self.exporter.shutdown()


def traces_endpoint(environ: Mapping[str, str]) -> str:
    """Where spans go: the traces endpoint as given, or `/v1/traces` under the base one (as the SDK does)."""
    traces = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if traces:
        return traces
    return environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip().rstrip("/") + "/v1/traces"


# -- the live loop -----------------------------------------------------------------------------------
class LiveTracer:
    """A Session listener: a span per answered model call, from its start to its usage (or to its reply,
    for a provider that reports none, such as the demo model), with the call's plan."""

    def __init__(self, tracer: CallTracer, session_name: str) -> None:
        self.tracer = tracer
        self.session_name = session_name
        self._started: dict[int, tuple[int, str]] = {}  # call → (start ns, model)
        self._plans: dict[int, CompactPlan] = {}
        self._answered: dict[int, int] = {}  # call → when its reply came (waiting for its usage)
        self._current = 0

    def __call__(self, event: Any) -> None:
        """One engine event, mapped from its wire form (`core/agent/event_wire.py`) by `BY_KIND`."""
        wire = read(event)
        row = BY_KIND.get(wire.kind)
        if row is not None:
            row(self, wire)

    def _call_started(self, event: WireView) -> None:
        self._flush()
        self._started[event["call"]] = (time.time_ns(), event["model"])
        self._current = event["call"]

    def _plan(self, event: WireView) -> None:
        self._plans[event["call"]] = event["plan"].source  # (the span names the engine's plan whole)

    def _answer(self, _: WireView) -> None:
        if self._current in self._started:
            self._answered[self._current] = time.time_ns()

    def _usage(self, event: WireView) -> None:
        if event["purpose"] == "call":
            self._answered.pop(event["call"], None)
            self._record(event["call"], time.time_ns(), event)

    def _turn_over(self, _: WireView) -> None:
        self._flush()

    def _flush(self) -> None:
        """The answered calls whose provider reported no usage; calls never answered are left out."""
        for call, end in sorted(self._answered.items()):
            self._record(call, end, None)
        self._answered.clear()
        self._started.clear()
        self._plans.clear()

    def _record(self, call: int, end: int, usage: WireView | None) -> None:
        start, model = self._started.pop(call, (None, ""))
        plan = self._plans.pop(call, None)
        if usage is None:
            self.tracer.record(CallSpan("live", self.session_name, call, model, plan=plan, start_ns=start, end_ns=end))
            return
        self.tracer.record(CallSpan(
            "live", self.session_name, call, model, usage.source.context_tokens, usage["output_tokens"],
            usage["cache_read_input_tokens"], usage["cache_creation_input_tokens"], plan, start_ns=start, end_ns=end))


# the event kinds a live trace reads (the wire's kind names: core/agent/event_wire.EVENTS)
BY_KIND: dict[str, Callable[[LiveTracer, WireView], None]] = {
    "ModelCallStarted": LiveTracer._call_started, "CompactionReported": LiveTracer._plan,
    "AssistantMessage": LiveTracer._answer, "Usage": LiveTracer._usage,
    "TurnEnded": LiveTracer._turn_over, "TurnClosed": LiveTracer._turn_over,
}


def attach(session: Any, environ: Mapping[str, str] | None = None) -> LiveTracer | None:
    """Trace `session`'s model calls when an endpoint is configured (None otherwise)."""
    tracer = tracer_from_env(environ)
    if tracer is None:
        return None
    live = LiveTracer(tracer, session.trace_id)
    session.listeners.append(live)
    session.closers.append(_closer(tracer))
    return live


def _closer(tracer: CallTracer):
    async def close() -> None:
        tracer.close()

    return close
