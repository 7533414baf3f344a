"""Approve before compacting, in the engine (issue 30 item 4): the loop asks the face's callback before a call
that would make an event; postpone sends that call uncompacted (unless it would not fit the window); `-p`
(headless) never asks, whatever the switch says; COMPACT_APPROVE and the flag turn the mode on."""

from __future__ import annotations

from pathlib import Path

from tests.core.agent.test_call_plan import play, small_session
from tui_agent.core import events as ev
from tui_agent.core.agent.approval import env_approve
from tui_agent.core.agent.door import SessionOptions, open_session


def asking(session, answer: str) -> list[int]:
    asked: list[int] = []

    async def ask(preview):
        asked.append(preview.call)
        return answer

    session.ask_approval = ask
    session.approve_compaction = True
    return asked


def majors(session) -> list[ev.CompactionReported]:
    seen: list[ev.CompactionReported] = []
    session.listeners.append(lambda e: seen.append(e) if isinstance(e, ev.CompactionReported)
                             and e.plan.event is not None and e.plan.event.major else None)
    return seen


async def test_the_loop_asks_before_an_event_and_approve_runs_it(tmp_path: Path) -> None:
    session = small_session(tmp_path)
    asked, seen = asking(session, "approve"), majors(session)
    await play(session, range(6))
    assert asked and [r.call for r in seen] == asked, "every major event was asked about first, and ran"


async def test_postpone_sends_the_call_without_its_event(tmp_path: Path) -> None:
    session = small_session(tmp_path)
    asked, seen = asking(session, "postpone"), majors(session)
    said: list[str] = []
    session.listeners.append(lambda e: said.append(e.text) if isinstance(e, ev.Notice) else None)
    await play(session, range(6))
    postponed = [n for n in said if n.startswith("Compaction postponed for call #")]
    must = {int(n.split("#")[1].split(" ")[0]) for n in said if n.startswith("Call #") and "must compact" in n}
    assert asked and postponed, "events were due and postponed"
    assert {r.call for r in seen} == must, "only a call that would not fit the window compacted, and it said so"
    assert all(r.plan.estimated_tokens <= r.plan.budget_tokens for r in seen)


async def test_headless_never_waits_for_an_approval(tmp_path: Path) -> None:
    session = small_session(tmp_path)
    session.permissions.mode = "headless"  # what -p opens
    asked, seen = asking(session, "postpone"), majors(session)
    await play(session, range(6))
    assert asked == [] and seen, "-p compacts when due and asks nobody"


def test_the_switch_comes_from_the_flag_or_the_environment(tmp_path: Path) -> None:
    assert env_approve({"COMPACT_APPROVE": "1"}) and not env_approve({}) and not env_approve({"COMPACT_APPROVE": "0"})
    for wanted, env, on in ((None, {"COMPACT_APPROVE": "1"}, True), (None, {}, False), (True, {}, True)):
        opened = open_session(SessionOptions(workspace=tmp_path, model="demo", headless=True, env=env,
                                             approve_compaction=wanted))
        assert opened.session.approve_compaction is on
        assert opened.session.loop_config().approve is None, "headless: nobody is asked"


def test_serve_passes_the_switch_to_each_tab(tmp_path: Path, monkeypatch) -> None:
    import shlex

    from tui_agent.faces.arguments import build_parser
    from tui_agent.faces.cli import main
    from tui_agent.web.launch import app_command

    seen: dict = {}
    monkeypatch.setattr("tui_agent.web.launch.serve", lambda workspace, **kw: seen.update(kw) or 0)
    assert main(["--approve-compaction", "serve", "-C", str(tmp_path)]) == 0
    assert seen["session_flags"] == {"approve_compaction": True}
    argv = shlex.split(app_command(tmp_path, seen["session_flags"]))
    assert argv[-1] == "--approve-compaction" and "True" not in argv
    assert build_parser().parse_args(argv[5:]).approve_compaction is True  # the tab's own parse takes it
