"""Claude Code's idle compaction as a peer (`cc-idle`): a session of 200k tokens or more that waited 54
minutes is summarised then, before its 1-hour cache expires, so the summary call reads the prefix warm."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from tests.replay.jsonl import Log, read, text
from tui_agent.core.models import ONE_HOUR_CACHE
from tui_agent.core.recordings.economics import replay
from tui_agent.core.recordings.strategy_table import default_policy
from tui_agent.core.recordings.recorded import load_recorded

START = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)


def stamp(seconds: float) -> str:
    return (START + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def big_session(path, wait: float):
    """Reads that bring the request past 200k tokens, then a wait of `wait` seconds before the next prompt."""
    log = Log().user("Read the whole tree.", timestamp=stamp(0))
    at, size = 10.0, 30_000
    for n in range(12):
        log.assistant([text("Next."), read(f"t{n}", f"src/f{n}.py")], input_tokens=size, timestamp=stamp(at))
        log.result(f"t{n}", ("line of code that is long enough to count " * 400)[:16_000 * 4], timestamp=stamp(at + 1))
        at, size = at + 5, size + 16_000
    log.assistant([text("Done reading.")], input_tokens=size, timestamp=stamp(at))
    log.user("Now summarise the parser.", timestamp=stamp(at + wait))
    log.assistant([text("The parser parses.")], input_tokens=size + 50, timestamp=stamp(at + wait + 2))
    return log.write(path)


def test_a_long_wait_after_a_big_request_is_spent_summarising(tmp_path):
    """After 57 minutes the summary is made (one event more than cc-77); after two hours it is what saves
    the rewrite: at the 54th minute the summary reads the prefix warm, where cc-77's next call writes it all
    again at the 1-hour write price. Ten minutes: nothing happens."""
    policy = default_policy(1_000_000)
    hour = load_recorded(big_session(tmp_path / "h.jsonl", 3_400))
    assert max(hour.real) >= 200_000
    idle = replay(hour, ["cc-77", "cc-idle"], policy, price=ONE_HOUR_CACHE, check_memory=False)
    assert idle["cc-idle"].events == idle["cc-77"].events + 1 and idle["cc-idle"].summary_calls == 1
    two = replay(load_recorded(big_session(tmp_path / "2h.jsonl", 7_200)), ["cc-77", "cc-idle"], policy,
                 price=ONE_HOUR_CACHE, check_memory=False)
    assert two["cc-idle"].cost < two["cc-77"].cost * 0.9
    short = load_recorded(big_session(tmp_path / "s.jsonl", 600))
    assert replay(short, ["cc-idle"], policy, price=ONE_HOUR_CACHE, check_memory=False)["cc-idle"].events == 0
