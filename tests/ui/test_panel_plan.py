"""The panel draws the compaction plan: a mark per operation, mem and sent tokens per row, the recap
row, the cached-prefix band, the priced cached/new meter, the events list with its loss report, the
one-line meter when folded, the --transcript preview, and p / x / e on a row (outbound only)."""

from __future__ import annotations

from tui_agent.core.formats import fmt_tokens

from dataclasses import replace
from pathlib import Path

from tui_agent.core.agent.budget import first_difference
from tui_agent.core.agent.builtin_commands import register_builtin_commands
from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.messages import tool_result_block, user_text
from tui_agent.core.providers.demo import DemoProvider
from tui_agent.core.agent.session import Session
from tui_agent.core.tools import ToolRegistry
from tui_agent.ui.screens.event_view import EventScreen
from tui_agent.ui.screens.message_view import MessageScreen
from tui_agent.ui.widgets.budget_panel import BudgetPanel
from tui_agent.ui.widgets.context_line import ContextLine
from tui_agent.ui.widgets.events_list import NONE_YET
from tui_agent.ui.widgets.history_rows import HistoryRows

from .support import SMALL_WINDOW_MARKS, frozen, make_app, make_repo, reading_tools, send

# The demo model's window is 16k; masks need re-runnable results older than the protected budget.
POLICY = CompactPolicy(mask_protect_tokens=1000, keep_head=0.20, **SMALL_WINDOW_MARKS)  # a head of 20 % keeps a cut row in view (the default is 5 %)
# The scene of a loaded transcript and one prompt that shows every mark at once, after the turn: under the
# old cut-on-read-always rule (an explicit option since issue 17), the turn's own reads are cut as they are
# read, so no second event in the turn drops the rows the first one masked and cut.
SCENE_POLICY = replace(POLICY, cut_always=True)
PROMPTS = ("what does the handler do?", "explain the models", "where are the helpers?", "show me README.md",
           "what does the handler do?")


def planned_session(repo: Path, policy: CompactPolicy = POLICY) -> Session:
    session = frozen(Session(DemoProvider(workspace=repo, delay=0.0, context_window=16_000), ToolRegistry(reading_tools()), repo,
                             compact_policy=policy))
    register_builtin_commands(session)  # /compact
    return session


def row_text(rows: HistoryRows, index: int) -> str:
    rows.scroll_to(y=index, animate=False, immediate=True)
    return rows.render_line(index - round(rows.scroll_offset.y)).text


def first_of(view, kind: str) -> int:
    return next(i for i in range(view.history_len) if view.kind(i) == kind)


def event_lines(panel: BudgetPanel) -> list[str]:
    events = panel.events
    return [str(events.get_option_at_index(k).prompt) for k in range(events.option_count)]


async def run_prompts(pilot, prompts=PROMPTS) -> None:
    for prompt in prompts:
        await send(pilot, prompt)


async def test_every_operation_has_its_mark_and_the_sent_column_sums_to_the_meter(tmp_path) -> None:
    session = planned_session(make_repo(tmp_path))
    app = make_app(session)
    async with app.run_test(size=(160, 50)) as pilot:
        await run_prompts(pilot)
        panel = app.screen.query_one(BudgetPanel)
        rows, view = panel.rows, panel.rows.view
        assert view is not None and view.label == f"next call #{session.state.calls + 1}"
        cut, masked, dropped = first_of(view, "cut"), first_of(view, "masked"), first_of(view, "dropped")
        plan = view.plan
        cut_line = row_text(rows, cut)
        kept = plan.cuts[cut][0]
        assert cut_line[1] == "✂" and "✂ 1" in cut_line and f"→ {kept.kept_chars / 1000:.1f}k" in cut_line
        mask_line = row_text(rows, masked)
        assert mask_line[1] == "▒" and "▒ placeholder" in mask_line
        drop_line = row_text(rows, dropped)
        assert drop_line[1] == "·" and drop_line.rstrip().endswith("–")  # nothing sent
        # mem → sent: a masked row sends a placeholder, far smaller than the result in memory
        mem, sent = rows.index.rows[masked].tokens, view.sent_tokens(masked, rows.index.rows[masked].tokens)
        assert sent < mem / 10 and f"{mem / 1000:.1f}k {sent:>5}" in mask_line
        # the cached band covers exactly the rows the next call reads from the cache
        cached_rows = [i for i in range(view.history_len) if view.in_cache(i)]
        assert cached_rows and all(row_text(rows, i)[0] == "┃" for i in cached_rows[-3:])
        assert row_text(rows, view.history_len - 1)[0] == " " or view.in_cache(view.history_len - 1)
        recap_row = str(panel.query_one("#budget-recap-row").render())
        assert "≡recap for #" in recap_row and plan.recap is not None
        # the sent column (rows + the recap row) sums to the meter's "sent"
        from tui_agent.core.agent.budget import recap_tokens

        column = sum(view.sent_tokens(i, r.tokens) for i, r in enumerate(rows.index.rows))
        assert column + recap_tokens(plan, view.messages) == plan.message_tokens_after
        meter = panel.meter.meter
        assert meter.messages == plan.message_tokens_after
        assert f"→ sent ≈{meter.messages / 1000:.1f}k · " in str(panel.meter.render())
        # the reason of the selected row, in the plan's words
        rows.focus()
        rows.cursor = masked
        await pilot.pause()
        reason = str(panel.query_one("#budget-reason").render())
        assert f"#{masked} masked: " in reason and plan.op(masked).reason in reason
        # the meter: cached / new, its price (new-token equivalents: the demo model has no price), the water marks
        figures = panel.meter.meter
        text = str(panel.meter.render())
        assert figures.cached + figures.new == figures.total and figures.cached > 0
        assert f"cached ≈{figures.cached / 1000:.1f}k" in text and "new ≈" in text
        policy = session.compactor.policy
        low = policy.low_mark(plan.baseline_tokens)  # measured above the base (ADR 0014)
        assert f"compacts at {policy.high_tokens / 1000:.1f}k → {low / 1000:.1f}k" in text
        assert "new-token equivalents" in text and "cache-units" not in text
        assert "base ≈" in text and "built-in tools" in text and "MCP tools 0" in text and "project context" in text
        assert str(panel.query_one("#budget-spark").render()).startswith(f"calls {session.state.calls} ")


async def test_events_list_and_loss_report(tmp_path) -> None:
    session = planned_session(make_repo(tmp_path))
    session.history.extend(oversized_history(24))  # the first call must cut, mask and drop
    app = make_app(session)
    async with app.run_test(size=(160, 50)) as pilot:
        await send(pilot, "what does the handler do?")
        panel = app.screen.query_one(BudgetPanel)
        entry = panel.ledger.major_events[0]
        lines = event_lines(panel)
        assert entry.line in lines and entry.line.startswith("call 1 · over the ")
        assert "dropped" in entry.line and "masked" in entry.line and "recap keeps" in entry.line
        assert "╵" in str(panel.query_one("#budget-spark").render())  # the event's tick on the sparkline
        from tui_agent.ui.widgets.notice_line import NoticeLine

        notices = " ".join(str(n.render()) for n in app.screen.query(NoticeLine))
        assert "Older turns are no longer sent in full" in notices  # the chat says so too
        panel.rows.enter_on_purpose()  # F4: the steering mode
        await pilot.press("v")  # the events list is off the Tab cycle: v in the rows goes there
        assert panel.events.has_focus
        panel.events.highlighted = lines.index(entry.line)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, EventScreen)
        report = str(app.screen.query_one("#event-text").render())
        assert f"Left the request ({len(entry.event.loss.left_request)} messages)" in report
        masked = len(entry.event.loss.masked)
        assert f"Masked (a placeholder is sent instead, {masked} message{'s' * (masked != 1)})" in report
        assert "Lost: nothing" in report and entry.plan.recap.text.splitlines()[0] in report
        assert "Request diff: no earlier call to compare with." in report  # call 1
        await pilot.press("escape")
        await pilot.pause()
        # a pin is an event of its own at the next call: its diff names what changed against the last call
        view = panel.rows.view
        panel.act(next(i for i in range(view.history_len) if view.kind(i) == "dropped"), "pin")
        await send(pilot, "what does the handler do?")
        pin = next(e for e in panel.ledger.major_events if "pin" in e.event.kinds)
        assert pin.line in event_lines(panel)
        panel.events.take_focus()
        panel.events.highlighted = event_lines(panel).index(pin.line)
        await pilot.press("enter")
        await pilot.pause()
        report = str(app.screen.query_one("#event-text").render())
        assert f"Request diff against call {pin.event.call - 1}" in report and "changed  the recap" in report
        await pilot.press("escape")


async def test_pin_exclude_expand_show_at_once_in_the_next_call(tmp_path) -> None:
    session = planned_session(make_repo(tmp_path), SCENE_POLICY)
    session.history.extend(oversized_history(24))  # the first call cuts, masks and drops
    app = make_app(session)
    async with app.run_test(size=(160, 50)) as pilot:
        await send(pilot, "what does the handler do?")
        panel = app.screen.query_one(BudgetPanel)
        rows = panel.rows
        view = rows.view
        dropped, masked = first_of(view, "dropped"), first_of(view, "masked")
        while session.history[dropped]["role"] != "user" or not isinstance(session.history[dropped]["content"], list):
            dropped += 1
        before = panel.meter.meter.total
        rows.enter_on_purpose()  # F4: the steering mode
        rows.cursor = dropped
        await pilot.press("p")
        await pilot.pause()
        view = rows.view
        assert view.kind(dropped) == "pinned" and view.plan.is_sent(dropped)
        assert session.history[dropped] in view.messages  # sent verbatim in the next request
        assert row_text(rows, dropped)[1] == "●" and panel.meter.meter.total > before
        assert f"Pinned #{dropped} (sent as pinned): the next request grows" in str(
            panel.query_one("#budget-reason").render())
        await pilot.press("p")  # unpin
        await pilot.pause()
        assert rows.view.kind(dropped) == "dropped"
        rows.cursor = masked
        await pilot.press("e")
        await pilot.pause()
        assert rows.view.kind(masked) != "masked"
        assert rows.view.sent_tokens(masked, rows.index.rows[masked].tokens) == rows.index.rows[masked].tokens
        kept = next(i for i in range(masked + 1, rows.view.history_len - 6) if rows.view.kind(i) == "kept")
        rows.cursor = kept
        await pilot.press("x")
        await pilot.pause()
        assert rows.view.kind(kept) == "excluded" and not rows.view.plan.is_sent(kept)
        assert row_text(rows, kept)[1] == "⊘"
        assert len(session.history) == rows.view.history_len  # the history never changes
        # /context: the first row the request does not send as it is in the history
        await send(pilot, "/context")
        assert rows.has_focus and not rows.armed, "/context reads the rows; it does not steer"
        first = first_difference(rows.view.plan)
        assert first is not None and rows.cursor == first and rows.view.kind(first) != "kept"
        assert all(rows.view.kind(i) in ("kept", "pinned") for i in range(first))
        await pilot.press("f4")  # the steering mode: Enter opens the row, and the view acts on it
        assert rows.armed
        # the message view acts on its row the same way: e sends a cut result whole
        cut = next(i for i in range(rows.view.history_len) if rows.view.kind(i) == "cut")
        rows.cursor = cut
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MessageScreen)
        assert "(✂ cut)" in str(screen.query_one("#outbound-title").render())
        await pilot.press("e")
        await pilot.pause()
        assert f"Expanded #{cut}" in str(screen.query_one("#outbound-title").render())
        full = str(screen.query_one("#history-text").render())
        assert str(screen.query_one("#outbound-text").render()) == full  # sent whole now
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.query_one(HistoryRows).view.kind(cut) == "kept"


async def test_compact_command_refreshes_the_panel(tmp_path) -> None:
    session = planned_session(make_repo(tmp_path))
    app = make_app(session)
    async with app.run_test(size=(160, 50)) as pilot:
        await run_prompts(pilot, PROMPTS[:2])
        panel = app.screen.query_one(BudgetPanel)
        assert panel.rows.view.plan.drop_until == panel.rows.view.plan.drop_from  # nothing dropped yet
        await send(pilot, "/compact the handlers")
        view = panel.rows.view
        assert view.plan.drop_until > view.plan.drop_from and view.label == f"next call #{session.state.calls + 1}"
        first = view.plan.drop_from
        assert view.kind(first) == "summarised"  # the demo model writes an extractive summary
        assert row_text(panel.rows, first)[1] == "Σ" and "Σ in summary" in row_text(panel.rows, first)
        assert "≡summary for #" in str(panel.query_one("#budget-recap-row").render())
        panel.rows.enter_on_purpose()  # F4: the steering mode
        panel.rows.cursor = first
        await pilot.press("enter")  # the summarised row links to the summary sent in its place
        await pilot.pause()
        outbound = str(app.screen.query_one("#outbound-text").render())
        assert "Sent in its place, the summary for #" in outbound and view.plan.recap.text[:40] in outbound


async def test_folded_panel_leaves_a_one_line_meter(tmp_path) -> None:
    session = planned_session(make_repo(tmp_path))
    session.history.extend(oversized_history(24))  # the first call drops
    app = make_app(session)
    async with app.run_test(size=(80, 30)) as pilot:
        await send(pilot, "what does the handler do?")
        line = app.screen.query_one(ContextLine)
        assert line.display and line.region.height == 1
        panel = app.screen.query_one(BudgetPanel)
        text = str(line.render())
        assert text == panel.ledger.context_line()
        meter = panel.meter.meter
        assert text.startswith(f"ctx ≈{meter.percent}% of {fmt_tokens(meter.room)} · ") and " dropped" in text
        await pilot.press("f2")
        await pilot.pause()
        assert not line.display or line.region.height == 0  # the panel is open: it says it all
    app = make_app(planned_session(make_repo(tmp_path, "wide")))
    async with app.run_test(size=(160, 40)) as pilot:
        line = app.screen.query_one(ContextLine)
        assert line.region.height == 0
        await pilot.press("f2")  # wide mode: F2 hides the panel
        await pilot.pause()
        assert app.screen.has_class("-panel-hidden") and line.region.height == 1


def oversized_history(n: int = 40) -> list[dict]:
    """A loaded transcript far larger than the demo model's 16k window: Read results (re-runnable, so
    they can be masked) between build logs (not re-runnable: only dropping them frees their room)."""
    history = [user_text("port the whole project")]
    for i in range(n):
        build = i % 2 == 1
        name, tool_input = ("Bash", {"command": f"make build-{i}"}) if build else ("Read", {"file_path": f"src/f{i}.py"})
        history.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{i}", "name": name, "input": tool_input}]})
        history.append({"role": "user", "content": [tool_result_block(f"t{i}", f"{i}:" + "x" * 6000)]})
    history.append({"role": "assistant", "content": [{"type": "text", "text": "Done reading."}]})
    return history


async def test_transcript_shows_the_next_calls_plan_before_any_call(tmp_path) -> None:
    session = planned_session(make_repo(tmp_path))
    session.history.extend(oversized_history())
    app = make_app(session)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        panel = app.screen.query_one(BudgetPanel)
        assert session.state.calls == 0
        view = panel.rows.view
        assert view is not None and view.label == "next call #1" and panel.meter.meter.label == "Next call"
        assert view.plan.dropped_count > 0 and panel.meter.meter.total <= session.provider.context_window
        lines = event_lines(panel)
        assert NONE_YET not in lines and lines[-1].startswith("next call · ")
        assert "dropped" in lines[-1]
