"""The TUI's session commands: `/resume` (the picker, then the resumed conversation on screen) and
`/export [FILE]`. The engine does the work (`core.journal`); this module only shows it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.core.messages import blocks, is_user_text, text_of
from tui_agent.core.formats import plural

if TYPE_CHECKING:
    from tui_agent.core.journal.reader import JournalLoad
    from tui_agent.ui.host import CommandHost

SHOW_LAST = 30  # messages of a resumed conversation redrawn in the chat (the panel lists them all)


async def open_resume_picker(screen: "CommandHost") -> None:
    from tui_agent.core.journal.store import list_sessions
    from tui_agent.ui.screens.resume_picker import ResumePicker

    sessions = [s for s in list_sessions(screen.session.workspace) if s.session_id != screen.session.session_id
                or not screen.session.history]
    screen.app.push_screen(ResumePicker(sessions), callback=lambda info: _picked(screen, info))


def _picked(screen: "CommandHost", info) -> None:
    if info is not None:
        screen.run_worker(resume_path(screen, info.path), group="command")


async def resume_path(screen: "CommandHost", path: Path) -> None:
    from tui_agent.core.journal import JournalError
    from tui_agent.core.journal.reader import read_journal

    try:
        load = read_journal(path)
    except JournalError as error:
        await screen.chat.add_notice(f"Cannot resume: {error}", "error")
        return
    await resume_load(screen, load)


async def resume_load(screen: "CommandHost", load: "JournalLoad") -> None:
    """Stop any turn, switch to the session's model, restore it, and redraw chat and panel."""
    from tui_agent.core.journal.resume import reopen

    session, chat = screen.session, screen.chat
    await screen.stop_turn()
    notices = []
    if load.model and load.model != session.model:
        try:
            from tui_agent.core.agent.factory import provider_for_model

            name = "demo" if load.provider == "demo" else load.model
            provider, notices = provider_for_model(name, os.environ, workspace=session.workspace)
            await session.switch_model(provider)
        except Exception as error:  # noqa: BLE001 - keep the current model, say why
            await chat.add_notice(f"Could not switch to {load.model}: {error}", "warning")
    _, restored = reopen(session, load)
    await chat.clear_all()
    await show_restored(screen, restored + notices)


async def show_restored(screen: "CommandHost", notices) -> None:
    """Draw the last messages of a restored history, replay its usage into the panel (cost, meter) and
    show the plan of the next call at once."""
    session, chat, panel = screen.session, screen.chat, screen.panel
    history = session.history
    start = max(0, len(history) - SHOW_LAST)
    if start:
        await chat.add_notice(f"{plural(start, 'earlier message')} {'is' if start == 1 else 'are'} not redrawn here; the budget panel lists them all.")
    results = {b.get("tool_use_id"): b for m in history[start:] if m.get("role") == "user"
               for b in blocks(m) if b.get("type") == "tool_result"}
    for message in history[start:]:
        if message.get("role") == "user" and is_user_text(message):
            await chat.add_user(text_of(message))
        elif message.get("role") == "assistant":
            text = text_of(message)
            if text.strip():
                reply = await chat.add_reply()
                reply.text = text
                await reply.update(text)
            for block in blocks(message):
                if block.get("type") == "tool_use":
                    await _restored_card(screen, block, results.get(block.get("id")))
    for notice in notices:
        await chat.add_notice(notice.text, notice.level)
    panel.sync_history()
    panel.replay_usage(session.usage_history, session.resumed_calls)
    screen.update_title()


async def _restored_card(screen: "CommandHost", use: dict, result: dict | None) -> None:
    """A resumed tool call as the card it was (opens to its result), not a "(5 tool calls)" line."""
    from tui_agent.ui.budget_model import key_input
    from tui_agent.ui.widgets.tool_card import ToolCard

    name, tool_input = str(use.get("name", "")), use.get("input") or {}
    tool = screen.session.tools.get(name)
    try:
        summary = tool.summary(tool_input) if tool is not None else key_input(tool_input)
    except Exception:  # noqa: BLE001 - a recorded input the tool no longer accepts: show the raw key
        summary = key_input(tool_input) if isinstance(tool_input, dict) else ""
    card = await screen.chat.add_tool(ToolCard(str(use.get("id", "")), name, summary, show_duration=False))
    if result is None:
        card.cancel()  # the journal has no result: the call never finished
        return
    content = result.get("content", "")
    shown = content if isinstance(content, str) else "".join(
        b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    card.finish(content, bool(result.get("is_error")), None, len(shown))


async def export_session(screen: "CommandHost", target: str) -> None:
    """`/export [FILE]`: Markdown (or our JSONL when FILE ends in .jsonl) of the whole session."""
    from tui_agent.core.journal import JournalError
    from tui_agent.core.journal.export import export_jsonl, export_markdown, markdown_of
    from tui_agent.core.journal.reader import read_journal
    from tui_agent.core.journal.writer import journal_of

    session, chat = screen.session, screen.chat
    if not session.history:
        await chat.add_notice("Nothing to export yet: the conversation is empty.", "warning")
        return
    from tui_agent.core.paths import ensure_dir, exports_dir

    journal = journal_of(session)
    if target:
        path = Path(target).expanduser()
        if not path.is_absolute():
            path = session.workspace / path
    else:  # no name: the data dir (a file in the repository would be committed by accident), said below
        path = exports_dir() / f"tui-agent-{session.session_id or 'session'}.md"
        try:
            ensure_dir(path.parent)
        except OSError as error:
            await chat.add_notice(f"Cannot create {path.parent}: {error.strerror or error}", "error")
            return
    load = None
    if journal is not None and journal.path.is_file():
        try:
            load = read_journal(journal.path)
        except JournalError:
            load = None
    if path.suffix == ".jsonl":
        if load is None:
            await chat.add_notice("This session has no journal to export as JSONL; use a .md file name.", "error")
            return
        text = export_jsonl(load)
    else:
        text = markdown_of(load) if load is not None else export_markdown(session.history, title="tui-agent session")
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        await chat.add_notice(f"Cannot write {path}: {error.strerror or error}", "error")
        return
    where = "" if target else " (the data dir; /export FILE writes elsewhere)"
    await chat.add_notice(f"Exported {plural(len(session.history), 'message')} to {path}{where}")


async def restore_unsent(screen: "CommandHost") -> None:
    """Prompts still queued when the user last quit (`AgentApp.keep_unsent`): in the prompt history now (↑),
    said once."""
    app = screen.app
    state = getattr(app, "ui_state", None)
    if state is None or not state.unsent:
        return
    texts, state.unsent = state.unsent, []
    screen.prompt.input_history.extend(texts)
    state.save(getattr(app, "config_base", None))
    which = "prompt" if len(texts) == 1 else f"{len(texts)} prompts"
    await screen.chat.add_notice(f"The {which} queued when you last quit {'was' if len(texts) == 1 else 'were'} "
                                 "not sent: ↑ on the prompt brings it back.", "warning")
