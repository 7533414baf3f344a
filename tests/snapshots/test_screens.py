"""SVG snapshots of the main states. Deterministic: scripted/demo replies (no clock), fixed files and
mtimes, a fixed session label, durations hidden, no blinking cursor, animations off.

Review a failure in snapshot_report.html, then `pytest tests/snapshots --snapshot-update`.
"""

from __future__ import annotations


import pytest
from textual.pilot import Pilot

from tests.shared import SYNTHETIC_LONG
from tests.waiting import wait_until
from tui_agent.core.compaction import CompactOptions
from tui_agent.core.providers.scripted import text_reply, tool_reply
from tui_agent.ui.screens.permission import PermissionScreen
from tui_agent.ui.widgets.history_rows import HistoryRows
from tests.ui.support import acting_tools, demo_session, fixed_repo, make_app, make_repo, scripted_session, send

SMALL = CompactOptions(max_messages=16)
PROMPTS = ("what does the handler do?", "explain the models", "where are the helpers?")


def test_start_screen(snap_compare, tmp_path) -> None:
    """Header (model · workspace · session), a welcome line, an empty panel, the prompt and footer."""
    app = make_app(demo_session(make_repo(tmp_path)))
    assert snap_compare(app, terminal_size=(120, 36))


@pytest.mark.parametrize("theme", ["agent-dark", "agent-light", "agent-high-contrast"])
def test_demo_session_with_compaction(snap_compare, tmp_path, theme: str) -> None:
    """Three demo prompts: old rows greyed (dropped), two ✂ cut Read results, the compact.run line,
    the sparkline of per-call tokens and the next-call meter, in each bundled theme."""
    app = make_app(demo_session(make_repo(tmp_path), compact=SMALL))
    app.theme = theme

    async def run_before(pilot: Pilot) -> None:
        for prompt in PROMPTS:
            await send(pilot, prompt)

    assert snap_compare(app, terminal_size=(140, 44), run_before=run_before)


def test_selected_row(snap_compare, tmp_path) -> None:
    """A cut tool_result opened from the panel: the full result left, the ✂ outbound copy right."""
    app = make_app(demo_session(make_repo(tmp_path), compact=SMALL))

    async def run_before(pilot: Pilot) -> None:
        for prompt in PROMPTS[:2]:
            await send(pilot, prompt)
        await pilot.wait_for_scheduled_animations()  # the chat has scrolled to its end (its scrollbar shows)
        rows = pilot.app.screen.query_one(HistoryRows)
        rows.enter_on_purpose()  # F4: the steering mode
        rows.cursor = next(iter(rows.view.truncated))
        await pilot.pause()  # the rows scroll to the cursor after a refresh
        await pilot.wait_for_scheduled_animations()
        await pilot.press("enter")
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(140, 44), run_before=run_before)


MODAL_CALLS = {
    "write": [tool_reply("Write", {"file_path": "docs/NOTES.md", "content": (
        "# Notes\n\n- handlers live in src/app.py\n- models live in src/models.py\n"
        "+ not a diff line: a new file shows its content plainly\n")}, "toolu_write", "I will write the notes.")],
    "edit": [tool_reply("Read", {"file_path": "src/app.py", "limit": 12}, "toolu_read"),
             tool_reply("Edit", {"file_path": "src/app.py",
                                 "old_string": "def handler_1(request):\n    return {'status': 1}",
                                 "new_string": "def handler_1(request):\n    # 200 is what clients expect\n"
                                               "    return {'status': 200}"},
                        "toolu_edit", "I will fix the status code.")],
    "bash": [tool_reply("Bash", {"command": "python -m pytest -q tests/test_app.py -k handler",
                                 "description": "Run the handler tests", "timeout": 60000},
                        "toolu_bash", "Let me run the tests.")],
}


@pytest.mark.parametrize("tool", ["write", "edit", "bash"])
def test_permission_modal(snap_compare, tool: str) -> None:
    """The real tool waiting for consent: Write's new content, Edit's coloured diff (after a Read),
    Bash's command with where and how long it runs; the three keyboard choices and the session rule.
    The workspace sits at a fixed path, since Bash's preview names it."""
    app = make_app(scripted_session(fixed_repo(), [*MODAL_CALLS[tool], text_reply("Done.")],
                                    extra_tools=acting_tools()))

    async def run_before(pilot: Pilot) -> None:
        await pilot.pause()  # first layout before any key (stack-check §1 pitfall 3)
        prompt = pilot.app.screen.query_one("PromptArea")
        prompt.load_text(f"please {tool} it")
        prompt.focus()
        await pilot.press("enter")
        await wait_until(lambda: isinstance(pilot.app.screen, PermissionScreen), what="the permission modal")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


def test_narrow_layout(snap_compare, tmp_path) -> None:
    """80 columns: the panel is folded away; the footer offers F2 for it."""
    app = make_app(scripted_session(make_repo(tmp_path), [text_reply("The handler returns a **status**.")]))

    async def run_before(pilot: Pilot) -> None:
        await send(pilot, "what does the handler do?")

    assert snap_compare(app, terminal_size=(80, 30), run_before=run_before)


def test_narrow_layout_panel_open(snap_compare, tmp_path) -> None:
    """80 columns after F2: the panel takes the whole width."""
    app = make_app(demo_session(make_repo(tmp_path), compact=SMALL))

    async def run_before(pilot: Pilot) -> None:
        await send(pilot, PROMPTS[0])
        await pilot.press("f2")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 30), run_before=run_before)


def test_panel_with_usage_and_exact_count(snap_compare, tmp_path) -> None:
    """A provider that reports usage and counts tokens: session cost in the panel title and header,
    the exact count beside the calibrated ≈ estimate (after /context), the last call's cache split."""
    from tests.ui.test_panel_usage import MODEL, USAGE, CountingProvider

    provider = CountingProvider(model=MODEL, usage=USAGE, reports_usage=True)
    app = make_app(scripted_session(make_repo(tmp_path), [text_reply("Hello."), text_reply("Sure.")],
                                    provider=provider))

    async def run_before(pilot: Pilot) -> None:
        for line in ("hello", "tell me more", "/context"):
            await send(pilot, line)

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


def test_replay_mode(snap_compare) -> None:
    """`tui-agent replay` on the long synthetic Claude Code log kept under tests/ (the same picture on every
    machine, with or without ../shared), at call 30, the first after the agent's own compaction: the card
    (recorded real tokens, our estimate of them, what we would send, the agent's compactions, the cost
    table), the panel drawing our plan, the disabled prompt with its hint."""
    from tui_agent.core.recordings.replay import open_replay
    from tui_agent.ui.replay_app import ReplayApp

    app = ReplayApp(open_replay(SYNTHETIC_LONG), start=29, workspace=fixed_repo(), session_label="test",
                    show_durations=False)
    app.animation_level = "none"
    assert snap_compare(app, terminal_size=(140, 40))
