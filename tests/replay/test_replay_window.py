"""`replay` of one of our own journals (issue 16): `--context-window` replays at the recorded model's window
(a small demo session replayed at 200k made no drop although the journal recorded drops), and `--report`
measures the estimator only against usage a provider reported (a demo journal's sizes are our own
estimates: comparing them with our estimator measured nothing)."""

from __future__ import annotations

from pathlib import Path

from tests.journal.helpers import run, session_on
from tests.replay.test_replay_cli import run as run_cli
from tui_agent.core.recordings.strategy_table import default_policy
from tui_agent.core.recordings.economics_report import session_report
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.writer import start_journal
from tui_agent.core.providers.base import UsageInfo
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply

WINDOW = 8_000


async def small_window_journal(tmp_path: Path, usage: UsageInfo | None, turns: int = 6, said: str = "") -> Path:
    workspace = tmp_path / "repo"
    workspace.mkdir(parents=True)
    (workspace / "big.txt").write_text("".join(f"line {n}: " + "w" * 70 + "\n" for n in range(150)))
    replies = []
    for n in range(turns):
        replies += [tool_reply("Read", {"file_path": "big.txt"}, f"toolu_{n}", "Reading."),
                    text_reply(f"Answer {n}. {said}")]
    provider = ScriptedProvider(replies=replies, usage=usage)
    provider.context_window, provider.max_output_tokens = WINDOW, 1_000
    session = session_on(workspace, provider)
    journal = start_journal(session)
    for n in range(turns):
        await run(session, f"question {n}")
    assert any(call.event for call in read_journal(journal.path).calls)  # the session itself compacted
    return journal.path


async def test_context_window_replays_at_the_recorded_window(tmp_path: Path, capsys) -> None:
    # long answers over a dozen turns: what stays after cut on read outgrows the window, so a replay at it
    # must drop (six short turns compacted only through the session's own defect of dropping the prompt
    # in progress, issue 18, which the fixed usage of 1,500 per call then made the replay repeat)
    path = await small_window_journal(tmp_path, UsageInfo(1_500, 10, 0, 0), turns=12, said="It says " * 150)
    at_default = session_report(path).results["v2"]
    at_window = session_report(path, policy=default_policy(WINDOW)).results["v2"]
    assert at_default.events == 0  # 200k: nothing to drop
    assert at_window.events > 0 and at_window.peak < at_default.peak
    code, out, err = run_cli(["replay", str(path), "--report", "--context-window", str(WINDOW)], capsys)
    assert code == 0, err
    v2 = next(line for line in out.splitlines() if line.startswith("v2 "))
    assert int(v2.split()[-3]) == at_window.events  # the events column


def test_a_context_window_below_any_request_is_one_clear_error(tmp_path: Path, capsys) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("{}\n")
    code, out, err = run_cli(["replay", str(path), "--report", "--context-window", "10"], capsys)
    assert code == 2 and out == "" and err.strip() == "error: --context-window must be at least 1000 tokens (got 10)"


async def test_report_compares_the_estimator_only_with_recorded_usage(tmp_path: Path, capsys) -> None:
    path = await small_window_journal(tmp_path, None)  # a provider that reports no usage (the demo model)
    report = session_report(path)
    assert report.estimate.compared == 0 and report.estimate.median == 0.0
    code, out, err = run_cli(["replay", str(path), "--report"], capsys)
    assert code == 0, err
    assert "estimate error: no recorded usage to compare with" in out
    assert "median" not in out.split("estimate error")[1]
    measured = session_report(await small_window_journal(tmp_path / "m", UsageInfo(1_500, 10, 0, 0)))
    assert measured.estimate.compared == measured.calls - 1 == 11  # each call after the first, vs its usage


def test_replay_has_one_ruler_the_meter_the_card_and_the_costs_agree() -> None:
    """The call event a face's ledger gets is measured in the replay's unit (the fitted token model): the
    meter's total is the step's `ours_tokens` (what the cost table prices), and its lines add up to it.
    (Was: "≈13,451 tok ours" in the card beside a meter of the compactor's own estimate, whose lines did
    not add up to its total.)"""
    from tests.shared import SYNTHETIC_TRANSCRIPT
    from tui_agent.core.agent.budget import BudgetLedger
    from tui_agent.core.recordings.replay import open_replay

    replay = open_replay(SYNTHETIC_TRANSCRIPT)
    ledger = BudgetLedger()
    ledger.configure(replay.model, replay.policy.context_window, replay.policy.max_output_tokens)
    for step in replay.run_all():
        event = replay.reported(step)
        ledger.feed(event)
        figures = ledger.current
        assert figures.total == round(step.ours_tokens) == round(step.costs["v2"].tokens)
        assert figures.base + figures.messages == figures.total
        assert figures.cached + figures.new == figures.total
        assert event.plan is not step.plan and replay.steps[step.number - 1].plan is step.plan  # a copy
