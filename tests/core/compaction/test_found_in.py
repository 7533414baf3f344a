"""`found_in` answers as `needle in text` does for each needle, and the loss report asks the text once
for all the prompts and paths that left the request, not once each (a resumed long session's first
event lost 100,000 prompts and searched a long request for each)."""

from __future__ import annotations

import random

from tui_agent.core.compaction.names.found_in import found_in
from tui_agent.core.compaction.recap import MessageFacts, missing_from


def test_found_in_is_in_for_every_needle():
    rng = random.Random(3)
    for _ in range(200):
        text = "".join(rng.choice("abc é\n") for _ in range(rng.randrange(0, 60)))
        needles = ["".join(rng.choice("abc é\n") for _ in range(rng.randrange(0, 5))) for _ in range(rng.randrange(0, 30))]
        assert found_in(text, needles) == {n for n in needles if n in text}, (text, needles)


class Searched(str):
    """A request text that counts the `in` searches made of it."""

    searches = 0

    def __contains__(self, needle):
        Searched.searches += 1
        return super().__contains__(needle)


def test_the_loss_report_searches_the_request_once_for_every_prompt_and_path():
    facts = [MessageFacts(prompt=f"prompt {i}", paths=((f"src/f{i}.py", "read"),)) for i in range(2_000)]
    text = Searched("recap: prompt 7 and src/f9.py and prompt 1999 are still here")
    prompts, paths = missing_from(lambda: text, facts, range(2_000), 500, None)
    assert Searched.searches == 0
    assert len(prompts) == 1_995 and "prompt 7" not in prompts and "prompt 1999" not in prompts
    assert not {"prompt 1", "prompt 19", "prompt 199"} & set(prompts)  # (in the text: prefixes of "prompt 1999")
    assert len(paths) == 1_999 and "src/f9.py" not in paths


def test_at_risk_asks_the_request_once_for_every_entity_and_lists_what_one_search_each_listed():
    from tui_agent.core.compaction.at_risk import at_risk
    from tui_agent.core.messages import user_text

    history = [user_text(" ".join(f"src/mod{i}_{j}.py" for j in range(30))) for i in range(40)]
    request = Searched("still here: src/mod39_3.py src/mod38_0.py")
    Searched.searches = 0
    risk = at_risk(history, range(40), request, limit=60)
    assert Searched.searches == 0
    expected = [e for i in range(39, -1, -1) for e in sorted(f"src/mod{i}_{j}.py" for j in range(30))
                if e not in ("src/mod39_3.py", "src/mod38_0.py")][:60]
    assert list(risk) == expected
