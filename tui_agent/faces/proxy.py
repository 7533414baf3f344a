"""`tui-agent proxy`: put a recording reverse proxy between an agent and its model API.

`tui-agent proxy -- claude|codex [ARGS]` starts the agent through it with everything set so it behaves as it
does without us (`proxy_agent.py`), else point the agent at it yourself (`ANTHROPIC_BASE_URL` for Claude Code
and others, `-c openai_base_url=` for Codex): each request goes to the upstream unchanged, each answer streams
back as it arrives, and each exchange is recorded (`tui_agent/proxy/`). Without `--json` the watch face follows
the recording live (one step per call: the exact request beside the union of what the agent sent); with
`--json` one line per completed call goes to stdout. Start-up prints the lines to export on stderr. Like
`cli.py`, this module imports only the standard library at the top (aiohttp is imported when the proxy starts).
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import signal
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit


DEFAULT_PORT = 8787


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-agent proxy", usage="tui-agent proxy [options] [-- AGENT [ARGS...]]",
        epilog="With -- AGENT (claude, codex, or any agent that reads ANTHROPIC_BASE_URL/OPENAI_BASE_URL): the "
        "proxy starts the agent with everything set so it behaves as it does without the proxy, in this "
        "terminal, and exits with its exit code; the panel opens beside it (--panel).",
        description="A local reverse proxy for an agent's model calls: forwards each request unchanged to the "
        "API (Anthropic Messages, OpenAI Responses and Chat Completions), streams the answer back, and records "
        "each exchange (request body, usage, stop reason, status, timing; never a header) for watch and replay.")
    parser.add_argument("--port", type=int, default=None,
                        help="port to listen on (0: a free one; default 8787, a free one when it starts an agent)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--allow-remote", action="store_true",
                        help="allow a --host that is not loopback (anyone who reaches it can spend your keys)")
    parser.add_argument("--upstream", default=None, metavar="URL",
                        help="send every request here (default: the vendor's API for the request's path)")
    parser.add_argument("--json", action="store_true", help="print one JSON line per completed call, no face")
    parser.add_argument("--panel", choices=("auto", "tmux", "none"), default="auto",
                        help="with an agent (after --): the watch face in a tmux pane beside it (auto: when inside "
                        "tmux), or none (the command that opens it is printed)")
    parser.add_argument("--record-dir", type=Path, default=None, metavar="DIR",
                        help="where recordings go (default: the data dir's proxy/ folder)")
    parser.add_argument("--idle-timeout", type=float, default=75.0, metavar="SECONDS",
                        help="close a connection that sends no whole request head, stays idle, stalls its body or "
                        "stops reading its answer this long (default 75)")
    parser.add_argument("--context-window", type=int, default=None, metavar="TOKENS",
                        help="the model's context window the face measures against (default 200000)")
    return parser


def check_upstream(url: str) -> str | None:
    """Why `url` cannot be an upstream (None: it can), in one line."""
    if not url or url != url.strip() or any(ord(c) < 33 or ord(c) == 127 for c in url):
        return f"--upstream must be a URL without spaces or control characters (got {url!r})"
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"--upstream is not a URL (got {url!r})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"--upstream must be an http(s) URL with a host (got {url!r})"
    if parts.query or parts.fragment or parts.username or parts.password or "@" in parts.netloc:
        return "--upstream takes no query, fragment or credentials"
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port == -1 or parts.netloc.endswith(":") or port == 0:
        return f"--upstream has no valid port after its ':' (got {url!r}): give one in 1..65535, or none"
    return None


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def proxy_command(argv: list[str]) -> int:
    own, agent = (argv[: argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    args = build_parser().parse_args(own)
    args.port = args.port if args.port is not None else 0 if agent else DEFAULT_PORT
    if "--" in argv and not agent:
        return _error("-- takes the agent to start: tui-agent proxy -- claude")
    if problem := check_args(args, agent):
        return _error(problem)
    plan = None
    if agent:
        import shutil

        from tui_agent.faces.proxy_agent import plan_for

        if shutil.which(agent[0]) is None:
            print(f"error: {agent[0]}: command not found", file=sys.stderr)
            return 127
        plan = plan_for(agent, os.environ, args.upstream)
        if isinstance(plan, str):
            return _error(plan)
    if not is_loopback(args.host):
        say(f"warning: listening on {args.host}: anyone who reaches it can send requests with your agent's keys")
    from tui_agent.proxy.recorder import Recorder, new_recording
    from tui_agent.proxy.server import Limits

    folder = args.record_dir
    if folder is None:
        from tui_agent.core.paths import data_dir

        folder = data_dir() / "proxy"
    try:
        path = new_recording(folder)
    except OSError as error:
        return _error(f"cannot create a recording in {folder}: {error.strerror or error}")
    raise_open_files()
    recorder = Recorder(path, on_record=json_printer() if args.json else None)
    upstream = plan.upstream if plan is not None else args.upstream
    runner = ProxyThread(recorder, args.host, args.port, upstream, Limits(idle_timeout=args.idle_timeout),
                         plan.api_base if plan is not None else None)
    try:
        port = runner.start()
    except OSError as error:
        recorder.close()
        return _error(f"cannot listen on {args.host}:{args.port}: {error.strerror or error}")
    base = f"http://{args.host if ':' not in args.host else f'[{args.host}]'}:{port}"
    say(f"listening on {base}; recording to {path}")
    try:
        if plan is not None:
            from tui_agent.faces.proxy_agent import launch

            return launch(plan, base, path, args.panel)
        say(f"upstream: {args.upstream or 'the vendor API of each path (api.anthropic.com, api.openai.com)'}")
        print(f"export ANTHROPIC_BASE_URL={base}", file=sys.stderr)
        print(f"export OPENAI_BASE_URL={base}/v1", file=sys.stderr, flush=True)
        if args.json:
            return wait_for_signal()
        return run_face(path, args.context_window)
    finally:
        runner.stop()
        recorder.close()


def check_args(args: argparse.Namespace, agent: list[str]) -> str | None:
    """Why these flags cannot run (None: they can), in one line."""
    if not 0 <= args.port <= 65535:
        return f"--port must be 0..65535 (got {args.port})"
    if args.upstream and (problem := check_upstream(args.upstream)):
        return problem
    if not 0 < args.idle_timeout <= 86400:
        return f"--idle-timeout must be between 0 and 86400 seconds (got {args.idle_timeout:g})"
    if not is_loopback(args.host) and not args.allow_remote:
        return f"--host {args.host} is not loopback: add --allow-remote if you mean it"
    if agent and args.json:
        return "--json prints to the terminal the agent owns: follow the recording with tui-agent watch --json FILE"
    if not agent and args.panel != "auto":
        return "--panel goes with an agent to start: tui-agent proxy --panel tmux -- claude"
    return None


class ProxyThread:
    """The proxy's event loop on a thread of its own (the face or the signal wait keeps the main thread)."""

    def __init__(self, recorder, host: str, port: int, upstream: str | None, limits=None,  # noqa: ANN001
                 api_base: str | None = None) -> None:
        self.recorder, self.host, self.port, self.upstream, self.limits = recorder, host, port, upstream, limits
        self.api_base = api_base
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="tui-agent-proxy", daemon=True)

    def start(self) -> int:
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        return self.port

    def _run(self) -> None:
        import asyncio

        from tui_agent.proxy.server import serve

        loop = asyncio.new_event_loop()
        self.loop = loop
        try:
            self.runner, self.port = loop.run_until_complete(serve(self.recorder, self.host, self.port, self.upstream,
                                                                   self.limits, self.api_base))
        except BaseException as error:  # noqa: BLE001 - told to the starting thread
            self._error = error
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(self.runner.cleanup())
        loop.close()

    def stop(self) -> None:
        if self._thread.is_alive() and self._error is None:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=10)


def json_printer():  # noqa: ANN201 - a callable of a record
    """One JSON line per completed call. `kind` says what the replay makes of it (the same `CallSorter`):
    "step"; "compaction", a step whose request asks to compact (`compaction`: "server" for a Responses
    `compaction_trigger`, "summary" for the agent's own summary prompt); "side" (with `side_reason`); or
    "waiting" — a first request without tools, which the next request decides (the title some agents ask
    for before their first real call); null for a failed call. `compacted`: the first step after the agent
    compacted (its request starts again from the compacted copy)."""
    from tui_agent.core.recordings.proxy_requests import asks_compaction
    from tui_agent.core.recordings.side_calls import CallSorter

    lock = threading.Lock()
    sorter = CallSorter()

    def emit(record: dict) -> None:
        if not record.get("call"):
            return  # count_tokens and model lists: exchanges, not calls
        request = record.get("request") if isinstance(record.get("request"), dict) else {}
        messages = request.get("messages", request.get("input"))
        began = bool(sorter.step_calls)
        steps = [s for s in sorter.add(record) if s.record is record]
        side = sorter.side[-1].why if sorter.side and sorter.side[-1].call == record["call"] else None
        asks = asks_compaction(str(record.get("api")), request) if steps else None
        kind = "side" if side else ("compaction" if asks else "step") if steps else (
            "waiting" if sorter.waiting is not None and sorter.waiting.record is record else None)
        line = {"call": record["call"], "api": record["api"], "model": record.get("model"),
                "messages": len(messages) if isinstance(messages, list) else None, "usage": record.get("usage"),
                "status": record.get("status"), "ms": record.get("ms"), "ttfb_ms": record.get("ttfb_ms"),
                "stop_reason": record.get("stop_reason"), "outcome": record.get("outcome"), "kind": kind,
                "side_reason": side, "compaction": asks, "compacted": bool(steps and began and not steps[0].extends)}
        with lock:
            try:
                sys.stdout.write(json.dumps(line) + "\n")
                sys.stdout.flush()
            except (BrokenPipeError, ValueError):
                pass

    return emit


def wait_for_signal() -> int:
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def run_face(path: Path, context_window: int | None) -> int:
    """The watch face on the recording, live; the proxy stops when the face is closed."""
    from tui_agent.core.recordings.strategy_table import default_policy
    from tui_agent.ui.watch_app import run_watch
    from tui_agent.core.recordings.log_source import LogSource

    policy = default_policy(context_window) if context_window else default_policy()
    return run_watch(LogSource(path, False, False), path, policy)


def raise_open_files() -> None:
    """The soft limit of open files raised to the hard one: each connection holds two (the agent's and its
    upstream's), and a burst of hundreds must not be refused (the common soft limit is 1024)."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        if soft != resource.RLIM_INFINITY and soft < wanted:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (ImportError, ValueError, OSError):
        pass


def say(line: str) -> None:
    print(f"proxy: {line}", file=sys.stderr, flush=True)


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2
