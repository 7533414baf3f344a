"""The machine form of a replay (`tui-agent replay FILE --json`): one step, the report, the whole.

Stable keys; sizes in tokens, costs in uncached-input-token units. Kept apart from `core.replay` (how the
steps are made) so that module stays about making steps, and this one about how they are written down.
"""

from __future__ import annotations

from tui_agent.core.recordings.economics_report import SessionReport
from tui_agent.core.recordings.replay import Replay, ReplayStep


def step_json(replay: Replay, step: ReplayStep) -> dict:
    """The machine form of one step (stable keys; sizes in tokens, costs in uncached-input-token units)."""
    plan = step.plan
    reason = step.miss_reason
    return {
        "call": step.number,
        "history_len": step.history_len,
        "recorded": {"start": step.recorded_start, "real_tokens": step.real_tokens, "usage": dict(step.usage),
                     "estimate": round(step.estimate.ours, 1), "estimate_error": round(step.estimate.error, 6),
                     "cache_miss_reason": reason[0] if reason else None,
                     "cache_missed_tokens": reason[1] if reason else None},
        "ours": {"tokens": round(step.ours_tokens, 1), "estimated_tokens": plan.estimated_tokens,
                 "sent": plan.sent_count, "dropped": plan.dropped_count, "cut": sum(len(v) for v in plan.cuts.values()),
                 "masked": sum(len(v) for v in plan.masks.values()), "event": step.event_line,
                 "digest": plan.digest},
        "costs": {name: {"tokens": round(c.tokens, 1), "cached": round(c.cached, 1), "cost": round(c.cost, 3),
                         "total_cost": round(c.total_cost, 3)} for name, c in step.costs.items()},
        "agent_compactions": [{"index": c.index, "kind": c.kind} for c in step.agent_compactions],
        "idle": step.idle,
    }


def report_json(report: SessionReport) -> dict:
    """`SessionReport` as JSON (every number of the table; costs in uncached-input-token units)."""
    return {
        "name": report.name, "calls": report.calls, "messages": report.messages,
        "token_model": {"baseline": report.model.baseline, "ratio": report.model.ratio},
        "ruler_error": None if report.ruler is None else {
            "median": report.ruler.median, "p90": report.ruler.p90, "median_all": report.ruler.median_all,
            "p90_all": report.ruler.p90_all, "calls": report.ruler.calls},
        "strategies": {name: {
            "calls": r.calls, "over_window": r.over_window, "peak": r.peak, "tokens": r.tokens, "cost": r.cost,
            "cached": r.cached, "price": r.price, "average": r.average, "hit_share": r.hit_share,
            "newest_intact": r.newest_intact, "prompts_missing": r.prompts_missing, "paths_missing": r.paths_missing,
            "invalid": r.invalid, "events": r.events, "expired": r.expired, "pings": r.pings,
            "tail_pings": r.tail[0], "tail_cost": r.tail_cost, "idle_choices": dict(r.idle_choices),
            "coverage": r.coverage.value, "coverage_pooled": r.coverage.pooled, "coverage_calls": r.coverage.calls}
            for name, r in report.results.items()},
        "estimate_error": {label: {"compared": e.compared, "median": e.median, "p90": e.p90,
                                   "after_event": e.after_event,
                                   "after_event_calls": e.after_event_calls, "after_events": list(e.after_events)}
                           for label, e in (("ours", report.estimate), ("v1", report.estimate_v1))},
    }


def replay_json(replay: Replay) -> dict:
    """Everything `tui-agent replay FILE --json` prints: the report and every step."""
    steps = replay.run_all()
    return {
        "file": str(replay.path), "kind": replay.kind, "model": replay.model,
        "usd_per_unit": replay.unit_price_usd(),
        "report": report_json(replay.report()),
        "agent_compactions": [{"index": c.index, "call": c.call, "kind": c.kind, "text": c.text}
                              for c in replay.agent_compactions],
        "steps": [step_json(replay, s) for s in steps],
    }
