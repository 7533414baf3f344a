"""Replay and watch as OpenTelemetry spans: one `CallSpan` per recorded call with what our compactor would
have sent at it (the figures of `replay --json`). The span type and its export are the ground floor's
`core.agent.telemetry`; turning a replayed step into one is recorded-session analysis, so it lives here."""

from __future__ import annotations

from typing import Mapping

from tui_agent.core.recordings.replay import OURS, Replay, ReplayStep
from tui_agent.core.agent.telemetry import CallSpan, CallTracer, tracer_from_env


def replay_span(replay: Replay, step: ReplayStep, source: str = "replay") -> CallSpan:
    """A recorded call and what our compactor would have sent at it (the figures of `replay --json`)."""
    usage = step.usage
    stamp = replay.recorded.times[step.number - 1] if step.number - 1 < len(replay.recorded.times) else None
    start = int(stamp * 1e9) if stamp is not None else None
    ours = step.costs.get(OURS)
    return CallSpan(source, replay.path.name, step.number, replay.model, step.real_tokens,
                    usage.get("output_tokens"), usage.get("cache_read_input_tokens"),
                    usage.get("cache_creation_input_tokens"), step.plan, round(step.ours_tokens, 1),
                    round(ours.cached, 1) if ours is not None else None, step.coverage, start, start)


class StepTracer:
    """What `replay` and `watch` call once per call: `tracer(replay, step)`; `close()` at the end."""

    def __init__(self, tracer: CallTracer, source: str) -> None:
        self.tracer, self.source = tracer, source

    def __call__(self, replay: Replay, step: ReplayStep) -> None:
        self.tracer.record(replay_span(replay, step, self.source))

    def close(self) -> None:
        self.tracer.close()


def step_tracer(source: str, environ: Mapping[str, str] | None = None) -> StepTracer | None:
    """A per-call tracer for `source` ("replay" | "watch") when an endpoint is configured, else None
    (nothing imported). Raises RuntimeError (one line) when the extra is not installed."""
    tracer = tracer_from_env(environ)
    return StepTracer(tracer, source) if tracer is not None else None
