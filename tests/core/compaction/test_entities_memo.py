"""The entities of a message are a fact of it, made once: the mask ranking and the at-risk list of each
event read them from `Facts` (shared with a preview's copy), and say the same as reading the messages."""

from __future__ import annotations

from tui_agent.core.compaction.at_risk import at_risk
from tui_agent.core.compaction.facts import Facts
from tui_agent.core.compaction.ranking import mask_signals
from tui_agent.core.messages import tool_result_block, user_text


def history() -> list[dict]:
    out = [user_text("fix parse_config in src/config.py")]
    for k, path in enumerate(["src/config.py", "src/loader.py", "src/config.py"]):
        use = {"type": "tool_use", "id": f"t{k}", "name": "Read", "input": {"file_path": path}}
        out += [{"role": "assistant", "content": [use]},
                {"role": "user", "content": [tool_result_block(f"t{k}", f"def load_{k}(): pass")]}]
    out.append({"role": "assistant", "content": [{"type": "thinking", "thinking": "maybe load_1", "signature": "s"},
                                                  {"type": "text", "text": "load_0 calls read_file"}]})
    return out


def test_the_ranking_and_the_at_risk_list_read_the_same_entities_from_the_facts() -> None:
    h = history()
    facts = Facts()
    facts.sync(h)
    memo = lambda i: facts.entities_of(h, i)  # noqa: E731
    assert mask_signals(h, 0, memo) == mask_signals(h, 0)
    superseded, mentioned = mask_signals(h, 0, memo)
    assert superseded == {2}  # the first read of src/config.py was read again since
    assert mentioned[2] and not mentioned[4]  # load_0 is mentioned later; load_1 only in thinking (not sent)
    assert at_risk(h, [2, 4], "", entities_of=memo) == at_risk(h, [2, 4], "")
    assert facts.copy().held is facts.held and 2 in facts.held


def test_the_ranking_asked_about_some_results_answers_them_alike_and_reads_no_other_result() -> None:
    h = history()
    facts = Facts()
    facts.sync(h)
    asked: list[int] = []

    def memo(i: int) -> frozenset[str]:
        asked.append(i)
        return facts.entities_of(h, i)

    superseded, mentioned = mask_signals(h, 0, memo, wanted={4})
    full_superseded, full = mask_signals(h, 0)
    assert superseded == full_superseded and mentioned == {4: full[4]}
    assert 2 not in asked and 6 not in asked  # the results not asked about: their entities are not made
