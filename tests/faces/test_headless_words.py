"""`-p` speaks of what `-p` has: no panel, no F2, no /compact in its output, but its flags and TRACE=1."""

from __future__ import annotations

from tests.faces.test_demo_and_headless import make_repo, second_prompt

TUI_WORDS = ("F2", "context panel", "budget panel", "/compact", "press ")


def test_headless_output_never_speaks_of_the_tui(tmp_path):
    repo = make_repo(tmp_path)
    out = second_prompt(repo, ["--compact-high", "3000", "--compact-low", "1500"])
    assert out.returncode == 0, out.stderr
    assert "Older turns are no longer sent in full" in out.stderr  # the event's line is there...
    assert "--print-outbound" in out.stderr and "TRACE=1" in out.stderr  # ...pointing at what -p has
    assert "--print-outbound" in out.stdout  # the demo's answer too
    for word in TUI_WORDS:
        assert word not in out.stdout and word not in out.stderr, word


async def test_the_tui_keeps_its_own_words(tmp_path):
    from tui_agent.core import events as ev
    from tui_agent.core.agent.factory import build_session

    session, _ = build_session(make_repo(tmp_path), model="demo", headless=False, context_window=8_000)
    notices = []
    for prompt in ("how are widget recipes parsed?", "how does assembly work?"):
        notices += [e.text async for e in session.run_turn(prompt) if isinstance(e, ev.Notice)]
    assert any("F2 shows what is sent" in n for n in notices), notices
    assert not any("--print-outbound" in n for n in notices)


def test_idle_flags_with_p_are_said_to_do_nothing(tmp_path):
    """`-p --idle compact` used to be accepted and silently never wait (the process ends after its answer):
    now one line says so, and the answer is the same."""
    from tests.faces.test_demo_and_headless import cli

    repo = make_repo(tmp_path)
    out = cli(["-p", "what is in this repo?", "--idle", "compact", "--keep-warm", "5"], repo)
    assert out.returncode == 0, out.stderr
    assert "note: --idle and --keep-warm do nothing with -p: it ends after its answer" in out.stderr
    plain = cli(["-p", "what is in this repo?"], repo)
    assert "do nothing with -p" not in plain.stderr and "does nothing with -p" not in plain.stderr
