"""The meter's budget line and its "passed the mark, no event" warning (issue 30 item 5 of the meter): the
budget with where it came from, the window apart, and, when a request is over the high mark and no event
happened, why (an undone event holds, nothing older could leave)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.core.agent.test_call_plan import play, small_session
from tests.core.agent.test_undo_compaction import medium_session
from tui_agent.core.agent.compaction_control import undo_compaction
from tui_agent.core.agent.budget import BudgetLedger
from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.compaction.compactor import Compactor
from tui_agent.core.compaction.working_budget import set_budget


def figures(session) -> object:
    ledger = BudgetLedger()
    ledger.configure(session.model, session.provider.context_window, session.provider.max_output_tokens)
    base = sum(session.baseline_tokens())
    return ledger.preview(session.plan_call().result, base)


async def test_the_budget_line_names_the_budget_its_origin_and_the_window(tmp_path: Path) -> None:
    session = small_session(tmp_path)
    await play(session, range(1))
    shown = figures(session)
    assert shown.budget_line == "budget 11.0k (the window) · window 12.0k", shown.budget_line
    policy = set_budget(session.compactor.policy, "6k", "flag --budget")
    session.compactor.policy = policy
    assert figures(session).budget_line == "budget 6.0k (flag --budget) · window 12.0k"


def test_a_default_budget_says_it_is_the_models_default() -> None:
    compactor = Compactor(CompactPolicy(context_window=1_000_000, max_output_tokens=32_000))
    plan = compactor.compact([{"role": "user", "content": "hi"}], 1).plan
    assert plan.budget_source == "default for this model" and 0 < plan.budget_room < 968_000


def test_a_learned_window_says_so() -> None:
    compactor = Compactor(CompactPolicy(context_window=200_000, max_output_tokens=32_000, budget_tokens=500_000))
    history = [{"role": "user", "content": "hi"}]
    compactor.compact(history, 1)
    compactor.too_long(history, None, 100_000)
    plan = compactor.compact(history, 2).plan
    assert plan.budget_source == "the window, learned from a too-long answer", plan.budget_source


async def test_over_the_mark_with_no_event_the_warning_says_why(tmp_path: Path) -> None:
    session = medium_session(tmp_path)
    await play(session, range(2))
    assert figures(session).mark_warning == ""  # under the mark after the event
    undo_compaction(session)
    shown = figures(session)
    assert shown.shown_total > shown.high
    assert shown.mark_warning.startswith(f"⚠ passed the {shown.high / 1000:.1f}k mark (≈"), shown.mark_warning
    assert "no event: an undone event holds until the request passes ≈" in shown.mark_warning


def test_nothing_older_could_leave_is_said() -> None:
    policy = replace(CompactPolicy(context_window=12_000, max_output_tokens=1_000), drop=False, mask=False)
    compactor = Compactor(policy)
    history = [{"role": "user", "content": "x " * 20_000}]
    plan = compactor.compact(history, 1).plan
    assert plan.event is None or not plan.event.major
    assert plan.quiet_reason.startswith("nothing older could leave"), plan.quiet_reason
