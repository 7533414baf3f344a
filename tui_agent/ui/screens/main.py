"""The main screen: header, chat beside the budget panel, completion hints, prompt, footer.

It owns the turn worker: one `@work(exclusive=True, group="turn")` task per prompt consumes
`session.run_turn`, hands events to `TurnRenderer` and answers permission requests with the modal.
Esc cancels that worker; the core repairs the history itself, and the chat says "cancelled". A prompt
sent while a turn runs is queued (`QueuedPrompts`) and sent when the turn ends, never dropped.
Under 100 columns the panel folds away behind F2 instead of squeezing the chat. The panel's keys (F2, F4,
the approval's) are `panel_keys.PanelKeys`', bound and described in `keys.py`.
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from dataclasses import replace
from typing import TYPE_CHECKING, Callable

from textual import events, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Header
from textual.worker import Worker, WorkerState

from tui_agent.core import events as ev
from tui_agent.core.access.gate import PermissionDecision, PermissionPolicy
from tui_agent.core.sanitize import strip_controls
from tui_agent.ui.commands import command_list, enter_command, run_command
from tui_agent.ui.keys import SCREEN_BINDINGS
from tui_agent.ui.panel_keys import PanelKeys
from tui_agent.ui.steering import Steered
from tui_agent.ui.widgets.budget_panel import BudgetPanel
from tui_agent.ui.widgets.chat_pane import ChatPane
from tui_agent.ui.widgets.command_hints import CommandHints
from tui_agent.ui.widgets.context_line import ContextLine
from tui_agent.ui.widgets.history_rows import HistoryRows
from tui_agent.ui.widgets.prompt_area import PromptArea
from tui_agent.ui.widgets.queued_prompts import QueuedPrompts
from tui_agent.ui.widgets.tool_card import ToolCard
from tui_agent.ui.widgets.type_through import TypedToPrompt, taken_by_prompt

if TYPE_CHECKING:
    from tui_agent.core.agent.session import Session

NARROW_BELOW = 100


class MainScreen(PanelKeys, Screen):
    AUTO_FOCUS = "PromptArea"
    BINDINGS = SCREEN_BINDINGS  # F2 panel, F4 steering, Alt+Y / Alt+L an approval, Esc (`keys.py` says each)

    def __init__(self, session: "Session", welcome: list[ev.Notice], show_durations: bool = True,
                 resumed: bool = False, pick_session: bool = False) -> None:
        super().__init__()
        self.session = session
        self.welcome = welcome
        self.resumed = resumed  # the session was restored from its journal: redraw it
        self.pick_session = pick_session  # a bare `--resume`: open the picker at once
        self.show_durations = show_durations
        self.turn: Worker | None = None
        self.stopped_at_limit = False  # the last turn stopped at --max-turns: /continue goes on

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◆")
        with Horizontal(id="body"):
            yield ChatPane(id="chat")
            yield BudgetPanel(self.session, id="panel")
        yield QueuedPrompts(id="queued")
        yield CommandHints(id="hints")
        yield PromptArea(id="prompt")
        yield ContextLine(id="context-line")
        yield Footer()

    @property
    def chat(self) -> ChatPane:
        return self.query_one(ChatPane)

    @property
    def panel(self) -> BudgetPanel:
        return self.query_one(BudgetPanel)

    @property
    def prompt(self) -> PromptArea:
        return self.query_one(PromptArea)

    @property
    def queued(self) -> QueuedPrompts:
        return self.query_one(QueuedPrompts)

    async def on_mount(self) -> None:
        self.update_title()
        self.refresh_commands()
        await self.chat.add_notice(
            f"Ask about the code in {self.app.workspace_label}. The budget panel (F2) shows what each model call sends: "
            "highlighted rows go out, grey rows were dropped, ✂ marks cut tool results. /help lists commands.")
        if self.resumed:
            from tui_agent.ui.session_actions import show_restored

            await show_restored(self, self.welcome)
        else:
            for notice in self.welcome:
                await self.chat.add_notice(notice.text, notice.level)
        if self.pick_session:
            from tui_agent.ui.session_actions import open_resume_picker

            await open_resume_picker(self)
        from tui_agent.ui.session_actions import restore_unsent

        await restore_unsent(self)
        self.set_class(self.app.size.width < NARROW_BELOW, "-narrow")
        self.prompt.recall_queued = self.queued.pop_newest  # ↑ on an empty prompt edits a queued prompt
        self.prompt.focus()  # explicit: headless runs do not always honour AUTO_FOCUS

    def refresh_commands(self) -> None:
        """Feed the completion hints the current command list (skills and MCP add theirs after start-up)."""
        hints = self.query_one(CommandHints)
        hints.commands = command_list(self)
        hints.arguments = {"/theme": sorted(self.app.available_themes)}
        self.prompt.completable_arguments = frozenset(hints.arguments)

    def update_title(self) -> None:
        self.title = "tui-agent"
        label = self.session.session_id or self.app.session_label
        parts = [self.session.provider.model, self.app.workspace_label, f"session {label}"]
        cost = self.panel.cost_text if self.is_mounted else ""
        self.sub_title = strip_controls(" · ".join(parts + ([cost] if cost else [])))  # a folder name may hold ESC

    def on_budget_panel_cost_changed(self, event: BudgetPanel.CostChanged) -> None:
        self.update_title()
        self.query_one(ContextLine).text = self.panel.context_text

    def on_budget_panel_said(self, event: BudgetPanel.Said) -> None:
        self.chat.add_notice_nowait(event.text, event.level)

    def on_budget_panel_changed(self, event: BudgetPanel.Changed) -> None:
        self.query_one(ContextLine).text = self.panel.context_text

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW_BELOW, "-narrow")

    # -- prompt and commands ---------------------------------------------------------------------
    async def on_prompt_area_submitted(self, event: PromptArea.Submitted) -> None:
        self.query_one(CommandHints).show_for("")
        self.chat.jump_to_end()  # whatever was sent, its answer appears at the end
        await self.run_line_async(event.text)

    def on_prompt_area_end_again(self, event: PromptArea.EndAgain) -> None:
        if self.chat.has_new_output:
            self.chat.jump_to_end()

    def on_text_area_changed(self, event: PromptArea.Changed) -> None:
        if event.text_area is self.prompt:
            self.query_one(CommandHints).show_for(event.text_area.text)
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc is offered (and shown in the footer) only when there is a completion to close or a turn
        to cancel, and says which: closing the hints comes first and never touches the typed text."""
        hints_open = self.query_one(CommandHints).has_class("-visible")
        if action == "close_hints":
            return hints_open
        if action == "cancel_turn":
            return self.turn_running and not hints_open
        if action == "move_focus":  # Tab on a slash command completes it (`PromptArea._on_key`)
            return not (self.focused is self.prompt and self.prompt.completes_on_tab)
        approval = self.check_approval_key(action)
        return True if approval is None else approval

    def action_move_focus(self, step: int) -> None:
        """Tab / Shift+Tab, at once (a priority binding: see `keys.SCREEN_BINDINGS`). The tool cards are
        one stop with the chat: Tab out of a card moves on to the next region (panel, prompt)."""
        focused = self.focused
        if isinstance(focused, ToolCard) and focused.parent is not None:
            self.set_focus(focused.parent, scroll_visible=False)  # now, not after a refresh like focus()
        if step > 0:
            self.focus_next()
        else:
            self.focus_previous()

    @property
    def turn_running(self) -> bool:
        return self.turn is not None and self.turn.state in (WorkerState.PENDING, WorkerState.RUNNING)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.refresh_bindings()
        if event.worker is self.turn and event.state in (WorkerState.SUCCESS, WorkerState.CANCELLED,
                                                         WorkerState.ERROR):
            self._after_turn(event.worker)

    def _after_turn(self, worker: Worker) -> None:
        """A turn ended: send the oldest queued prompt if it completed (a stop for the turn limit or a
        denial still wants the user's next words); after Esc or a failure, put them back in the prompt."""
        queued = self.queued
        self.stopped_at_limit = worker.state is WorkerState.SUCCESS and worker.result == "max_turns"
        if self.stopped_at_limit and not queued.texts and not self.prompt.text.strip():
            self.prompt.complete_to("/continue")  # one key (Enter) goes on
        if not queued.texts:
            return
        if worker.state is WorkerState.SUCCESS and worker.result != "error":
            text = queued.pop_oldest()
            if text is not None:
                self.chat.jump_to_end()
                self.start_turn(text)
            return
        texts = queued.take_all()
        draft = self.prompt.text.strip()
        self.prompt.complete_to("\n".join([*texts, *([draft] if draft else [])]))
        why = "was cancelled" if worker.state is WorkerState.CANCELLED else "failed"
        which = "prompt is" if len(texts) == 1 else f"{len(texts)} prompts are"
        self.chat.add_notice_nowait(f"The turn {why}: your queued {which} back in the prompt, not sent "
                                    "(Enter sends it).", "warning")

    def on_prompt_area_complete(self, event: PromptArea.Complete) -> None:
        completion = self.query_one(CommandHints).completion(self.prompt.text)
        if completion:
            self.prompt.complete_to(completion)

    def on_prompt_area_hint_move(self, event: PromptArea.HintMove) -> None:
        self.query_one(CommandHints).move(event.delta)

    def on_prompt_area_command_entered(self, event: PromptArea.CommandEntered) -> None:
        """Enter on `/he`: run the selected command, or complete one that takes arguments."""
        enter_command(self.prompt, self.query_one(CommandHints).choice(event.text), event.text)

    def run_line(self, line: str) -> None:
        self.run_worker(self.run_line_async(line), group="command")

    async def run_line_async(self, line: str) -> None:
        if line.startswith("/"):
            await run_command(self, line)
        else:
            self.start_turn(line)

    def clear_draft(self) -> bool:
        """Ctrl+C on a draft: clear it, kept in the input history; False when there was none."""
        return self.prompt.clear_draft()

    def prefill(self, text: str) -> None:
        self.prompt.complete_to(text)
        self.prompt.focus()

    # -- turns -----------------------------------------------------------------------------------
    def start_turn(self, prompt: str, *, shown: str | None = None,
                   after: Callable[[], str | None] | None = None) -> None:
        """`shown`: the chat's line for a command's own prompt (/init); `after`: its outcome line.
        A prompt typed while a turn runs is queued (sent when it ends), never dropped."""
        if self.turn_running and shown is None and after is None:
            self.queued.add(prompt)
            return
        if self.turn_running:
            self.chat.add_notice_nowait("A turn is still running. Press Esc to cancel it first.", "warning")
            return
        self.turn = self.run_turn(prompt, shown, after)

    def continue_turn(self) -> None:
        """`/continue`: the turn the per-turn limit stopped goes on (its tool results are the next request's
        end, so no prompt is added)."""
        if not self.stopped_at_limit or self.turn_running:
            self.chat.add_notice_nowait("Nothing to continue: /continue goes on after a turn stopped at the "
                                        "per-turn limit of model calls.", "warning")
            return
        self.stopped_at_limit = False
        self.turn = self.run_turn(None)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def run_turn(self, prompt: str | None, shown: str | None = None,
                       after: Callable[[], str | None] | None = None) -> str:
        chat = self.chat
        line = None
        if prompt is None:
            await chat.add_notice(f"Continuing the turn (up to {self.session.max_turns} more model calls).")
        else:
            line = await chat.add_user(shown or prompt)
        started = False
        from tui_agent.ui.screens.permission import PermissionScreen  # not needed for the first frame
        from tui_agent.ui.turn import TurnRenderer

        renderer = TurnRenderer(chat, self.panel, self.show_durations, on_cost=self.update_title)
        reason = "error"
        try:
            # aclosing: Esc cancels this worker while it awaits its own work (a render, the modal); closing
            # the engine's generator here lets the core repair the history before anything else runs.
            async with aclosing(self.session.run_turn(prompt)) as turn_events:  # type: ignore[arg-type]
                async for event in turn_events:
                    if isinstance(event, ev.PermissionRequested):
                        screen = PermissionScreen(event.tool_name, event.input, event.summary, event.preview,
                                                  self.session_rule(event.tool_name, event.input))
                        answer = await self.app.push_screen_wait(screen)
                        if not event.decision.done():
                            event.decision.set_result(answer or PermissionDecision.DENY)
                        continue
                    started = started or isinstance(event, ev.TurnStarted)
                    if isinstance(event, ev.TurnEnded):
                        reason = event.reason
                        if not started and reason == "error" and prompt and shown is None and line is not None:
                            event = await self.refused(prompt, line, event)
                    await renderer.handle(event)
        except asyncio.CancelledError:
            await renderer.close()
            chat.add_notice_nowait("Cancelled. The history keeps what was said so far.", "warning")
            raise
        finally:
            await renderer.close()
            renderer.cancel_open_cards()
            from tui_agent.core.journal.writer import journal_problem

            problem = journal_problem(self.session)
            if problem:
                chat.add_notice_nowait(problem, "warning")
            outcome = after() if after is not None else None
            if outcome:
                chat.add_notice_nowait(outcome)
        return reason

    async def refused(self, prompt: str, line: Widget, ended: ev.TurnEnded) -> ev.TurnEnded:
        """The engine refused the prompt before it joined the history (too large for the window): it leaves
        the chat and goes back to the prompt box, ahead of anything typed since, for the user to shorten."""
        await line.remove()
        draft = self.prompt.text.strip()
        self.prompt.complete_to(prompt + (f"\n{draft}" if draft else ""))
        self.prompt.focus()
        if prompt.strip() and ended.error:
            return replace(ended, error=f"{ended.error} It is back in the prompt box.")
        return ended

    def session_rule(self, tool_name: str, tool_input: dict) -> str:
        """The rule "allow for this session" would add, worked out on a throwaway policy."""
        tool = self.session.tools.get(tool_name)
        if tool is None:
            return ""
        try:
            return str(PermissionPolicy().remember(tool, tool_input, self.session.ctx))
        except Exception:  # noqa: BLE001 - a note for the modal, never worth failing the turn
            return ""

    def action_close_hints(self) -> None:
        self.query_one(CommandHints).hide()
        self.refresh_bindings()

    def action_cancel_turn(self) -> None:
        if self.turn is not None and self.turn_running:
            self.turn.cancel()

    async def stop_turn(self) -> None:
        """Cancel the running turn, if any, and wait until the core has repaired the history."""
        if self.turn is not None and self.turn_running:
            self.turn.cancel()
            try:
                await self.turn.wait()
            except Exception:  # noqa: BLE001 - WorkerCancelled is the expected outcome
                pass

    async def clear_conversation(self) -> None:
        await self.stop_turn()
        self.session.clear()
        self.update_title()  # a journaled session continues under a new id
        await self.chat.clear_all()
        self.panel.sync_history()
        self.panel.steering.clear()  # the rows it names are gone
        named = f", session {self.session.session_id}" if self.session.session_id else ""
        await self.chat.add_notice(f"Cleared: a new conversation{named} (history, chat and panel are empty).")

    # -- panel (F2, F4 and the approval keys: `PanelKeys`) ----------------------------------------
    def on_screen_resume(self) -> None:
        """A view closed (a message, an event, a picker...): the keyboard is back at the prompt."""
        if self.is_mounted:
            self.prompt.focus()

    def type_into_prompt(self, text: str) -> None:
        """Text typed in a view opened to read (`TypeThroughView`): the view closed, the text goes here."""
        self.prompt.insert(text)  # (the focus comes back here as the view closes: `on_screen_resume`)

    def on_steered(self, event: Steered) -> None:
        """Every pin / exclude / expand by hand is said in the chat, with what it does to the next call."""
        self.chat.add_notice_nowait(event.note, "info")

    def on_typed_to_prompt(self, event: TypedToPrompt) -> None:
        """A key typed on the chat, a card or the panel belongs to the prompt, not to the void."""
        event.stop()
        taken_by_prompt(self)
        self.prompt.focus()
        if event.enter:
            self.prompt.press_enter()
        else:
            self.prompt.insert(event.text)

    def on_history_rows_opened(self, event: HistoryRows.Opened) -> None:
        rows = self.query_one(HistoryRows)
        if 0 <= event.index < len(self.session.history):
            what = rows.index.rows[event.index].what
            from tui_agent.ui.screens.message_view import MessageScreen  # not needed for the first frame

            self.app.push_screen(MessageScreen(self.session.history, event.index, rows.view, what,
                                               act=self._act_from_message_view, steering=rows.armed))

    def _act_from_message_view(self, index: int, action: str):
        """`p` / `x` / `e` in the message view: the same action as in the panel; the view redraws."""
        note = self.panel.act(index, action)
        return self.query_one(HistoryRows).view, note
