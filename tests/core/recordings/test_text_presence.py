"""`TextPresence.missing` answers exactly `s not in request_text(messages)`, searching only the tail a
request does not share with the previous one: on every request each replay strategy sends for a real
Claude Code log, with the prompts and paths the memory check asks for and strings cut across the edge of
the shared part (where a search that skipped too much would miss them)."""

from __future__ import annotations

import random

from tests.shared import SMALL_LOG
from tui_agent.core.compaction.memo import MessageMemo
from tui_agent.core.compaction.recap import request_text
from tui_agent.core.recordings.economics import strategy_runs
from tui_agent.core.recordings.recorded import load_recorded
from tui_agent.core.messages import user_text
from tui_agent.core.recordings.replay_checks import common_prefix, required_memory
from tui_agent.core.recordings.text_presence import TextPresence

LOG = SMALL_LOG  # the small real log, else the long synthetic one (tests/shared.py)


def test_missing_is_not_in_the_joined_text_on_every_replayed_request():
    recorded = load_recorded(LOG)
    runs = strategy_runs(recorded, ("none", "seed-v1", "v2"), check_memory=False)
    required = required_memory(recorded)
    memo = MessageMemo()
    rng = random.Random(20)
    presence = {name: TextPresence(memo.text) for name in runs}
    previous: dict[str, list] = {name: [] for name in runs}
    compared = absent = 0
    for k in range(len(recorded.calls)):
        for name, run in runs.items():
            messages = run.step().messages
            shared = common_prefix(previous[name], messages)
            text = request_text(messages, memo.text)
            prompts, paths = required[k]
            edge = len(request_text(messages[:shared], memo.text))
            around = [text[max(0, edge - n): edge + m] for n, m in ((5, 5), (1, 12), (30, 0), (0, 30))]
            strings = [*(piece for prompt in prompts for piece in prompt), *paths, *(s for s in around if s), "never in any request \x00"]
            if k % 3 == 0:
                strings += [text[i:i + 20] for i in (rng.randrange(max(len(text), 1)) for _ in range(3))]
            missing = presence[name].missing(messages, shared, strings)
            assert missing == [s not in text for s in strings], (name, k + 1)
            compared += len(strings)
            absent += sum(missing)
            previous[name] = messages
    assert compared > 1000 and absent > 100


def test_a_string_found_past_the_shared_part_is_searched_again():
    presence = TextPresence(MessageMemo().text)
    a, b, c = user_text("alpha beta"), user_text("gamma"), user_text("delta")
    assert presence.missing([a, b], 0, ["gamma", "beta", "zeta"]) == [False, False, True]
    assert presence.missing([a, c], 1, ["gamma", "beta", "zeta", "delta"]) == [True, False, True, False]
    assert presence.missing([a, c, user_text("zeta")], 2, ["zeta", "a\ndel"]) == [False, False]
