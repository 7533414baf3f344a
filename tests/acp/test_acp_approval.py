"""Approve, postpone, edit and undo a compaction from the editor, driven by the Python SDK's client against
the real `tui-agent acp` and the fake Claude: what each answer does is read in the next request the server
receives. The window is 12k tokens and each file shown ≈4.9k, so the call after one is a compaction event."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import AllowedOutcome, RequestPermissionResponse

from tests.acp.test_acp_client import TIMEOUT, agent_args, workspace
from tests.acp.test_acp_compaction import RawClient
from tests.e2e.conftest import cli_env
from tests.fakes.fake_anthropic import FakeAnthropic, text, tool_use
from tests.waiting import wait_until
from tui_agent.core.compaction.summary import is_summary_request
from tui_agent.core.messages import protocol_errors
from tui_agent.faces.acp.compaction_approval import question

pytestmark = pytest.mark.asyncio
SUMMARY = "## Retained context\n\nThe user had the agent read the numbered files f0 to f3."
LINES = 36  # ≈1k tokens a file, under the 4,000 chars a result is cut at: old ones are masked, never cut
EDITED = "My own summary: only f2 matters, its last line is the answer."


def reading_model(root: Path, summaries: list[dict[str, Any]]):
    """The fake Claude: "read fN" → `cat fN.txt`, a tool result → a short answer, a summary request → SUMMARY,
    anything else → "ok"."""

    def respond(body: dict[str, Any]) -> Any:
        messages = body["messages"]
        if is_summary_request(messages):
            summaries.append(body)
            return text(SUMMARY)
        last = messages[-1]["content"]
        if isinstance(last, list) and any(block.get("type") == "tool_result" for block in last):
            return text("read it")
        names = re.findall(r"read (f\d)", json.dumps(last))
        if not names:
            return text("ok")
        name = names[-1]
        return tool_use("Bash", {"command": f"cat {name}.txt"}, f"toolu_{name}_{len(messages)}")

    return respond


class Editor(RawClient):
    """Answers each compaction question with the next of `answers` (tools are allowed once)."""

    def __init__(self, answers: list[str]) -> None:
        super().__init__()
        self.answers = answers
        self.questions: list[Any] = []

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any,
                                 **kwargs: Any) -> RequestPermissionResponse:
        ids = [option.option_id for option in options]
        if "postpone" not in ids:
            return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow_once"))
        self.questions.append(tool_call)
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answers.pop(0)))

    def card_texts(self) -> list[str]:
        return [u["content"][0]["content"]["text"] for u in self.raw_of("tool_call_update")
                if u["toolCallId"].startswith("compaction-approval-") and u.get("content")]


def whole(body: dict[str, Any], name: str) -> bool:
    """Whether file `name`'s whole text (its last line) is in the request."""
    return f"{name} line {LINES - 1}:" in json.dumps(body["messages"])


async def test_the_editor_postpones_approves_undoes_and_edits_a_compaction(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    for n in range(4):
        (root / f"f{n}.txt").write_text("".join(f"f{n} line {i}: " + "z" * 90 + "\n" for i in range(LINES)))
    summaries: list[dict[str, Any]] = []
    server = FakeAnthropic(model=reading_model(root, summaries))
    editor = Editor(["postpone", "compact", "compact_always"])
    env = cli_env(tmp_path, server, TUI_AGENT_DATA_DIR=str(tmp_path / "data"), CONTEXT_WINDOW_TOKENS="8000",
                  MAX_OUTPUT_TOKENS="1000", COMPACT_APPROVE="1",
                  COMPACT_HIGH_WATER="0.6", COMPACT_LOW_WATER="0.1")  # compaction 4's marks: an event each file
    with server:
        async with spawn_agent_process(editor, sys.executable, *agent_args("claude-sonnet-4-5"), env=env,
                                       cwd=str(tmp_path), observers=[editor.observe]) as (conn, _process):
            capabilities = {"session": {"compaction": {}}}  # the RFD's updates: the summary patch is seen
            await asyncio.wait_for(conn._conn.send_request("initialize", {
                "protocolVersion": PROTOCOL_VERSION, "clientCapabilities": capabilities}), TIMEOUT)
            sid = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id

            async def say(prompt: str) -> str:
                mark = len(editor.updates)
                response = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block(prompt)]), TIMEOUT)
                assert response.stop_reason == "end_turn"
                return "".join(u.content.text for u in editor.updates[mark:] if u.session_update == "agent_message_chunk")

            def request_of(call: int) -> dict[str, Any]:  # the model calls, in order (no summary call yet)
                return server.message_requests[call - 1]["body"]

            await say("read f0")
            # 1. postpone: asked before the call after f1 is shown, which goes out with f0's output whole
            await say("read f1")
            first = editor.questions[0]
            assert first.title == "Compact conversation?" and first.kind == "think"
            asked = first.content[0].content.text
            call = int(re.match(r"Compaction due at call #(\d+) ", asked).group(1))
            assert "tok of the 8.0k window" in asked and re.search(r"Postpone: this call is sent uncompacted, ≈", asked)
            assert whole(request_of(call), "f0")
            assert editor.card_texts()[0].startswith(f"Compaction postponed for call #{call}")
            # 2. approve: asked again before the next call, which compacts: f0 leaves the request
            await say("hello")
            assert len(editor.questions) == 2 and editor.card_texts()[1] == f"Approved: call #{call + 1} compacts now."
            assert not whole(request_of(call + 1), "f0") and whole(request_of(call), "f0")
            # 3. undo: the next request sends f0 whole again, and nobody is asked (the undo holds)
            undone = await say("/undo-compaction")
            assert undone.startswith(f"Took back the compaction event of call #{call + 1}")
            await say("hello again")
            assert whole(request_of(call + 2), "f0") and len(editor.questions) == 2
            # 4. "compact now, and stop asking": the next event is asked about once, the later ones run when due
            for name in ("f2", "f3", "f0", "f1"):
                await say(f"read {name}")
            assert len(editor.questions) == 3 and editor.card_texts()[2].startswith("Approved: call #")
            compactions = {u["compactionId"] for u in editor.raw_of("compaction_update")}
            assert len(compactions) > 3  # two approved, then events nobody was asked about
            assert "Approve before compacting: on" in await say("/approve")
            # 5. edit: /compact with a focus (the summary call is told it), then the summary rewritten
            compacted_now = await say("/compact keep what f2 says")
            assert compacted_now.startswith("Compacted now")
            await wait_until(lambda: any("summary" in u for u in editor.raw_of("compaction_update")),
                             what="the summary joining its compaction", timeout=TIMEOUT)
            assert "keep what f2 says" in json.dumps(summaries[-1]["messages"][-1])
            assert (await say(f"/summary edit {EDITED}")).startswith("Summary draft edited")
            patched = [u for u in editor.raw_of("compaction_update") if u.get("summary")]
            assert patched[-1]["summary"] == [{"type": "text", "text": EDITED}]
            await say("read f0")
            sent = server.message_requests[-2]["body"]  # the prompt's first call: the edited summary, not the model's
            assert EDITED in json.dumps(sent["messages"]) and SUMMARY not in json.dumps(sent["messages"])
    assert server.violations == []
    assert all(protocol_errors(r["body"]["messages"]) == [] for r in server.message_requests)


async def test_the_question_is_the_engines_figures_for_the_call_it_asks_about(tmp_path: Path) -> None:
    """The permission request's text: the call, the event's own line, its tokens after (compact now) and
    before (postponed) and the window, as the engine planned them."""
    from tests.core.agent.test_call_plan import play, small_session
    from tui_agent.core.formats import fmt_tokens

    session = small_session(tmp_path)
    previews: list[Any] = []

    async def ask(preview: Any) -> str:
        previews.append(preview)
        return "approve"

    session.ask_approval, session.approve_compaction = ask, True
    await play(session, range(4))
    assert previews
    for preview in previews:
        event, said = preview.plan.event, question(preview, session.ledger.window)
        assert said.startswith(f"Compaction due at call #{preview.call} ({event.reason}): ")
        assert f"the next request is ≈{fmt_tokens(event.tokens_after)} tok of the 12.0k window" in said
        assert f"sent uncompacted, ≈{fmt_tokens(event.tokens_before)} tok" in said
        assert "/compact FOCUS" in said and "/summary edit" in said and "/undo-compaction" in said
