"""A reply's thinking shows in the chat folded (one line with its size, opened on demand, never markup)
above the answer it led to; its tokens are counted in the history like any block."""

from __future__ import annotations

from tui_agent.ui.widgets.assistant_reply import AssistantReply
from tui_agent.ui.widgets.thinking_fold import ThinkingFold

from .support import make_app, make_repo, scripted_session, send

THOUGHT = "Let me think [bold]about[/bold] the repo first. " * 8


async def test_thinking_is_folded_above_the_answer(tmp_path):
    reply = [{"type": "thinking", "thinking": THOUGHT, "signature": "sig=="}, {"type": "text", "text": "The answer."}]
    session = scripted_session(make_repo(tmp_path), [reply])
    app = make_app(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "think first")
        folds = list(app.screen.query(ThinkingFold))
        assert len(folds) == 1 and folds[0].collapsed
        assert "thinking · ≈" in str(folds[0].title)
        chat = folds[0].parent
        children = list(chat.children)
        answer = app.screen.query_one(AssistantReply)
        assert children.index(folds[0]) < children.index(answer)  # the thinking came first
        folds[0].collapsed = False
        await pilot.pause()
        shown = str(folds[0].query_one(".thought").render())
        assert "[bold]about[/bold]" in shown  # untrusted text is never markup
    assert session.history[-1]["content"][0] == reply[0]  # kept with its signature
