"""The command line's session parts: `--continue`, `--resume [ID]`, `--print-outbound`, and the
`tui-agent sessions` / `tui-agent export` subcommands (rows of `faces/table.FACES`).

Kept apart from `arguments.py` so the argument parser there stays a list of flags; like it, this module
imports only cheap standard-library modules at the top (`--version` must stay fast); the journal code
loads when a session flag is used.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
TYPE_CHECKING = False  # (not `typing`: its import costs start-up time, and annotations are strings here)
if TYPE_CHECKING:
    from typing import Callable

    from tui_agent.core.events import Notice
    from tui_agent.core.journal.reader import JournalLoad
    from tui_agent.core.agent.session import Session


def add_session_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-c", "--continue", dest="continue_", action="store_true",
                        help="continue the latest session in this workspace")
    parser.add_argument("--resume", nargs="?", const="", default=None, metavar="ID",
                        help="resume session ID (a unique prefix is enough); without ID the TUI shows a picker")
    parser.add_argument("--print-outbound", action="store_true",
                        help="print the exact JSON body of the next model call (with -p: of the call that "
                        "prompt would start) and exit; nothing is sent or saved")


# -- resume ------------------------------------------------------------------------------------
class Resume:
    """What the session flags ask for (a plain class: `dataclasses` costs start-up time here)."""

    def __init__(self, load: "JournalLoad | None" = None, pick: bool = False) -> None:
        self.load = load  # None: a new session
        self.pick = pick  # bare --resume in the TUI: show the picker


def resolve_resume(args: argparse.Namespace, workspace: Path, headless: bool) -> Resume | None:
    """What `--continue` / `--resume` ask for, or None after printing a one-line error."""
    if not args.continue_ and args.resume is None:
        return Resume()  # a new session: the journal's reader is not needed (nor imported before the first frame)
    from tui_agent.core.journal import JournalError
    from tui_agent.core.journal.reader import read_journal
    from tui_agent.core.journal.store import find_session, latest_session

    if args.continue_ and args.resume is not None:
        return _error("use either --continue or --resume, not both")
    if args.transcript is not None:
        return _error("--transcript starts a new session; it cannot be combined with --continue or --resume")
    try:
        if args.continue_:
            latest = latest_session(workspace)
            if latest is None:
                return _error(f"no saved session in {workspace} to continue (tui-agent sessions lists them)")
            return Resume(read_journal(latest.path))
        if args.resume is not None:
            if not args.resume:
                if headless:
                    return _error("--resume needs a session ID with -p (tui-agent sessions lists them)")
                return Resume(pick=True)
            return Resume(read_journal(find_session(args.resume)))
    except JournalError as error:
        return _error(str(error))
    return Resume()


def model_for(args: argparse.Namespace, load: "JournalLoad | None") -> tuple[str | None, str | None]:
    """(model, provider) for the session: the flags win, else what the resumed session last used."""
    if load is None or args.model or args.provider:
        return args.model, args.provider
    if load.provider == "demo" or load.model == "demo":
        return "demo", None
    # the same endpoint too: with both keys set, a DeepSeek session must not resume on Claude
    from tui_agent.core.providers.config import PROVIDER_NAMES  # cheap: imports no SDK

    return (load.model or None), (load.provider if load.provider in PROVIDER_NAMES else None)


def workspace_for(args: argparse.Namespace, load: "JournalLoad | None", default: Path) -> Path:
    """A resumed session runs in its own workspace (unless -C says otherwise and it still exists). Only
    the data dir's own journals are believed: a file from elsewhere runs in the current workspace."""
    from tui_agent.core.paths import is_own_journal

    if load is None or args.cwd is not None or not is_own_journal(load.path, load.session_id):
        return default
    recorded = Path(load.header.workspace)
    return recorded if recorded.is_dir() else default


def journal_hook(load: "JournalLoad | None", source: str | None = None,
                 view: bool = False) -> Callable[["Session"], list["Notice"]]:
    """What to do with a built session: restore `load` and keep journaling, or journal it from the start
    (`view`: a loaded transcript, saved only once the user sends something)."""

    def attach(session: "Session") -> list["Notice"]:
        from tui_agent.core.events import Notice
        from tui_agent.core.journal.writer import start_journal

        try:
            if load is not None:
                from tui_agent.core.journal.resume import resume_journaled  # only to resume: not for a new session

                return resume_journaled(session, load)[1]
            start_journal(session, source=source, view=view)
        except OSError as error:
            return [Notice(f"This session is not saved: the journal could not be opened ({error}).", "warning")]
        return []

    return attach


# -- print-outbound ----------------------------------------------------------------------------
def print_outbound(session: "Session", prompt: str | None, out=None) -> int:
    """Start the session's tools (MCP servers add theirs), print the next body, shut down."""
    import asyncio

    from tui_agent.core.agent.outbound import format_body, next_outbound_body
    from tui_agent.core.sanitize import escape_json_controls

    out = out or sys.stdout

    async def run() -> str:
        try:
            for notice in await session.start_background():
                print_notice(notice)
            # the same JSON, but a C1 control in a file's text (CSI `\x9b`) reaches the terminal escaped
            return escape_json_controls(format_body(next_outbound_body(session, prompt)))
        finally:
            await session.aclose()

    text = asyncio.run(run())
    if not session.history and prompt is None:
        print("note: the session has no messages yet; pass -p PROMPT to see its first call", file=sys.stderr)
    out.write(text + "\n")
    out.flush()
    return 0


def print_notice(notice: "Notice") -> None:
    """A notice on stderr: its text can hold a journal header's id or a file name, so no controls."""
    from tui_agent.core.sanitize import strip_controls

    print(strip_controls(f"[{notice.level}] {notice.text}"), file=sys.stderr)


# -- subcommands -------------------------------------------------------------------------------
def sessions_command(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="tui-agent sessions",
                                     description="List saved sessions, newest activity first.")
    parser.add_argument("--all", action="store_true", help="every workspace (default: this one)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("-C", "--cwd", type=Path, default=None, metavar="DIR", help="workspace (default: current directory)")
    args = parser.parse_args(argv)
    import json

    from tui_agent.core.paths import sessions_dir
    from tui_agent.core.journal.store import list_sessions

    from tui_agent.core.sanitize import escape_json_controls, strip_controls

    workspace = None if args.all else (args.cwd or Path.cwd()).resolve()
    skipped: list[str] = []
    sessions = list_sessions(workspace, warnings=skipped)
    for problem in skipped:
        print(strip_controls(f"warning: {problem}"), file=sys.stderr)
    if not sessions:
        where = "" if workspace is None else f" for {workspace}"
        print(f"no saved sessions{where} (they live in {sessions_dir()})", file=sys.stderr)
        return 0
    for info in sessions:
        if args.json:
            print(escape_json_controls(json.dumps({"id": info.session_id, "path": str(info.path), "workspace": info.workspace,
                              "model": info.model, "started": info.started, "last_activity": info.last_activity,
                              "messages": info.messages, "tokens": info.tokens, "first_prompt": info.first_prompt,
                              "parent": info.parent}, ensure_ascii=False)))
        else:
            print(strip_controls(info.line() + (f"  [{info.workspace}]" if workspace is None else "")))
    return 0


def export_command(argv: list[str]) -> int:
    from tui_agent.core.journal.export import FORMATS

    parser = argparse.ArgumentParser(prog="tui-agent export",
                                     description="Print a saved session as Markdown or as our JSONL journal.")
    parser.add_argument("id", metavar="ID", help="session id (a unique prefix), or a journal file")
    parser.add_argument("--format", choices=FORMATS, default="md")
    parser.add_argument("-o", "--output", type=Path, metavar="FILE", help="write to FILE instead of stdout")
    args = parser.parse_args(argv)
    from tui_agent.core.journal import JournalError
    from tui_agent.core.journal.export import export_jsonl, markdown_of
    from tui_agent.core.journal.reader import read_journal
    from tui_agent.core.journal.store import find_session

    try:
        load = read_journal(find_session(args.id))
    except JournalError as error:
        return _error(str(error)) or 2
    from tui_agent.core.sanitize import escape_json_controls, strip_controls

    for warning in load.warnings:
        print(strip_controls(f"warning: {warning}"), file=sys.stderr)
    text = markdown_of(load) if args.format == "md" else export_jsonl(load)
    if args.output is None:
        # Standard output ends on a terminal more often than not (`| less -R`, `| head`): escape sequences
        # from file contents or model text would act on it (window title, clipboard). Markdown loses its
        # control characters, JSONL gets them as \u escapes (the same JSON); `-o FILE` keeps the text as is.
        sys.stdout.write(strip_controls(text) if args.format == "md" else escape_json_controls(text))
        return 0
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as error:
        return _error(f"cannot write {args.output}: {error.strerror or error}") or 2
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _error(message: str) -> None:
    from tui_agent.core.sanitize import strip_controls

    print(strip_controls(f"error: {message}"), file=sys.stderr)  # (it may quote an id or a file name)
    return None
