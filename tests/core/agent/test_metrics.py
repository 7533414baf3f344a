"""OpenTelemetry metrics beside the spans: a live session's calls, pings, misses and events, and a report's
figures, arrive at a local OTLP/HTTP receiver (decoded with opentelemetry-proto) under the GenAI semantic
conventions' names (`gen_ai.client.token.usage`) and ours (`tui_agent.*`), with the resource attributes of
`OTEL_RESOURCE_ATTRIBUTES` and no attribute that names a session or a path; the organisation policy turns
them on without any variable; an unreachable collector is still one line at exit."""

from __future__ import annotations

import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.shared import SYNTHETIC_LONG
from tui_agent.core import events as ev
from tui_agent.faces.cli import main

MODEL = "claude-sonnet-4-5-20250929"
ALLOWED = {"gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.token.type",
           "tui_agent.source", "tui_agent.agent", "tui_agent.token.kind", "tui_agent.cost.cause",
           "tui_agent.compaction.kind", "tui_agent.cache.miss_reason", "tui_agent.idle.choice", "tui_agent.idle.mode"}


class MetricsReceiver:
    """An OTLP/HTTP receiver on 127.0.0.1 that keeps every metrics export (traces are acknowledged)."""

    def __init__(self) -> None:
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

        self.requests: list[object] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path == "/v1/metrics":
                    request = ExportMetricsServiceRequest()
                    request.ParseFromString(body)
                    outer.requests.append(request)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:  # noqa: ANN002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def points(self) -> list[tuple[dict, str, dict, float]]:
        """(resource attributes, metric name, point attributes, value: a sum's or a histogram's sum)."""
        out = []
        for request in self.requests:
            for rm in request.resource_metrics:
                resource = {a.key: a.value.string_value for a in rm.resource.attributes}
                for scope in rm.scope_metrics:
                    for metric in scope.metrics:
                        kind = metric.WhichOneof("data")
                        for point in getattr(metric, kind).data_points:
                            attrs = {a.key: a.value.string_value for a in point.attributes}
                            value = point.sum if kind == "histogram" else (point.as_double or point.as_int)
                            out.append((resource, metric.name, attrs, value))
        return out

    def total(self, name: str, **where: str) -> float:
        return sum(v for _, n, a, v in self.points() if n == name and all(a.get(k) == w for k, w in where.items()))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver(monkeypatch):
    r = MetricsReceiver()
    for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_SERVICE_NAME"):
        monkeypatch.delenv(name, raising=False)
    yield r
    r.close()


def test_a_live_sessions_calls_pings_misses_and_events_arrive_as_metrics(receiver, monkeypatch):
    from tui_agent.core.agent.metrics import LiveMetrics, metrics_from_env
    from tui_agent.core.compaction.plan import CompactEvent, CompactPlan
    from tui_agent.core.models import cost_usd
    from tui_agent.core.messages import UsageInfo

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "team=payments,user=ada")
    metrics = metrics_from_env()
    assert metrics is not None
    live = LiveMetrics(metrics)
    event = CompactEvent(call=2, kinds=("drop", "mask"), reason="over 120k", tokens_before=120_000, tokens_after=30_000)
    plan = CompactPlan(mode="v2", enabled=True, call=2, history_len=4, event=event)
    for e in (ev.ModelCallStarted(1, 1, MODEL), ev.Usage(1, 10, 50, 20_000, 0),
              ev.IdleChosen("ping", "auto", 0.001, 0.002, 0.003, ahead=True), ev.IdleChosen("ping", "auto", 0.001, 0.002, 0.003),
              ev.CacheKeptWarm(1, 5, 270, 3, 1, 0, 20_000),
              ev.ModelCallStarted(2, 1, MODEL), ev.CompactionReported(2, plan, 4, 0, 0, []),
              ev.Usage(2, 10, 40, 25_000, 0), ev.CacheMissed(2, 20_000, 0, "ttl_expired", extra_cost_usd=0.05),
              ev.Usage(3, 500, 200, 0, 0, purpose="summary")):
        live(e)
    metrics.close()
    usage_1 = cost_usd(MODEL, UsageInfo(10, 50, 20_000, 0))
    usage_2 = cost_usd(MODEL, UsageInfo(10, 40, 25_000, 0))
    assert receiver.total("gen_ai.client.token.usage", **{"gen_ai.token.type": "input"}) == 45_020
    assert receiver.total("gen_ai.client.token.usage", **{"gen_ai.token.type": "output"}) == 90
    assert receiver.total("tui_agent.token.usage", **{"tui_agent.token.kind": "cache_creation.input"}) == 45_000
    assert receiver.total("tui_agent.cost", **{"tui_agent.cost.cause": "idle_rewrites"}) == pytest.approx(0.05)
    assert receiver.total("tui_agent.cost", **{"tui_agent.cost.cause": "conversation"}) == pytest.approx(
        usage_1 + usage_2 - 0.05)
    assert receiver.total("tui_agent.cost", **{"tui_agent.cost.cause": "pings"}) == pytest.approx(
        cost_usd(MODEL, UsageInfo(3, 1, 0, 20_000)))
    assert receiver.total("tui_agent.cost", **{"tui_agent.cost.cause": "summaries"}) > 0
    assert receiver.total("tui_agent.keep_warm.pings") == 1
    assert receiver.total("tui_agent.idle.choices", **{"tui_agent.idle.choice": "ping", "tui_agent.idle.mode": "auto"}) == 1
    assert receiver.total("tui_agent.cache.missed_tokens", **{"tui_agent.cache.miss_reason": "ttl_expired"}) == 20_000
    assert receiver.total("tui_agent.compaction.events", **{"tui_agent.compaction.kind": "drop+mask"}) == 1
    assert receiver.total("tui_agent.compaction.kept") == pytest.approx(0.25)
    for resource, _, attrs, _ in receiver.points():
        assert resource["team"] == "payments" and resource["user"] == "ada" and resource["service.name"] == "tui-agent"
        assert set(attrs) <= ALLOWED and attrs["gen_ai.request.model"] == MODEL and attrs["tui_agent.source"] == "live"


def _store(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    store.mkdir()
    shutil.copy(SYNTHETIC_LONG, store / "long.jsonl")
    return store


def test_a_reports_figures_arrive_per_agent_and_cause_never_per_session(receiver, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    store = _store(tmp_path)
    assert main(["report", str(store), "--jobs", "1", "--table", str(tmp_path / "t.csv")]) == 0
    capsys.readouterr()
    import csv

    row = next(csv.DictReader(open(tmp_path / "t.csv", encoding="utf-8")))
    assert receiver.total("tui_agent.cost", **{"tui_agent.agent": "ours"}) == pytest.approx(float(row["ours_usd"]))
    assert receiver.total("tui_agent.cost", **{"tui_agent.agent": "ours", "tui_agent.cost.cause": "pings"}) == \
        pytest.approx(float(row["ours_pings_usd"]))
    assert receiver.total("tui_agent.keep_warm.pings", **{"tui_agent.agent": "ours"}) == int(row["ours_pings"])
    agents = {a.get("tui_agent.agent") for _, _, a, _ in receiver.points()}
    assert agents == {"recorded", "append_only", "ours", "claude_code", "opencode", "context_editing"}
    for _, _, attrs, _ in receiver.points():
        assert set(attrs) <= ALLOWED and attrs["tui_agent.source"] == "report"
        assert not any("long.jsonl" in value or str(tmp_path) in value for value in attrs.values())


def test_the_organisation_policy_turns_metrics_on_with_its_resource_attributes(receiver, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "user=ada,team=mine")
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"telemetry": {"endpoint": receiver.url, "resourceAttributes": {"team": "payments"}}}))
    monkeypatch.setenv("TUI_AGENT_POLICY_FILE", str(policy))
    assert main(["report", str(_store(tmp_path)), "--jobs", "1"]) == 0
    capsys.readouterr()
    resources = {tuple(sorted(r.items())) for r, _, _, _ in receiver.points()}
    assert resources and all(dict(r)["team"] == "payments" and dict(r)["user"] == "ada" for r in resources)


def test_nothing_is_sent_or_imported_without_an_endpoint(monkeypatch):
    from tui_agent.core.agent.metrics import metrics_from_env

    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    assert metrics_from_env({}) is None


def test_a_call_kept_warm_past_the_ttl_by_pings_counts_what_they_spared(receiver, monkeypatch):
    import time

    from tui_agent.core.agent.metrics import LiveMetrics, metrics_from_env
    from tui_agent.core.models import for_model, model_info

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    metrics = metrics_from_env()
    assert metrics is not None
    live = LiveMetrics(metrics)
    now = [1_000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    live(ev.ModelCallStarted(1, 1, MODEL))
    live(ev.Usage(1, 10, 50, 30_000, 0))
    now[0] += 200  # within the TTL: no ping needed, nothing spared
    live(ev.ModelCallStarted(2, 1, MODEL))
    live(ev.Usage(2, 10, 50, 1_000, 30_000))
    live(ev.CacheKeptWarm(1, 5, 270, 3, 1, 0, 31_000))
    now[0] += 500  # past the 5-minute TTL: warm only thanks to the ping
    live(ev.ModelCallStarted(3, 1, MODEL))
    live(ev.Usage(3, 10, 50, 500, 31_000))
    metrics.close()
    price, cache = model_info(MODEL).input_price / 1e6, for_model(MODEL)
    assert receiver.total("tui_agent.keep_warm.spared") == pytest.approx(31_000 * (cache.write - cache.read) * price)
