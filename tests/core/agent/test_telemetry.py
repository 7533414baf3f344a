"""Model calls as OpenTelemetry spans: a replayed session's spans reach a local OTLP/HTTP receiver (decoded
with opentelemetry-proto), one per call, with the figures of `replay --json`; nothing is imported or sent
when the endpoint variable is unset; the live loop's listener makes a span per call from its events."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tui_agent.faces.cli import main
from tui_agent.core import events as ev
from tui_agent.core.agent import telemetry
from tests.shared import SMALL_LOG

ROOT = Path(__file__).resolve().parents[3]
LOG = SMALL_LOG  # the small real log, else the long synthetic one (tests/shared.py)


class Receiver:
    """An OTLP/HTTP trace receiver on 127.0.0.1 that decodes every export request it gets."""

    def __init__(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        received: list[tuple[str, object]] = []
        self.received = received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                received.append((self.path, request))
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args) -> None:  # noqa: ANN002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def spans(self) -> list[tuple[dict, dict]]:
        """(resource attributes, span attributes) of every span received."""
        out = []
        for _, request in self.received:
            for resource_spans in request.resource_spans:
                resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                for scope in resource_spans.scope_spans:
                    for span in scope.spans:
                        out.append((resource, {"name": span.name, **{a.key: _value(a.value) for a in span.attributes}}))
        return out

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _value(value):  # noqa: ANN001, ANN202 - an AnyValue
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind)


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def test_a_replayed_sessions_calls_arrive_as_spans_with_the_figures_of_replay_json(receiver, monkeypatch,
                                                                                    capsys) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    monkeypatch.setattr(telemetry.CallTracer, "FLUSH_EVERY", 7)  # a long burst is sent in parts, none dropped
    assert main(["replay", str(LOG), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    spans = receiver.spans()
    assert {path for path, _ in receiver.received} == {"/v1/traces"}
    steps = data["steps"]
    assert len(spans) == len(steps) > 10 and len(receiver.received) >= len(steps) // 7
    by_call = {attrs["tui_agent.call"]: (resource, attrs) for resource, attrs in spans}
    assert sorted(by_call) == [s["call"] for s in steps]  # one per call, none twice
    for step in steps:
        resource, a = by_call[step["call"]]
        usage, ours = step["recorded"]["usage"], step["ours"]
        assert resource["service.name"] == "tui-agent"
        assert a["name"] == f"chat {data['model']}" and a["gen_ai.request.model"] == data["model"]
        assert a["gen_ai.operation.name"] == "chat" and a["gen_ai.provider.name"] == "anthropic"
        assert a["gen_ai.usage.input_tokens"] == step["recorded"]["real_tokens"]
        assert a["gen_ai.usage.output_tokens"] == usage["output_tokens"]
        assert a["gen_ai.usage.cache_read.input_tokens"] == usage.get("cache_read_input_tokens", 0)
        assert a["gen_ai.usage.cache_creation.input_tokens"] == usage.get("cache_creation_input_tokens", 0)
        assert a["tui_agent.source"] == "replay" and a["tui_agent.session"] == LOG.name
        for key in ("sent", "dropped", "cut", "masked"):
            assert a[f"tui_agent.compaction.{key}"] == ours[key], key
        assert a["tui_agent.compaction.estimated_tokens"] == ours["estimated_tokens"]
        assert a["tui_agent.compaction.ours_tokens"] == ours["tokens"]
        assert a["tui_agent.compaction.ours_cached_tokens"] == step["costs"]["v2"]["cached"]
        assert a["tui_agent.compaction.tokens_before"] >= a["tui_agent.compaction.tokens_after"]
        assert a.get("tui_agent.compaction.event") == ours["event"]
        assert 0.0 <= a["tui_agent.compaction.coverage"] <= 1.0
    last = by_call[steps[-1]["call"]][1]
    assert last["tui_agent.compaction.coverage"] == data["report"]["strategies"]["v2"]["coverage"]


def test_nothing_is_imported_or_sent_when_the_endpoint_is_unset(tmp_path: Path) -> None:
    code = ("import sys; from tui_agent.faces.cli import main; import io, contextlib\n"
            "with contextlib.redirect_stdout(io.StringIO()): code = main(['replay', sys.argv[1], '--report'])\n"
            "print(code, sorted(m for m in sys.modules if m.startswith('opentelemetry')))")
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("OTEL_")}
    out = subprocess.run([sys.executable, "-c", code, str(LOG)], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "0 []", out.stderr
    assert telemetry.tracer_from_env({}) is None and not telemetry.enabled({"OTEL_EXPORTER_OTLP_ENDPOINT": " "})


class Recording:
    def __init__(self) -> None:
        self.spans: list[telemetry.CallSpan] = []

    def record(self, span: telemetry.CallSpan) -> None:
        self.spans.append(span)


def test_the_live_listener_makes_one_span_per_model_call_from_its_events() -> None:
    from tui_agent.core.compaction import Compactor, CompactPolicy
    from tui_agent.core.messages import user_text

    plan = Compactor(CompactPolicy(context_window=100_000, max_output_tokens=8_000)).compact([user_text("hi")], 1).plan
    recording = Recording()
    live = telemetry.LiveTracer(recording, "session-1")  # type: ignore[arg-type]
    live(ev.ModelCallStarted(1, 1, "claude-sonnet-4-5"))
    live(ev.CompactionReported(1, plan, 1, 100, 50))
    live(ev.AssistantMessage({"role": "assistant", "content": "hello"}, 1))
    live(ev.Usage(1, 10, 5, 20, 30, purpose="summary"))  # a summary's usage is not a call
    live(ev.Usage(1, 10, 5, 20, 30))
    live(ev.TurnEnded("completed", 1))
    [span] = recording.spans
    assert (span.source, span.session, span.call, span.model) == ("live", "session-1", 1, "claude-sonnet-4-5")
    assert (span.input_tokens, span.output_tokens, span.cache_creation_tokens, span.cache_read_tokens) == (60, 5, 20, 30)
    assert span.plan is plan and span.start_ns is not None and span.end_ns >= span.start_ns
    attrs = telemetry.attributes(span)
    assert attrs["gen_ai.usage.input_tokens"] == 60 and attrs["tui_agent.compaction.sent"] == plan.sent_count


def test_a_headless_demo_turn_sends_a_live_span_per_model_call(receiver, tmp_path: Path) -> None:
    from tests.faces.test_demo_and_headless import cli, make_repo

    repo = make_repo(tmp_path)
    out = cli(["-p", "what is in this repo?"], repo, env_extra={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url})
    assert out.returncode == 0, out.stderr
    spans = [attrs for _, attrs in receiver.spans()]
    assert spans and all(a["tui_agent.source"] == "live" for a in spans)
    assert sorted(a["tui_agent.call"] for a in spans) == list(range(1, len(spans) + 1))  # one per call
    assert len(spans) >= 2  # the demo reads files, then answers
    for a in spans:
        assert a["gen_ai.request.model"] and a["name"] == f"chat {a['gen_ai.request.model']}"
        assert a["tui_agent.compaction.sent"] >= 1 and "tui_agent.compaction.estimated_tokens" in a
        assert "gen_ai.usage.input_tokens" not in a  # the demo model reports no usage: none is made up


# -- an unreachable or failing collector (issue 27) -------------------------------------------------
def closed_port() -> int:
    """A loopback port nobody listens on (bound, then let go)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_unreachable_collector_is_named_once_in_one_line_at_exit(tmp_path: Path) -> None:
    from tests.faces.test_demo_and_headless import cli, make_repo

    endpoint = f"http://127.0.0.1:{closed_port()}"
    out = cli(["-p", "what is in this repo?"], make_repo(tmp_path), env_extra={"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint})
    assert out.returncode == 0, out.stderr
    told = [line for line in out.stderr.splitlines() if "OpenTelemetry" in line or "export" in line.lower()]
    assert len(told) == 1, out.stderr
    assert told[0].startswith("[warning] OpenTelemetry:") and f"{endpoint}/v1/traces" in told[0]
    assert "refused" in told[0].lower()


class Unavailable(Receiver):
    """A collector that answers every export with 503 (retryable): the exporter's retries show in `posts`."""

    def __init__(self) -> None:
        self.posts = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.posts += 1
                self.send_response(503)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:  # noqa: ANN002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()


def test_closing_gives_up_on_a_failing_collector_instead_of_retrying_for_ten_seconds() -> None:
    """The exporter retries with backoff for 10 s (1, 2, 4 s: four posts); closing stops that after one
    short wait, and says so in one line."""
    import io

    collector = Unavailable()
    try:
        tracer = telemetry.tracer_from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url})
        assert tracer is not None
        tracer.record(telemetry.CallSpan("live", "s", 1, "claude-test"))
        err = io.StringIO()
        tracer.close(err)
    finally:
        collector.close()
    assert 1 <= collector.posts <= 2
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and collector.url in lines[0] and "1 span could not be sent" in lines[0]


# -- a collector that accepts and never answers (issue 40) -------------------------------------------
class Silent:
    """A real TCP listener on 127.0.0.1 that accepts every connection and never reads or answers."""

    def __init__(self) -> None:
        import socket

        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:  # closed
                return
            self.held.append(connection)

    def close(self) -> None:
        for connection in self.held:
            connection.close()
        self.listener.close()


def test_a_collector_that_never_answers_holds_the_exit_one_second_in_all(monkeypatch) -> None:
    """Every wait of `close` is counted on a clock that moves only by what it waits: the flush and the
    shutdown share one `CLOSE_SECONDS` (before: a second each, then the SDK's shutdown joined the export
    thread for the exporter's 10 s request timeout, and again at the interpreter's exit)."""
    import io

    clock = [0.0]
    real_join = threading.Thread.join

    def counted_join(self, timeout=None):  # noqa: ANN001, ANN202
        if not self.name.startswith("otel-"):
            return real_join(self, timeout)
        assert timeout is not None, "an unbounded wait at exit"
        real_join(self, min(timeout, 0.2))  # (what can finish, finishes)
        if self.is_alive():
            clock[0] += timeout  # it waited all it was allowed to
        return None

    monkeypatch.setattr(threading.Thread, "join", counted_join)
    monkeypatch.setattr(telemetry.time, "monotonic", lambda: clock[0])
    silent = Silent()
    try:
        tracer = telemetry.tracer_from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": silent.url})
        assert tracer is not None
        for call in (1, 2, 3):
            tracer.record(telemetry.CallSpan("live", "s", call, "claude-test"))
        err = io.StringIO()
        tracer.close(err)  # returns: the export it started is still waiting for its answer
        assert silent.held, "the export never reached the collector"
    finally:
        silent.close()
    assert 0 < clock[0] <= telemetry.CallTracer.CLOSE_SECONDS
    assert tracer.provider._atexit_handler is None  # nothing left for the interpreter's exit to wait for
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and "3 spans could not be sent" in lines[0] and silent.url in lines[0], lines
    assert "no answer within 1 s" in lines[0]


def test_headless_with_a_silent_collector_ends_with_one_line(tmp_path: Path) -> None:
    from tests.faces.test_demo_and_headless import cli, make_repo

    silent = Silent()
    try:
        out = cli(["-p", "what is in this repo?"], make_repo(tmp_path), env_extra={"OTEL_EXPORTER_OTLP_ENDPOINT": silent.url})
    finally:
        silent.close()
    assert out.returncode == 0, out.stderr
    told = [line for line in out.stderr.splitlines() if "OpenTelemetry" in line]
    assert len(told) == 1 and silent.url in told[0] and "no answer within 1 s" in told[0], out.stderr
