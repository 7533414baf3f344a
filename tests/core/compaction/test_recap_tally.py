"""A recap's span is summed once: the next, longer span of the same facts adds only its new messages
(`compaction/names/recap_tally.py`), and the recap it gives is byte for byte the one a fresh sum gives."""

from __future__ import annotations

import random

from tui_agent.core.compaction.names import recap_tally
from tui_agent.core.compaction.recap import MessageFacts, build_recap


class Counted(list):
    """Facts that count how many are read."""

    reads = 0

    def __getitem__(self, i):
        Counted.reads += 1
        return super().__getitem__(i)


def facts(n: int, rng: random.Random) -> Counted:
    out = Counted()
    for i in range(n):
        kind = rng.randrange(4)
        out.append(MessageFacts(
            prompt=f"prompt {i}" if kind == 0 else None,
            paths=((f"src/f{rng.randrange(50)}.py", rng.choice(("read", "edited", "written", "searched"))),) if kind == 1 else (),
            commands=((f"make t{i}", f"id{i}"),) if kind == 2 else (), tools=("Read",) if kind == 1 else ("Bash",) * (kind == 2),
            failed=(f"id{i - 1}",) if kind == 3 else (), chars=10 + i))
    return out


def recap(all_facts, until: int, kept=frozenset(), start: int = 0):
    return build_recap(all_facts, until, kept, prompt_chars=2_000, prompt_max_chars=500, call=3, start=start)


def test_a_growing_span_reads_only_its_new_messages_and_says_what_a_fresh_sum_says():
    rng = random.Random(7)
    grown = facts(4_000, rng)
    recap_tally._kept.clear()
    for until in range(500, 4_001, 500):
        Counted.reads = 0
        made = recap(grown, until, kept=frozenset({3, 17}), start=2)
        assert Counted.reads <= 500, (until, Counted.reads)  # the 500 messages the span gained, no more
        recap_tally._kept.clear()
        assert made == recap(grown, until, kept=frozenset({3, 17}), start=2)  # a fresh sum: the same recap


def test_other_kept_messages_another_start_or_a_shorter_span_are_summed_afresh():
    rng = random.Random(8)
    grown = facts(1_000, rng)
    recap_tally._kept.clear()
    recap(grown, 600, kept=frozenset({5}))
    cases = [(800, frozenset({5, 700}), 0), (800, frozenset({6}), 0), (800, frozenset({5}), 1), (300, frozenset({5}), 0)]
    for until, kept, start in cases:
        made = recap(grown, until, kept=kept, start=start)
        saved = list(recap_tally._kept)
        recap_tally._kept.clear()
        assert made == recap(grown, until, kept=kept, start=start), (until, kept, start)
        recap_tally._kept[:] = saved
