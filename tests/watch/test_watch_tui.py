"""`tui-agent watch` in the TUI (Pilot): a real log appended in chunks cut mid-line; every call appears,
the view stays on the newest unless the user steps back, the recorded compaction is shown with what its
summary forgot, and the last call's figures are those of `replay --json --fit-calls 8`."""

from __future__ import annotations


from tests.waiting import wait_until
from tui_agent.core.recordings.strategy_table import default_policy
from tui_agent.core.recordings.recorded import recorded_transcript
from tui_agent.core.recordings.replay import open_replay
from tui_agent.core.recordings.transcripts import parse_transcript
from tui_agent.core.recordings.watch import FIT_CALLS
from tui_agent.ui.screens.watch import WatchScreen
from tui_agent.ui.watch_app import WatchApp
from tui_agent.ui.widgets.replay_card import ReplayCard
from tui_agent.ui.widgets.watch_card import WatchCard
from tui_agent.faces.watch import LogSource
from tests.shared import SMALL_LOG, TRANSCRIPTS, shared_log

SHARED = TRANSCRIPTS  # tests/shared.py: the one definition of ../shared/transcripts
ATHENA = SHARED / "tensiondriven__athena__f059ad9a-9964-437c-90a1-28f4dd6d245b.jsonl"
LINES = 660  # past the first recorded compaction (a summary at line 623)


def _calls_in(data: bytes) -> int:
    lines = data.decode("utf-8", errors="replace").split("\n")[:-1]
    return len(recorded_transcript(parse_transcript(lines), "x", FIT_CALLS).calls)


async def test_watch_follows_a_growing_log_and_stays_where_the_user_stepped(tmp_path):
    data = b"".join(shared_log(ATHENA.name).read_bytes().splitlines(keepends=True)[:LINES])
    log = tmp_path / "live.jsonl"
    log.write_bytes(b"")
    app = WatchApp(LogSource(log, False, False), log, default_policy(), session_label="test", show_durations=False)
    app.animation_level = "none"
    async with app.run_test(size=(150, 45)) as pilot:
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        assert "Waiting for the first model call" in str(screen.query_one("#watch-waiting").render())
        cuts = [len(data) * i // 7 + 11 for i in range(1, 7)] + [len(data)]
        written = 0
        stepped_back = False
        for cut in cuts:
            with open(log, "ab") as handle:
                handle.write(data[written:cut])
            written = cut
            expected = _calls_in(data[:cut])
            if not expected:
                continue
            await wait_until(lambda n=expected: screen.replay is not None and screen.replay.calls == n,
                             what=f"{expected} calls", timeout=60, shown=lambda: screen.sub_title)
            await pilot.pause()
            if not stepped_back:
                assert screen.current == expected - 1 and screen.following  # on the newest call
                if expected >= FIT_CALLS:
                    await pilot.press("p")  # step back: new calls must not move the view
                    stepped_back = True
                    held = screen.current
                    assert not screen.following
            else:
                assert screen.current == held and "stepped back" in screen.sub_title
        await pilot.press("f")
        await pilot.pause()
        total = _calls_in(data)
        assert screen.current == total - 1 and screen.following
        card = str(screen.query_one(ReplayCard).render())
        assert card.startswith(f"Call {total} of {total}")
        whole = open_replay(log, ("none", "v2"), fit_calls=FIT_CALLS)
        last = whole.step(total - 1)
        assert screen.figures_at(total - 1).ours_tokens == last.ours_tokens
        assert f"≈{round(last.ours_tokens):,} tok" in card
        compaction = whole.agent_compactions[0]
        screen.show_call(compaction.call - 1)
        await pilot.pause()
        live = str(screen.query_one(WatchCard).render())
        assert "forgot" in live and "not named in its summary" in live and "coverage" in live
        assert "compacted before this call" in str(screen.query_one(ReplayCard).render())


async def test_watch_latest_switches_to_a_newer_session_and_says_so(tmp_path, monkeypatch):
    import os

    from tui_agent.core.recordings.claude_logs import project_folder

    small = SMALL_LOG  # the small real log, else the long synthetic one (tests/shared.py)
    lines = small.read_bytes().splitlines(keepends=True)
    project = tmp_path / "proj"
    project.mkdir()
    folder = tmp_path / "config" / "projects" / project_folder(project)
    folder.mkdir(parents=True)
    old = folder / "old-session.jsonl"
    old.write_bytes(b"".join(lines[:40]))
    os.utime(old, (2_000_000, 2_000_000))
    source = LogSource(None, True, False, cwd=project, env={"CLAUDE_CONFIG_DIR": str(tmp_path / "config")})
    first = source.first()
    assert first == old
    app = WatchApp(source, first, default_policy(), session_label="test", show_durations=False)
    app.animation_level = "none"
    notices: list[str] = []
    async with app.run_test(size=(150, 45)) as pilot:
        screen = app.screen
        monkeypatch.setattr(app, "notify", lambda message, **kw: notices.append(message))
        await wait_until(lambda: screen.replay is not None and screen.replay.calls == _calls_in(old.read_bytes()),
                         what="the old session's calls", shown=lambda: screen.sub_title)
        new = folder / "new-session.jsonl"
        new.write_bytes(b"".join(lines))
        await wait_until(lambda: screen.path == new and screen.replay is not None
                         and screen.replay.calls == _calls_in(new.read_bytes()),
                         what="the new session followed", timeout=30, shown=lambda: screen.sub_title)
        await pilot.pause()
        assert any("A newer session started: new-session.jsonl" in n for n in notices)
        assert "new-session.jsonl" in screen.sub_title and screen.following
