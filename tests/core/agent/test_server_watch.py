"""Why the cache missed, from our side: the clock, our own compaction, the server's edit (no API reason)."""

from __future__ import annotations

import time
from types import SimpleNamespace

from tui_agent.core import events as ev
from tui_agent.core.agent.server_watch import CacheTrack, after_answer
from tui_agent.core.providers.base import StreamDone, UsageInfo
from tui_agent.core.providers.server_report import report_from

PROVIDER = SimpleNamespace(model="claude-sonnet-4-5", cache_ttl="5m")
DONE = StreamDone({"role": "assistant", "content": []}, "end_turn")


def _miss(plan, track, idle, read=1_000):
    told = after_answer(DONE, UsageInfo(10, 5, 200, read), plan, track, idle, PROVIDER, 4, 7)
    return [e for e in told if isinstance(e, ev.CacheMissed)]


def test_no_miss_when_the_whole_prefix_is_read():
    track = CacheTrack(cached=1_000)
    assert _miss(None, track, 0.0) == [] and track.cached == 1_200


def test_a_miss_nobody_can_explain_is_not_told():
    track = CacheTrack(cached=9_000)  # read 1,000 of 9,000, but no API reason and none of ours
    assert _miss(None, track, 0.0) == [] and track.cached == 1_200


def test_ours_alone_names_the_clock_then_our_compaction():
    cold = _miss(None, CacheTrack(cached=9_000), 400.0)[0]
    assert (cold.reason, cold.source, cold.missed) == ("ttl_expired", "ours", 8_000)
    assert "time to live ran out" in cold.line() and cold.extra_cost_usd is not None and cold.extra_cost_usd > 0
    plan = SimpleNamespace(event=object(), cached_messages=12)
    ours = _miss(plan, CacheTrack(cached=9_000), 0.0)[0]
    assert ours.reason == "our_compaction" and "rewrote from message 12" in ours.line()
    server = _miss(None, CacheTrack(cached=9_000, edited=True), 0.0)[0]
    assert server.reason == "server_edit"


def test_the_report_reads_the_sdk_shapes():
    final = {"id": "msg_1", "content": [{"type": "compaction", "content": "sum"}, {"type": "text", "text": "x"}],
             "context_management": {"applied_edits": [
                 {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 3, "cleared_input_tokens": 9000}]},
             "usage": {"iterations": [{"type": "compaction", "input_tokens": 150_000, "output_tokens": 2_000}]},
             "diagnostics": {"cache_miss_reason": {"type": "tools_changed", "cache_missed_input_tokens": 40}}}
    report = report_from(final)
    assert report.message_id == "msg_1" and report.compacted and report.compaction_summary == "sum"
    assert report.edits[0].cleared == 3 and report.edits[0].tokens == 9000
    assert report.compaction_usage is not None and report.compaction_usage.input_tokens == 150_000
    assert report.cache_miss is not None and (report.cache_miss.kind, report.cache_miss.missed_tokens) == ("tools_changed", 40)
    assert report_from({"id": None, "content": "odd", "diagnostics": "x"}).acted is False


def test_the_estimate_is_not_calibrated_on_a_request_the_server_shrank():
    from dataclasses import replace

    from tui_agent.core.agent.server_watch import answered
    from tui_agent.core.providers.server_report import AppliedEdit, ServerReport

    class Learner:
        def __init__(self):
            self.seen: list[int] = []
            self.kept: list[int] = []  # what the server kept of a request it edited or compacted

        def observe_usage(self, total: int, server_edited: bool = False) -> None:
            (self.kept if server_edited else self.seen).append(total)

    state = SimpleNamespace(calls=1, warm_since=None, sent_at=None, clock=time.monotonic, cache=CacheTrack())
    learner = Learner()
    plain = replace(DONE, usage=UsageInfo(100, 5, 0, 0))
    answered(plain, None, learner, PROVIDER, state, 1)
    edited = replace(plain, server=ServerReport("m", edits=(AppliedEdit("clear_tool_uses_20250919", 2, 9_000),)))
    answered(edited, None, learner, PROVIDER, state, 3)
    compacted = replace(plain, server=ServerReport("n", compacted=True))
    answered(compacted, None, learner, PROVIDER, state, 5)
    # after a compaction the request starts at the compaction block (issue 41): the server reads what is sent
    answered(plain, None, learner, PROVIDER, state, 7)
    assert learner.seen == [100, 100] and learner.kept == [100, 100]


def test_the_clock_is_the_providers_own_an_hour_on_the_one_hour_cache():
    hour = SimpleNamespace(model="claude-sonnet-4-5", cache_ttl="1h")
    told = after_answer(DONE, UsageInfo(10, 5, 200, 1_000), None, CacheTrack(cached=9_000), 400.0,
                        hour, 4, 7)
    assert told == []  # 400 s idle is within the hour: not the clock (and nothing else explains it)


def test_the_apis_diagnosis_alone_is_no_miss_when_usage_shows_the_prefix_was_read():
    from dataclasses import replace

    from tui_agent.core.providers.server_report import CacheMissReason, ServerReport, diagnosis_wanted

    said = replace(DONE, server=ServerReport("m", cache_miss=CacheMissReason("messages_changed", 500)))
    hit = after_answer(said, UsageInfo(10, 5, 200, 9_000), None, CacheTrack(cached=9_000), 0.0,
                       PROVIDER, 4, 7)
    assert hit == []  # the structure diverged after what was cached: nothing was missed
    unknown = after_answer(said, UsageInfo(10, 5, 200, 1_000), None, CacheTrack(), 0.0, PROVIDER, 4, 7)
    assert [(e.reason, e.missed) for e in unknown] == [("messages_changed", 500)]  # nothing known of before
    assert diagnosis_wanted({}) and not diagnosis_wanted({"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    assert not diagnosis_wanted({"CLAUDE_CODE_USE_BEDROCK": "1"}) and diagnosis_wanted({"CACHE_DIAGNOSIS": "1",
                                                                                      "CLAUDE_CODE_USE_VERTEX": "1"})
