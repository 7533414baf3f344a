"""Why the cache missed, as the API says it: Claude Code (2.1.233+) logs the response's
`diagnostics.cache_miss_reason`; replay and watch read it and show it beside the call."""

from __future__ import annotations

import json

from tests.replay.jsonl import Log, text
from tui_agent.core.recordings.recorded import load_recorded
from tui_agent.core.recordings.replay import open_replay
from tui_agent.core.recordings.replay_json import step_json
from tui_agent.core.recordings.transcript_records import miss_reason


def missed_log(path):
    log = Log().user("Start.")
    log.assistant([text("One.")], input_tokens=20_000)
    log.user("Go on.")
    log.assistant([text("Two.")], input_tokens=20_500)
    # the second reply's response said why its prefix was written again
    record = json.loads(log.lines[-1])
    record["message"]["diagnostics"] = {"cache_miss_reason": {"type": "tools_changed",
                                                               "cache_missed_input_tokens": 19_800}}
    log.lines[-1] = json.dumps(record)
    log.user("Done?")
    log.assistant([text("Three.")], input_tokens=21_000)
    return log.write(path)


def test_the_logged_reason_reaches_the_recorded_calls_and_the_json(tmp_path):
    recorded = load_recorded(missed_log(tmp_path / "m.jsonl"))
    assert [recorded.miss_reason(k) for k in range(len(recorded.calls))] == [None, ("tools_changed", 19_800), None]
    replay = open_replay(tmp_path / "m.jsonl")
    step = replay.step(1)
    out = step_json(replay, step)["recorded"]
    assert out["cache_miss_reason"] == "tools_changed" and out["cache_missed_tokens"] == 19_800


def test_a_hostile_reason_is_bounded_or_ignored():
    assert miss_reason({"diagnostics": {"cache_miss_reason": {"type": "a\x1b[31m" + "x" * 500}}}) == ("a31m" + "x" * 54, None)
    assert miss_reason({"diagnostics": {"cache_miss_reason": {"type": 7}}}) is None
    assert miss_reason({"diagnostics": "no"}) is None
    assert miss_reason({"diagnostics": {"cache_miss_reason": {"type": "x", "cache_missed_input_tokens": 10**40}}}) == ("x", None)


def test_the_watch_card_says_it(tmp_path):
    from tui_agent.core.recordings.call_figures import FiguresRun
    from tui_agent.ui.widgets.watch_card import watch_content

    replay = open_replay(missed_log(tmp_path / "m.jsonl"))
    run = FiguresRun()
    figures = [run.figures(replay, replay.step(k)) for k in range(replay.calls)]
    assert figures[1].cache_miss_reason == "tools_changed" and figures[1].json()["cache_missed_tokens"] == 19_800
    assert "the API says the cache missed: tools_changed" in watch_content(figures[1]).plain
    assert "cache missed" not in watch_content(figures[0]).plain
