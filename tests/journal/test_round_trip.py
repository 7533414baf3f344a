"""Round trip (property): journal → resume gives the same history, usage, counters, compaction state
and the same next request, byte for byte as the Anthropic provider would POST it, over random sessions:
tool calls, big results that compaction must cut or drop, usage that moves the calibration, model
switches, /compact (saved although it is no call) and /clear."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from tui_agent.core.journal.compaction_record import export_compaction_state
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.resume import resume_journaled
from tui_agent.core.journal.store import list_sessions
from tui_agent.core.journal.writer import journal_of, start_journal
from tui_agent.core.messages import protocol_errors
from tui_agent.core.access.gate import PermissionDecision
from tui_agent.core.providers.base import UsageInfo

from .helpers import LocalClaude, run, session_on

FILES = {f"f{i}.txt": "".join(f"line {n} of file {i}: " + "x" * (i * 7) + "\n" for n in range(40 * i + 1))
         for i in range(6)}

step = st.one_of(
    st.tuples(st.just("Read"), st.sampled_from(sorted(FILES))),
    st.tuples(st.just("Read"), st.sampled_from(sorted(FILES)[3:])),  # the big ones: compaction must act
    st.tuples(st.just("Echo"), st.text(min_size=1, max_size=300)),
    st.tuples(st.just("Touch"), st.sampled_from(["a", "b"])),
)
turn = st.tuples(
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=200),  # the prompt
    st.lists(st.lists(step, min_size=1, max_size=3), max_size=3),  # tool rounds, each 1-3 parallel calls
    st.text(min_size=1, max_size=200),  # the final answer
    st.sampled_from(["none", "switch", "clear", "pin"]),  # what happens after the turn
)


def replies_for(rounds, answer: str, turn_index: int) -> list[list[dict]]:
    out = []
    for r, calls in enumerate(rounds):
        blocks = []
        for c, (tool, arg) in enumerate(calls):
            tool_input = {"file_path": arg} if tool in ("Read", "Touch") else {"message": arg}
            blocks.append({"type": "tool_use", "id": f"toolu_{turn_index}_{r}_{c}", "name": tool, "input": tool_input})
        out.append(blocks)
    out.append([{"type": "text", "text": answer}])
    return out


def play_and_resume(tmp_path: Path, turns, window: int, input_tokens: int):
    """Play `turns` in a journaled session, then resume its journal into a new one: (old, new), or None
    when the session ended right after a /clear (nothing said yet, so no file to resume)."""
    workspace = tmp_path / "repo"
    workspace.mkdir(exist_ok=True)
    for name, text in FILES.items():
        (workspace / name).write_text(text)
    usage = UsageInfo(input_tokens, 20, 0, 0)
    provider = LocalClaude(context_window=window, max_output_tokens=1000, usage=usage)
    session = session_on(workspace, provider)
    environ = {"TUI_AGENT_DATA_DIR": tempfile.mkdtemp(dir=tmp_path)}  # one data dir per example
    start_journal(session, environ=environ)

    async def play() -> None:
        for index, (prompt, rounds, answer, after) in enumerate(turns):
            session.provider.replies = replies_for(rounds, answer, index)
            await run(session, prompt, {"Touch": PermissionDecision.ALLOW_ONCE})
            if after == "switch":
                await session.switch_model(LocalClaude(model=f"claude-test-{index}", context_window=window,
                                                       max_output_tokens=1000, usage=usage))
            elif after == "clear":
                session.clear()
            elif after == "pin" and session.history:  # steering between turns, saved before the next call
                session.pin(0)
                session.exclude(len(session.history) - 1)
            elif after == "compact":  # /compact with the summary call (the scripted reply, or "(done)")
                await session.compact_now("the files")

    asyncio.run(play())
    event(f"compaction changed the last call: {bool(session.last_plan and session.last_plan.changed)}")
    path = journal_of(session).path
    listed = {info.session_id for info in list_sessions(workspace, environ)}
    files = {p.stem for p in (Path(environ["TUI_AGENT_DATA_DIR"]) / "sessions").glob("*.jsonl")}
    assert files == listed  # every file written is a session that said something (issue 22)
    if not path.exists():  # the session has said nothing (after /clear, or only blank prompts): no file yet
        assert session.history == []
        parent = journal_of(session).parent  # the file it will link back to once it has something
        assert parent is None or parent in listed
        assert (parent is None) == (not listed)
        return None
    journal_of(session).close()  # the old process is gone, and its journal lock with it
    load = read_journal(path)
    assert load.warnings == []
    # a new process: the provider is built for the model the journal names
    fresh = session_on(workspace, LocalClaude(model=load.model, context_window=window, max_output_tokens=1000,
                                              usage=usage))
    resume_journaled(fresh, load, environ)
    return session, fresh


sessions = dict(turns=st.lists(turn, min_size=1, max_size=4), window=st.integers(2_500, 9_000),
                input_tokens=st.integers(50, 9_000))
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@example(turns=[("\r", [], "0", "none")], window=3085, input_tokens=1237)
@example(turns=[("\r", [], "0", "clear")], window=3085, input_tokens=1237)  # issue 22: said nothing, then /clear
@given(**sessions)
def test_journal_then_resume_is_the_same_session(tmp_path: Path, turns, window: int, input_tokens: int) -> None:
    pair = play_and_resume(tmp_path, turns, window, input_tokens)
    if pair is None:
        return
    session, fresh = pair
    assert fresh.history == session.history
    assert not session.history or protocol_errors(session.history) == []  # (a blank prompt adds nothing)
    assert fresh.usage_history == session.usage_history
    assert (fresh.state.calls, fresh.calibration) == (session.state.calls, session.calibration)
    assert export_compaction_state(fresh) == export_compaction_state(session)
    # the provider keeps nothing of its own: the same request gets the same body, breakpoints and all
    request = session.next_request()
    assert fresh.provider.outbound_body(request) == session.provider.outbound_body(request)


@SETTINGS
@example(turns=[("0", [], "0", "none")], window=3085, input_tokens=1237)
@given(**sessions)
def test_journal_then_resume_sends_the_same_next_request(tmp_path: Path, turns, window: int,
                                                         input_tokens: int) -> None:
    pair = play_and_resume(tmp_path, turns, window, input_tokens)
    if pair is None:
        return
    session, fresh = pair
    request = session.next_request()
    assert fresh.next_request() == request
    assert fresh.provider.outbound_body(fresh.next_request()) == session.provider.outbound_body(request)



turn_then_compact = st.tuples(st.text(min_size=1, max_size=50),
                              st.lists(st.lists(step, min_size=1, max_size=3), max_size=3), st.text(min_size=1, max_size=50),
                              st.sampled_from(["none", "compact", "clear"]))


@SETTINGS
@example(turns=[("0", [[("Read", "f0.txt")], [("Read", "f3.txt")]], "0", "compact")], window=2500, input_tokens=50)
# a summary swapped in over the last call's history while /compact had taken in one more message: the
# resumed layout held that message too and placed its cache breakpoint one message later
@example(turns=[("0", [], "0", "compact"), ("0", [], "0", "compact")], window=2914, input_tokens=1899)
@given(turns=st.lists(turn_then_compact, min_size=1, max_size=4), window=st.integers(2_500, 9_000),
       input_tokens=st.integers(50, 9_000))
def test_compact_then_resume_is_the_same_session_and_request(tmp_path: Path, turns, window: int,
                                                             input_tokens: int) -> None:
    """`/compact` (with its summary call) is no model call, yet a resume after it sends what it planned."""
    pair = play_and_resume(tmp_path, turns, window, input_tokens)
    if pair is None:
        return
    session, fresh = pair
    assert fresh.history == session.history and fresh.usage_history == session.usage_history
    assert not session.history or protocol_errors(session.next_request().messages) == []
    assert fresh.next_request() == session.next_request()
    assert fresh.provider.outbound_body(fresh.next_request()) == session.provider.outbound_body(session.next_request())
