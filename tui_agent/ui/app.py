"""The Textual app: wiring only. Screens and widgets hold the behaviour (pitfall P21).

`run_app(session, startup_notices=...)` is the entry point the CLI calls for a bare `tui-agent`. It
points `TRACE=1` output at a log file (lines on a Textual screen would corrupt it), registers the theme
files, shows the first frame, and only then runs the session's slow start-up work (MCP servers, SDK
imports) in a background worker. Nothing here imports anthropic, openai or mcp.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from textual import work
from textual.app import App, InvalidThemeError, SystemCommand
from textual.content import Content
from textual.screen import Screen

from tui_agent.core import events as ev
from tui_agent.core import trace
from tui_agent.core.shell import process_groups
from tui_agent.ui.commands import palette_commands
from tui_agent.ui.keys import APP_BINDINGS
from tui_agent.ui.screens.main import MainScreen
from tui_agent.ui.settings import UIState, log_dir, user_themes_dir
from tui_agent.ui.themes import DEFAULT_THEME, MUTED, VARIABLE_DEFAULTS, bundled_themes_dir, load_themes

if TYPE_CHECKING:
    from tui_agent.core.agent.session import Session
    from tui_agent.core.access.trust import Answer, TrustQuestion
    from tui_agent.ui.terminal_guard import TerminalGuard
    from tui_agent.core.agent.call import CallPlan
    from tui_agent.ui.widgets.approval_bar import Answer as ApprovalAnswer

QUIT_WINDOW = 2.0  # seconds within which a second Ctrl+C quits


class AgentApp(App[int]):
    TITLE = "tui-agent"
    CSS_PATH = Path(__file__).parent / "app.tcss"  # absolute: subclasses elsewhere resolve it too
    BINDINGS = APP_BINDINGS  # Ctrl+C (described with the screen's keys in `keys.py`)
    terminal_guard: "TerminalGuard | None" = None  # set by run_app: a signalled exit then ends for sure
    crash_report: str | None = None  # the one line an unhandled exception left (`run_to_end` prints it)
    unsent_note = ""  # queued prompts were kept at quit: run_app says so on stderr

    def __init__(
        self,
        session: "Session",
        *,
        startup_notices: Sequence[ev.Notice] = (),
        session_label: str | None = None,
        config_base: Path | None = None,
        show_durations: bool = True,
        run_background: bool = True,
        resumed: bool = False,
        pick_session: bool = False,
    ) -> None:
        super().__init__()  # first: it creates the theme registry (pitfall P11)
        self.session = session
        self.resumed = resumed
        self.pick_session = pick_session
        label = session_label or session.session_id
        self.session_label = str(label) if label else uuid.uuid4().hex[:6]
        self.workspace_label = session.workspace.name or str(session.workspace)
        self.config_base = config_base
        self.show_durations = show_durations
        self.run_background = run_background
        self._last_ctrl_c = 0.0
        notices = list(startup_notices)
        themes, failures = load_themes(bundled_themes_dir(), user_themes_dir(config_base))
        for theme in themes.values():
            self.register_theme(theme)
        notices += [ev.Notice(str(failure), "warning") for failure in failures]
        self.ui_state = UIState.load(config_base)
        wanted = self.ui_state.theme or DEFAULT_THEME
        try:
            self.theme = wanted
        except InvalidThemeError:
            notices.append(ev.Notice(f"Theme {wanted!r} is not available; using {DEFAULT_THEME}.", "warning"))
            self.theme = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
        self.startup_notices = notices
        session.ask_trust = self.ask_trust  # project MCP servers / allow rules ask through the modal
        session.ask_approval = self.ask_approval  # approve-before-compacting asks on the panel (when on)

    def format_title(self, title: str, sub_title: str) -> Content:
        """Textual dims the sub-title (4.3:1 in agent-light); the muted foreground keeps AA (4.5:1)."""
        if not sub_title:
            return Content(title)
        return Content.assemble(title, (" — ", MUTED), (sub_title, MUTED))

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(VARIABLE_DEFAULTS)  # literal values only (pitfall P10)

    def get_default_screen(self) -> Screen:
        return MainScreen(self.session, self.startup_notices, self.show_durations, resumed=self.resumed,
                          pick_session=self.pick_session)

    def on_mount(self) -> None:
        # SIGTERM/SIGHUP: end the processes Bash started, then quit properly (the terminal is restored).
        process_groups.install_signal_handlers(asyncio.get_running_loop(), on_signal=self._exit_on_signal)
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        self.call_after_refresh(self._after_first_frame)

    def _exit_on_signal(self, sig: int) -> None:
        if self.terminal_guard is not None:
            self.terminal_guard.exit_requested(128 + sig)  # the watchdog: a hung shutdown still ends
        self.exit(128 + sig)

    def _after_first_frame(self) -> None:
        gc.enable()  # the CLI pauses the cyclic GC while start-up allocates (see cli.main)
        self.prewarm()
        if self.run_background and self.session.background_start:
            self.start_background()

    @work(thread=True, group="prewarm", exit_on_error=False)
    def prewarm(self) -> None:
        """Import what the first reply needs (Markdown, markdown-it, the model's SDK, the loop and the
        compaction engine the session makes its compactor from at the first plan) while the user is still
        typing."""
        import tui_agent.core.agent.loop  # noqa: F401  (with it the compactor, tiers, facts, recap)
        import tui_agent.core.compaction.strategies.seed  # noqa: F401
        import tui_agent.core.compaction.strategies.server  # noqa: F401
        import tui_agent.ui.screens.message_view  # noqa: F401
        import tui_agent.ui.screens.permission  # noqa: F401
        import tui_agent.ui.turn  # noqa: F401
        import tui_agent.ui.widgets.assistant_reply  # noqa: F401

        self.session.provider.preload()  # the model SDK, so the first reply does not wait for it

    def _remember_theme(self, theme: object) -> None:
        name = getattr(theme, "name", None)
        if name and name != self.ui_state.theme:
            self.ui_state.theme = name
            problem = self.ui_state.save(self.config_base)
            if problem:
                self.notify(problem, severity="warning")

    @work(group="background", exit_on_error=False)
    async def start_background(self) -> None:
        """Slow start-up work (MCP servers...) after the first frame; failures arrive as notices."""
        notices = await self.session.start_background()
        screen = self.screen_stack[0] if self.screen_stack else None
        if isinstance(screen, MainScreen):
            screen.refresh_commands()  # skill commands are registered by the background start
            for notice in notices:
                await screen.chat.add_notice(notice.text, notice.level)

    async def ask_trust(self, question: "TrustQuestion") -> "Answer":
        """Ask with the trust modal; called from the start-up worker, after the first frame."""
        from tui_agent.ui.screens.trust import TrustScreen  # not needed for the first frame

        answer = await self.push_screen_wait(TrustScreen(question))
        return answer or "later"

    async def ask_approval(self, preview: "CallPlan") -> "ApprovalAnswer":
        """A compaction event is due and the approve mode is on: the panel shows it and its bar asks."""
        screen = self.screen_stack[0] if self.screen_stack else None
        if not isinstance(screen, MainScreen):
            return "approve"
        return await screen.panel.approval.ask(preview)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        main = self.screen_stack[0] if self.screen_stack else None
        if isinstance(main, MainScreen):
            yield from palette_commands(main, self.available_themes)

    def action_ctrl_c(self) -> None:
        """The first Ctrl+C clears a draft (↑ brings it back), as in a shell; twice on an empty one quits."""
        if isinstance(self.screen, MainScreen) and self.screen.clear_draft():
            self._last_ctrl_c = 0.0
            self.notify("Draft cleared (↑ brings it back). Ctrl+C twice quits.", timeout=QUIT_WINDOW)
            return
        now = time.monotonic()
        if now - self._last_ctrl_c <= QUIT_WINDOW:
            self.keep_unsent()
            self.exit(0)
            return
        self._last_ctrl_c = now
        queued = self.queued_texts()
        warning = f" {unsent_words(len(queued))} not sent: quitting keeps it in the prompt history." if queued else ""
        self.notify(f"Press Ctrl+C again to quit.{warning}", timeout=QUIT_WINDOW,
                    severity="warning" if queued else "information")

    async def action_quit(self) -> None:
        """`/exit`, `/quit`: the queued prompts are kept for the next start (`keep_unsent`)."""
        self.keep_unsent()
        await super().action_quit()

    def queued_texts(self) -> list[str]:
        main = self.screen_stack[0] if self.screen_stack else None
        return list(main.queued.texts) if isinstance(main, MainScreen) and main.is_mounted else []

    def keep_unsent(self) -> None:
        """Prompts queued behind a running turn and not sent when the user quits: saved (ui.json) for the
        prompt history of the next start, and said once the terminal is back (`run_app`)."""
        main = self.screen_stack[0] if self.screen_stack else None
        texts = main.queued.take_all() if isinstance(main, MainScreen) and main.is_mounted else []
        if not texts:  # (taken: the cancelled turn does not put them back in a prompt about to go)
            return
        self.ui_state.unsent = [*self.ui_state.unsent, *texts]
        problem = self.ui_state.save(self.config_base)
        self.unsent_note = problem or (f"{unsent_words(len(texts))} not sent: kept in the prompt history "
                                       "(↑ at the next start).")

    async def on_unmount(self) -> None:
        await self.session.aclose()

    def _handle_exception(self, error: Exception) -> None:
        """An unhandled exception: its details (traceback with locals: the conversation) go to a private
        log file, and the app exits with one line (`tui_agent.core.crash`), instead of Textual's traceback with
        locals printed on the terminal. `run_test` still re-raises it (`_exception`), for the tests."""
        from tui_agent.core.crash import crash_line, write_crash_log

        if self.crash_report is None:
            self.crash_report = crash_line(error, write_crash_log(error))
        self._return_code = 1
        if self._exception is None:
            self._exception = error
            self._exception_event.set()
        self._close_messages_no_wait()

    def run_to_end(self, **run_options: object) -> int:
        """Run until the user quits; the process exit code (a crash: its one line on stderr first)."""
        result = self.run(**run_options)
        if self.crash_report is not None:
            import sys

            print(self.crash_report, file=sys.stderr, flush=True)
            return 1
        return result if isinstance(result, int) else (self.return_code or 0)


def unsent_words(count: int) -> str:
    return "Your queued prompt is" if count == 1 else f"Your {count} queued prompts are"


_trace_log_ready = False


def setup_trace_log() -> ev.Notice | None:
    """With TRACE=1, send trace lines to a log file and say where it is (once per process)."""
    global _trace_log_ready
    if not trace.enabled() or _trace_log_ready:
        return None
    _trace_log_ready = True
    directory = log_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "trace.log"
        stream = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    except OSError as error:
        trace.set_sink(lambda line: None)
        return ev.Notice(f"TRACE=1 but the log file could not be opened: {error}", "warning")
    trace.set_sink(trace.file_sink(stream))
    return ev.Notice(f"Tracing to {path} (tail -f it in another terminal).")


def run_app(session: "Session", startup_notices: Sequence[ev.Notice] | None = None, *, resumed: bool = False,
            pick_session: bool = False) -> int:
    """Run the TUI until the user quits; returns the process exit code."""
    notices = list(startup_notices or [])
    trace_notice = setup_trace_log()
    if trace_notice is not None:
        notices.append(trace_notice)
    app = AgentApp(session, startup_notices=notices, resumed=resumed, pick_session=pick_session)
    from tui_agent.ui.terminal_guard import TerminalGuard, grace_from_env, journal_flusher

    # a lost terminal or a signal ends the process for sure: journal flushed, Bash's groups ended
    guard = TerminalGuard([journal_flusher(session), lambda: process_groups.end_all(0.2)], grace_from_env())
    app.terminal_guard = guard
    guard.attach(app)
    result = app.run_to_end()
    if app.unsent_note:
        print(app.unsent_note, file=sys.stderr)
    return result
