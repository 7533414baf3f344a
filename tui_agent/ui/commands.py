"""Slash commands: the UI's own (/help, /clear, /context, /theme, /model, /exit, /quit) plus the
engine's registry (`session.commands`: /permissions, /skills, /mcp, /init, /<skill>...).

One list feeds `/help`, the completion hints above the prompt and the command palette (Ctrl+P), so
the three can never disagree.
"""

from __future__ import annotations

import os
import textwrap
from typing import TYPE_CHECKING, Callable, Iterable

from textual.app import InvalidThemeError
from textual.app import SystemCommand

from tui_agent.ui.approval import ANSWERS
from tui_agent.ui.keys import key_rows

if TYPE_CHECKING:
    from tui_agent.ui.host import CommandHost
    from tui_agent.ui.widgets.prompt_area import PromptArea

UI_COMMANDS: list[tuple[str, str]] = [
    ("/help", "List commands and keys"),
    ("/clear", "Start over: empty history, chat and panel"),
    ("/context", "Focus the budget panel on the first row not sent as it is; count the next call exactly"),
    ("/continue", "Go on with a turn that stopped at the per-turn limit of model calls (--max-turns)"),
    ("/undo-steer", "Undo the last pin, exclude or expand made by hand (u in the panel's steering mode)"),
    ("/undo-compaction", "Take the last compaction event back, said with what it costs (u in the steering mode)"),
    ("/theme NAME", "Switch theme (no name lists them)"),
    ("/model NAME", "Switch the model for the next calls"),
    ("/exit", "Quit tui-agent"),
    ("/quit", "Quit tui-agent"),
    ("/export [FILE]", "Save the whole session as Markdown (or our JSONL for a .jsonl FILE)"),
    ("/resume", "Continue a saved session of this workspace (a picker; type to filter)"),
]
HELP_COLUMN = 18


def help_text(items: list[tuple[str, str]], width: int) -> str:
    """Commands, then keys, in two columns with a hanging indent, so wrapped descriptions stay in their column."""
    indent = " " * HELP_COLUMN
    lines = ["Commands:"]
    for usage, description in items:
        if len(usage) >= HELP_COLUMN - 1:  # a long usage gets its own line
            lines.append(usage)
            lines.append(textwrap.fill(description, width, initial_indent=indent, subsequent_indent=indent))
        else:
            lines.append(textwrap.fill(f"{usage:<{HELP_COLUMN}}{description}", width, subsequent_indent=indent))
    lines.append("Keys:")
    for key, description in key_rows():  # the bindings' own help (`keys.py`): what the keys really do
        lines.append(textwrap.fill(f"{key:<{HELP_COLUMN}}{description.replace('`', '')}", width,
                                   subsequent_indent=indent))
    return "\n".join(lines)


def command_list(screen: "CommandHost") -> list[tuple[str, str]]:
    """UI commands first, then the engine's, as (usage, description)."""
    items = list(UI_COMMANDS)
    ui_names = {name.split(" ")[0] for name, _ in UI_COMMANDS}
    for command in screen.session.commands.all():
        usage = f"/{command.name} {command.args_hint}".strip()
        if f"/{command.name}" not in ui_names:
            items.append((usage, command.description))
    return items


def enter_command(prompt: "PromptArea", choice: tuple[str, bool] | None, entered: str) -> None:
    """Enter on a bare `/word` (`entered`): submit the chosen command, or complete one that takes
    arguments. Keys typed after that Enter reached the prompt before this runs ("/context" then at once
    "explain…"): they stay in the prompt for the next line instead of being wiped by the completion."""
    now = prompt.text
    typed_since = now[len(entered):] if now.startswith(entered) else ""
    if choice is not None and choice[1]:
        prompt.complete_to(choice[0] + " " + typed_since)
        return
    prompt.complete_to(choice[0] if choice is not None else entered)
    prompt.submit()
    if typed_since:
        prompt.insert(typed_since)


async def run_command(screen: "CommandHost", line: str) -> None:
    """Run one `/command args` line typed into the prompt (or chosen in the palette)."""
    app, chat, session = screen.app, screen.chat, screen.session
    name, _, args = line.strip().partition(" ")
    name, args = name.lower(), args.strip()
    if name == "/help":
        # less the notice's padding and icon, and the scrollbar the long notice itself will bring
        bar = 0 if chat.scrollbars_enabled[0] else chat.styles.scrollbar_size_vertical
        width = max(chat.scrollable_content_region.width - 4 - bar, 40)
        await chat.add_notice(help_text(command_list(screen), width))
    elif name == "/clear":
        await screen.clear_conversation()
    elif name == "/context":
        screen.focus_panel()
        screen.panel.focus_first_difference()
        screen.panel.action_count_exact()
    elif name == "/continue":
        screen.continue_turn()
    elif name == "/undo-steer":
        screen.panel.steering.undo()  # the chat says what it did (`Steered`)
    elif name == "/undo-compaction":
        screen.panel.steering.undo_event()  # the chat and the panel say what it costs
    elif name == "/approve" and args.lower() in ANSWERS:  # an answer to the approval that waits (`approval.py`)
        screen.action_answer_approval(args)
    elif name == "/theme":
        if not args:
            names = ", ".join(sorted(app.available_themes))
            await chat.add_notice(f"Theme: {app.theme}. Available: {names}")
            return
        try:
            app.theme = args
        except InvalidThemeError:
            await chat.add_notice(f"Unknown theme {args!r}. /theme lists the available ones.", "error")
        else:
            await chat.add_notice(f"Theme: {args} (remembered for next time)")
    elif name == "/model":
        await _switch_model(screen, args)
    elif name == "/resume":
        from tui_agent.ui.session_actions import open_resume_picker

        await open_resume_picker(screen)
    elif name == "/export":
        from tui_agent.ui.session_actions import export_session

        await export_session(screen, args)
    elif name in ("/exit", "/quit"):
        await app.action_quit()
    elif name == "/summary" and args == "edit":
        await _edit_summary(screen)
    else:
        result = await session.commands.run(session, line)
        if result is None:
            await chat.add_notice(f"Unknown command {name}. Type /help to see the commands.", "error")
            return
        if result.text:
            await chat.add_notice(result.text, result.level)
        if result.prompt:
            screen.start_turn(result.prompt, shown=result.shown, after=result.after)


async def _edit_summary(screen: "CommandHost") -> None:
    """`/summary edit` alone: the draft in an editor modal; saved through the session."""
    from tui_agent.ui.screens.summary_editor import SummaryEditor

    chat, session = screen.chat, screen.session
    draft = session.summary_draft()
    if draft is None or draft.state in ("used", "stale"):
        await chat.add_notice("No summary draft to edit: /compact writes one.", "warning")
        return

    async def saved(text: str | None) -> None:
        if text is not None:
            told = session.edit_summary_draft(text)
            await chat.add_notice(told, "info" if told.startswith("Summary draft edited") else "warning")

    screen.app.push_screen(SummaryEditor(draft.line(), draft.text), saved)


async def _switch_model(screen: "CommandHost", name: str) -> None:
    chat, session = screen.chat, screen.session
    if not name:
        await chat.add_notice(f"Model: {session.provider.model}. Use /model NAME to switch.")
        return
    if session.running:
        await chat.add_notice("A turn is running; press Esc first, then switch the model.", "warning")
        return
    try:
        from tui_agent.core.agent.factory import provider_for_model  # lazy: may import a model SDK

        provider, notices = provider_for_model(name, os.environ, workspace=session.workspace)
    except Exception as error:  # noqa: BLE001 - a bad model name is a message, not a crash
        await chat.add_notice(f"Could not switch to {name}: {error}", "error")
        return
    await session.switch_model(provider)
    screen.update_title()
    from tui_agent.core.agent.budget_check import session_budget_notices

    for notice in notices + session_budget_notices(session):
        await chat.add_notice(notice.text, notice.level)
    await chat.add_notice(f"Model: {provider.model} (context window {provider.context_window:,} tokens)")


def palette_commands(screen: "CommandHost", themes: Iterable[str]) -> Iterable[SystemCommand]:
    """The slash commands as command-palette entries; ones that need an argument prefill the prompt."""
    def run(line: str) -> Callable[[], None]:
        return lambda: screen.run_line(line)

    def prefill(text: str) -> Callable[[], None]:
        return lambda: screen.prefill(text)

    for usage, help_ in command_list(screen):
        word = usage.split(" ")[0]
        if word == "/theme":
            for theme in sorted(themes):
                yield SystemCommand(f"/theme {theme}", f"Switch to the {theme} theme", run(f"/theme {theme}"))
        elif " " in usage:
            yield SystemCommand(usage, help_, prefill(word + " "))
        else:
            yield SystemCommand(usage, help_, run(word))
