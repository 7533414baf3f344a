"""Issue 28 §5: a turn stopped at 20 model calls with "reached its limit of model calls", no number, no way on.
The default is now far above a real task's needs; reaching it names the limit and the flag, and Enter on
the `/continue` it leaves in the prompt goes on with the same turn."""

from __future__ import annotations

from tui_agent.core.agent.loop import DEFAULT_MAX_TURNS
from tui_agent.core.messages import protocol_errors
from tui_agent.core.providers.scripted import text_reply, tool_reply

from .support import make_app, make_repo, scripted_session, send


def test_the_default_limit_is_far_above_a_real_task() -> None:
    assert DEFAULT_MAX_TURNS >= 200  # a real task's turn runs to dozens of calls; 20 stopped them short


async def test_the_limit_is_named_and_continue_goes_on_with_one_key(tmp_path) -> None:
    from tui_agent.ui.widgets.notice_line import NoticeLine
    from tui_agent.ui.widgets.prompt_area import PromptArea

    reads = [tool_reply("Read", {"file_path": "README.md"}, f"toolu_{i}", f"Reading, step {i}.") for i in range(3)]
    session = scripted_session(make_repo(tmp_path), [*reads, text_reply("Done at last.")])
    session.max_turns = 2
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "read it thrice")
        said = [line.text for line in app.screen.query(NoticeLine)]
        assert any(n.startswith("Stopped after 2 model calls (the per-turn limit, --max-turns).") for n in said), said
        prompt = app.screen.query_one(PromptArea)
        assert prompt.text == "/continue", "one key (Enter) goes on"
        prompt.focus()
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        last = session.history[-1]
        assert last["role"] == "assistant" and last["content"][-1]["text"] == "Done at last."
        assert sum(1 for m in session.history if m["role"] == "user" and m["content"][0].get("type") == "text") == 1
        assert protocol_errors(session.history) == []
        await send(pilot, "/continue")  # nothing stopped now
        said = [line.text for line in app.screen.query(NoticeLine)]
        assert said[-1].startswith("Nothing to continue"), said[-1]
