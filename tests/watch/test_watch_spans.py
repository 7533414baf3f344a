"""`tui-agent watch` sends a span per recorded call when OTEL_EXPORTER_OTLP_ENDPOINT is set (as replay
and the live loop do): headless `--json` and the TUI's follower thread, to a local OTLP/HTTP receiver,
one span per call (source "watch"), with the figures the watch itself prints."""

from __future__ import annotations

import os

import pytest

from tests.core.agent.test_telemetry import Receiver
from tests.waiting import wait_until, wait_until_sync
from tests.watch.test_watch_json import SMALL, Watch, _calls_in

pytest.importorskip("opentelemetry.sdk")


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def _by_call(receiver: Receiver) -> dict[int, dict]:
    calls: dict[int, dict] = {}
    for _, attrs in receiver.spans():
        assert attrs["tui_agent.call"] not in calls, "a call sent twice"
        calls[attrs["tui_agent.call"]] = attrs
    return calls


def test_watch_json_sends_a_span_per_call_with_its_figures(tmp_path, receiver):
    log = tmp_path / "live.jsonl"
    log.write_bytes(SMALL.read_bytes())
    total = _calls_in(log.read_bytes())
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.url
    watch = Watch([str(log), "--json"], env=env)
    try:
        wait_until_sync(lambda: len(watch.out) == total, what=f"{total} lines", timeout=120, shown=watch.shown)
    finally:
        assert watch.stop() == 0
    records = watch.records()
    wait_until_sync(lambda: len(receiver.spans()) >= total, what=f"{total} spans", timeout=60,
                    shown=lambda: f"{len(receiver.spans())} spans")
    spans = _by_call(receiver)
    assert sorted(spans) == [r["call"] for r in records] == list(range(1, total + 1))
    for record in records:
        a = spans[record["call"]]
        assert a["tui_agent.source"] == "watch" and a["tui_agent.session"] == log.name
        assert a["gen_ai.usage.input_tokens"] == record["recorded_tokens"]
        assert a["gen_ai.usage.cache_read.input_tokens"] == record["cache_read_tokens"]
        assert a["gen_ai.usage.cache_creation.input_tokens"] == record["cache_write_tokens"]
        assert a["tui_agent.compaction.ours_tokens"] == record["ours_tokens"]


async def test_the_watch_tui_sends_a_span_per_call_from_its_follower_thread(tmp_path, receiver, monkeypatch):
    from tui_agent.core.recordings.strategy_table import default_policy
    from tui_agent.ui.watch_app import WatchApp
    from tui_agent.faces.watch import LogSource

    for name in [k for k in os.environ if k.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    log = tmp_path / "live.jsonl"
    data = SMALL.read_bytes()
    log.write_bytes(data[: len(data) // 3])
    total = _calls_in(data)
    app = WatchApp(LogSource(log, False, False), log, default_policy(), session_label="test", show_durations=False)
    app.animation_level = "none"
    async with app.run_test(size=(150, 45)):
        screen = app.screen
        await wait_until(lambda: screen.replay is not None, what="the first calls", timeout=60)
        with open(log, "ab") as handle:
            handle.write(data[len(data) // 3:])
        await wait_until(lambda: screen.replay.calls == total, what=f"{total} calls", timeout=60,
                         shown=lambda: screen.sub_title)
        figures = list(screen.view.figures)
    await wait_until(lambda: len(receiver.spans()) >= total, what=f"{total} spans (sent when the watch ends)",
                     timeout=60, shown=lambda: f"{len(receiver.spans())} spans")
    spans = _by_call(receiver)
    assert sorted(spans) == list(range(1, total + 1))
    for f in figures:
        assert spans[f.call]["tui_agent.source"] == "watch"
        assert spans[f.call]["gen_ai.usage.input_tokens"] == f.recorded_tokens
        assert spans[f.call]["tui_agent.compaction.ours_tokens"] == round(f.ours_tokens, 1)
