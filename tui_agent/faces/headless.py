"""Headless mode (`-p`): one request, the answer streamed to stdout, tool activity and notices to stderr.

Everything printed passes through `strip_controls` (core/sanitize.py): the answer, file contents in
error lines and server warnings are untrusted, and an OSC 52 sequence on stderr would write the user's
clipboard. The history itself is untouched.

Exit codes (`tui_agent.faces.exit_codes`): 0 answered; 1 error (one line on stderr); 2 usage error; 3 stopped at
--max-turns; 4 a tool call was denied; 130 interrupted. Trace lines (`TRACE=1`) go to stderr.
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import sys
from pathlib import Path
from typing import Callable, Mapping, TextIO

from tui_agent.faces import exit_codes
from tui_agent.core import events as ev
from tui_agent.core.agent.event_wire import WireView, read
from tui_agent.core.shell import process_groups
from tui_agent.core.agent.door import SessionOptions, SessionRefused, open_session
from tui_agent.core.sanitize import strip_controls
from tui_agent.core.agent.session import Session
from tui_agent.core.formats import plural


class SafeStream:
    """A text stream that drops control characters (ESC, CSI, OSC, BEL, CR...) from everything written."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(strip_controls(text))

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name: str):  # isatty, encoding, fileno...
        return getattr(self.stream, name)


def safe(stream: TextIO) -> TextIO:
    return stream if isinstance(stream, SafeStream) else SafeStream(stream)  # type: ignore[return-value]


def tool_status(event: WireView) -> str:
    """`[tool] Read: src/app.py` (the seed's status line, in English), from a `ToolStarted`'s wire form."""
    return f"[tool] {event['name']}: {event['summary']}" if event["summary"] else f"[tool] {event['name']}"


def tool_error_status(event: WireView) -> str | None:
    """A failed tool's one line, from a `ToolFinished`'s wire form (None: it did not fail)."""
    if not event["is_error"]:
        return None
    content = event["content"]
    text = content if isinstance(content, str) else str(content)
    first = " ".join(text.split())
    return f"[tool] {event['name']} error — {first[:80]}{'…' if len(first) > 80 else ''}"


async def consume(session: Session, prompt: str, out: TextIO, err: TextIO) -> ev.TurnEnded | None:
    """Print one turn's events, then the budget line (the panel's figures); return the TurnEnded event."""
    out, err = safe(out), safe(err)
    for notice in await session.start_background():
        print(f"[{notice.level}] {notice.text}", file=err, flush=True)
    earlier = list(session.usage_history)  # a continued session's calls before this run
    calls_before = len(session.ledger.calls)
    counted_before = session.ledger.cost  # a continued session's pings, fed back by the resume
    ended = await _consume(session, prompt, out, err)
    if len(session.ledger.calls) > calls_before:  # the session's own ledger: the figures the panel draws
        line = session.ledger.summary_line(_earlier_cost(session.provider.model, earlier, counted_before),
                                           counted_before)
        print(f"[budget] {line}", file=err, flush=True)
    return ended


def _earlier_cost(model: str, usages: list[ev.Usage], pings_usd: float) -> float | None:
    """What the session's calls before this run cost (None: it has no earlier calls or pings, or one has no
    price). Its resumed pings are already in the ledger (`pings_usd`): they count for the session only."""
    from tui_agent.core.providers.base import UsageInfo
    from tui_agent.core.models import cost_usd

    costs = [cost_usd(model, UsageInfo.of(u)) for u in usages]
    if None in costs or not (costs or pings_usd):
        return None
    return sum(c for c in costs if c is not None)


async def _consume(session: Session, prompt: str, out: TextIO, err: TextIO) -> ev.TurnEnded | None:
    ended: ev.TurnEnded | None = None
    at_line_start = True
    async for event in session.run_turn(prompt):
        wire = read(event)  # (the event's wire form, kind and fields: core/agent/event_wire.py)
        kind = wire.kind
        if kind == "TextDelta":
            text = wire["text"]
            out.write(text)
            out.flush()
            at_line_start = text.endswith("\n")
        elif kind == "AssistantMessage":
            if not at_line_start:
                out.write("\n")
                out.flush()
                at_line_start = True
        elif kind == "ToolStarted":
            print(tool_status(wire), file=err, flush=True)
        elif kind == "ToolFinished":
            line = tool_error_status(wire)
            if line:
                print(line, file=err, flush=True)
        elif kind == "Notice":
            print(f"[{wire['level']}] {wire['text']}", file=err, flush=True)
        elif kind in ("ServerEdited", "CacheMissed") and wire.get("since") is None:
            # what the server did, why the cache missed (a clearing that goes on was told when it began)
            print(f"[info] {wire.source.line()}", file=err, flush=True)
        elif kind == "TurnEnded":
            ended = event
    return ended


_freeze_registered = False


def freeze_heap_at_exit() -> None:
    """Freeze the heap when the interpreter exits, so its final garbage collection skips it.

    After a turn the process holds the SDK's thousands of pydantic classes and the whole history; the
    collection Python runs while it shuts down walks all of it for nothing (the OS frees the memory at
    once) and took about a second after the answer was printed (bench/bench_turn.py's "exit").
    """
    global _freeze_registered
    if not _freeze_registered:
        _freeze_registered = True
        atexit.register(gc.freeze)


def load_sdk_with_gc_paused(session: Session) -> None:
    """Wait for what the model call needs (the `anthropic` SDK, started in a thread at process start by
    cli.py; or the OpenAI SDK) before the turn, with the cyclic garbage collector paused.

    The import creates hundreds of thousands of objects that live as long as the process (the SDK's
    pydantic classes); the collections they trigger walk them again and again for nothing. Paused, the
    import took about an eighth less (bench/bench_turn.py "start-up", where the SDK is most of it). Then
    everything start-up made is frozen (moved out of the collector's generations): the turn's first
    collections walked it all again, about 150 ms. The collector is back on before the turn starts.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        session.provider.preload()
    except ImportError:
        pass  # the model call reports what is missing in its one-line error
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def run_headless(
    prompt: str,
    *,
    workspace: Path,
    model: str | None = None,
    provider: str | None = None,
    max_turns: int | None = None,
    allow_write: bool | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    history: list | None = None,
    context_window: int | None = None,
    max_output_tokens: int | None = None,
    compact=None,
    prepare: Callable[[Session], list[ev.Notice]] | None = None,
    trust_project_mcp: bool = False,
    written_by: Mapping[int, str] | None = None,
) -> int:
    """One prompt answered headless; the keyword arguments are `SessionOptions`' (`prepare`: the CLI's
    journal hook, run once the session is built)."""
    options = SessionOptions(workspace=workspace, face="headless", model=model, provider=provider, headless=True,
                             allow_write=allow_write, max_turns=max_turns, context_window=context_window,
                             max_output_tokens=max_output_tokens, compact=compact, trust_project_mcp=trust_project_mcp,
                             history=tuple(history or ()), written_by=written_by or {},
                             prepare=(prepare,) if prepare is not None else ())
    return run_headless_with(prompt, options, out=out, err=err)


def run_headless_with(prompt: str, options: SessionOptions, *, out: TextIO | None = None,
                      err: TextIO | None = None) -> int:
    """`run_headless` for a face that already holds its `SessionOptions`."""
    out = safe(out or sys.stdout)
    err = safe(err or sys.stderr)
    try:
        opened = open_session(options)
    except SessionRefused as refused:  # before anything runs or is saved: no call could fit
        print(f"error: {refused}", file=err, flush=True)
        return exit_codes.USAGE
    session = opened.session
    for notice in opened.notices:
        print(f"[{notice.level}] {notice.text}", file=err, flush=True)
    load_sdk_with_gc_paused(session)

    async def run() -> ev.TurnEnded | None:
        try:
            return await consume(session, prompt, out, err)
        finally:
            await session.aclose()

    process_groups.install_signal_handlers()  # SIGTERM/SIGHUP: end what Bash started, then die of the signal
    freeze_heap_at_exit()
    try:
        ended = asyncio.run(run())
    except KeyboardInterrupt:
        print("\ninterrupted", file=err, flush=True)
        return exit_codes.INTERRUPTED
    from tui_agent.core.journal.writer import journal_problem

    problem = journal_problem(session)
    if problem:
        print(f"[warning] {problem}", file=err, flush=True)
    if ended is None:
        print("error: the turn ended without a result", file=err)
        return exit_codes.ERROR
    if ended.reason == "completed":
        return exit_codes.OK
    if ended.reason == "error":
        print(f"error: {ended.error}", file=err, flush=True)
        # refused before any call (too large for the window, empty): bad input, nothing ran or was saved
        return exit_codes.USAGE if ended.turn_calls == 0 else exit_codes.ERROR
    if ended.reason == "max_turns":
        print(f"stopped after {plural(ended.turn_calls, 'model call')} (the per-turn limit, --max-turns); "
              "`--continue -p` with a prompt goes on", file=err, flush=True)
        return exit_codes.MAX_TURNS
    if ended.reason == "denied":
        print("stopped: a tool call was denied (use --allow-write or ALLOW_WRITE=1 to allow changes)", file=err,
              flush=True)
        return exit_codes.DENIED
    print(f"stopped: {ended.reason}", file=err, flush=True)
    return exit_codes.ERROR
