"""A report's figures as OpenTelemetry metrics (`core/agent/metrics.py`'s instruments, `tui_agent.source`
"report"), when an OTLP endpoint is configured: a team that runs `tui-agent report` over its shared store
sees on its dashboard what was spent, what ours would have spent, by cause, per model and per agent
(`tui_agent.agent`: recorded, append_only, ours and the peers) — never per session or path."""

from __future__ import annotations

from collections.abc import Sequence

from tui_agent.core.recordings.recorded_spend import MISS_REASONS
from tui_agent.report.table import Row

RECORDED = "recorded"


def send_report_metrics(rows: Sequence[Row]) -> bool:
    """Record every readable session and send; False when no endpoint is configured. RuntimeError (one
    line) when the `[otel]` extra is missing."""
    from tui_agent.core.agent.metrics import metrics_from_env

    metrics = metrics_from_env(source="report")
    if metrics is None:
        return False
    for row in rows:
        f = row.figures
        if f is None:
            continue
        model = f.model
        metrics.call(model, f.uncached_tokens, f.cache_read_tokens, f.cache_write_tokens, f.output_tokens, None,
                     **{"tui_agent.agent": RECORDED})
        if f.input_usd is not None:
            metrics.add_cost(model, "conversation", f.input_usd - (f.idle_rewrites_usd or 0.0) + (f.output_usd or 0.0),
                             **{"tui_agent.agent": RECORDED})
            metrics.add_cost(model, "idle_rewrites", f.idle_rewrites_usd or 0.0, **{"tui_agent.agent": RECORDED})
        for i, reason in enumerate(MISS_REASONS):
            if f.miss_calls[i]:
                metrics.miss(model, reason, f.miss_tokens[i], f.miss_calls[i], **{"tui_agent.agent": RECORDED})
        if f.coverage_wanted:
            metrics.coverage.record(f.coverage_present / f.coverage_wanted,
                                    metrics.common(model, **{"tui_agent.agent": RECORDED}))
        for s in f.strategies:
            agent = {"tui_agent.agent": s.name}
            if f.unit_usd is not None:
                for cause, units in (("conversation", s.conversation), ("pings", s.pings_units),
                                     ("idle_rewrites", s.idle_rewrites), ("summaries", s.summaries)):
                    metrics.add_cost(model, cause, units * f.unit_usd, **agent)
                if s.spared_units:
                    metrics.spared.add(s.spared_units * f.unit_usd, metrics.common(model, **agent))
            if s.pings:
                metrics.pings.add(s.pings, metrics.common(model, **agent))
            if s.events:
                metrics.events.add(s.events, metrics.common(model, **agent, **{"tui_agent.compaction.kind": "replayed"}))
            if s.coverage_wanted:
                metrics.coverage.record(s.coverage_present / s.coverage_wanted, metrics.common(model, **agent))
            if s.missed_idle_tokens:
                metrics.miss(model, "ttl_expired", s.missed_idle_tokens, s.expired, **agent)
            if s.missed_compaction_tokens:
                metrics.miss(model, "compaction", s.missed_compaction_tokens, s.events, **agent)
    metrics.close()
    return True
