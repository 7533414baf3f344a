"""The Context tool: the model sees what its request left out (status) and gets it back (recall) from the
append-only history, through the session's one plan; the demo model recalls a dropped file read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faces.test_demo_and_headless import make_repo, run
from tui_agent.core import events as ev
from tui_agent.core.agent.context_report import ContextView, recall, recall_cap, select, status_text
from tui_agent.core.agent.factory import build_session
from tui_agent.core.messages import protocol_errors
from tui_agent.core.access.gate import PermissionPolicy
from tui_agent.core.providers.demo_recall import whole_reads as _whole_reads
from tui_agent.core.tools import builtin_tools
from tui_agent.core.tools.base import ToolContext, ToolError
from tui_agent.core.tools.context import ContextTool

# Three exploring prompts, then /compact: the older turns (the read of docs/guide.md among them) drop; the
# kept head still holds the first turn's README.md.
EXPLORING = ["how does recipes work?", "where is the cli defined?", "which are the biggest files here?"]


async def dropped_readme_session(tmp_path: Path):
    session, _ = build_session(make_repo(tmp_path), model="demo", headless=True)
    for prompt in EXPLORING:
        await run(session, prompt)
    await session.compact_now()
    await run(session, "hello")  # a call after the event: the plan the tool reads is the one sent
    assert "docs/guide.md" not in _whole_reads(session.plan_call().request.messages), "the read must have left"
    return session


def started(events) -> list[tuple[str, dict]]:
    return [(e.name, e.input) for e in events if isinstance(e, ev.ToolStarted)]


async def test_the_demo_model_recalls_a_dropped_read_and_answers_from_it(tmp_path):
    session = await dropped_readme_session(tmp_path)
    events = await run(session, "what did docs/guide.md say?")
    assert started(events) == [("Context", {"action": "recall", "search": "docs/guide.md"})], "recalled, not read again"
    assert not any(isinstance(e, ev.PermissionRequested) for e in events)
    result = next(e for e in events if isinstance(e, ev.ToolFinished))
    assert not result.is_error and "How to build a widget." in result.content
    assert "[result of Read(docs/guide.md)]" in result.content
    text = "".join(e.text for e in events if isinstance(e, ev.TextDelta))
    assert "recalled it with the Context tool" in text and "How to build a widget." in text
    assert events[-1].reason == "completed" and protocol_errors(session.history) == []


async def test_status_lists_what_left_the_request_by_index_with_tokens_left(tmp_path):
    session = await dropped_readme_session(tmp_path)
    view = session.context_view()
    assert view.plan is session.last_plan and view.history is session.history  # the one owner's, no copy
    text = status_text(view)
    plan = view.plan
    left = plan.budget_tokens - plan.estimated_tokens
    assert f"Context of call {plan.call}:" in text and "left" in text
    first = plan.left_out()[0]
    assert f"#{first} dropped: " in text
    assert "Read(docs/guide.md)" in text, "a dropped read is described by its tool and path"
    assert left >= 0


async def test_recall_by_index_range_and_search_and_its_refusals(tmp_path):
    session = await dropped_readme_session(tmp_path)
    view = session.context_view()
    plan = view.plan
    dropped = plan.left_out()
    one = select(view, dropped[1], None, None, None)
    assert one == [dropped[1]]
    span = select(view, None, dropped[0], dropped[3], None)
    assert span == [i for i in range(dropped[0], dropped[3] + 1) if i in dropped]
    whole = next(i for i in range(plan.history_len) if plan.op(i).kind == "kept")
    assert "in your context already" in select(view, whole, None, None, None)
    assert "the history has #0–" in select(view, len(view.history) + 5, None, None, None)
    assert "mentions" in select(view, None, None, None, "no-such-thing-anywhere")
    assert "empty" in select(view, None, None, None, "  ")
    found = select(view, None, None, None, "DOCS/Guide.md")  # case-insensitive
    assert isinstance(found, list) and found
    back = recall(view, found, recall_cap(plan))
    assert "How to build a widget." in back.text and back.text.startswith(f"--- #{found[0]} (dropped")


async def test_a_recall_is_capped_and_says_so(tmp_path):
    session = await dropped_readme_session(tmp_path)
    view = session.context_view()
    indices = list(view.plan.left_out())
    back = recall(view, indices, 600)
    assert back.capped and "[recall capped at 600 chars" in back.text
    assert len(back.text.split("\n[recall capped")[0]) <= 600
    assert 1_000 <= recall_cap(view.plan) <= 12_000


async def test_the_tool_through_a_session_context_and_its_errors(tmp_path):
    session = await dropped_readme_session(tmp_path)
    tool = ContextTool()
    out = await tool.call({"action": "status"}, session.ctx)
    assert "Not sent whole" in out.content
    with pytest.raises(ToolError, match="in your context already|the history has"):
        await tool.call({"action": "recall", "index": len(session.history) - 1}, session.ctx)
    with pytest.raises(ToolError, match="not available"):
        await tool.call({"action": "status"}, ToolContext(workspace=tmp_path))
    assert tool.summary({"action": "recall", "search": "x.py"}) == "recall 'x.py'"


def test_it_is_built_in_read_only_and_never_asks(tmp_path):
    assert "Context" in [t.name for t in builtin_tools()]
    tool = ContextTool()
    for mode in ("interactive", "headless"):
        decision = PermissionPolicy(mode=mode, workspace=tmp_path).decide(
            tool, {"action": "recall", "search": "/etc/passwd"}, ToolContext(workspace=tmp_path))
        assert decision.behavior == "allow"


def test_status_before_any_call_says_so():
    assert "No model call" in status_text(ContextView([], None))


async def test_a_file_only_listed_before_is_read_not_recalled(tmp_path):
    session, _ = build_session(make_repo(tmp_path), model="demo", headless=True)
    await run(session, "which are the biggest files here?")  # Glob lists README.md; it is not read
    events = await run(session, "what does README.md say?")
    assert started(events)[0] == ("Read", {"file_path": "README.md"})
