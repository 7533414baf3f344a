"""Benchmark: one long agentic turn, `tui-agent -p` beside Claude Code `-p`, on the same fake model.

Run: `.venv/bin/python bench/bench_turn.py [--runs N] [--profile]`. Target: our turn ≤ 0.8× Claude Code's.

The workload: 40 Reads of 12k-character files, then an answer. Both agents talk real HTTP + SSE to the fake
Anthropic server of `tests/fakes/` (`ANTHROPIC_BASE_URL`, a dummy key), whose "model" asks for the next file
by the `toolu_read_N` ids it finds in the request, so both get the same 40 tool calls (Claude Code's Read
takes `file_path`, like ours). We run with a 100k window (so our compaction works); Claude Code uses its own.
Runs alternate in one process because these machines are noisy: medians and the ratio are what count.

Besides the wall time, the server's clock splits each turn into: start-up (launch → first request), model
time (request → last SSE chunk written, the fake's own cost), client time per call (last chunk of one reply →
the next request: HTTP + SSE parsing, tools, compaction, journal, events) and the exit (last reply → process gone).
`--profile` runs ours once more under cProfile and prints where our per-call time goes.
"""

from __future__ import annotations

import argparse
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_claude_code import claude_code_home, find_claude_code  # noqa: E402
from tests.fakes.fake_anthropic import FakeAnthropic, reader_model, stream_reply, text  # noqa: E402
from tests.fakes.http import Reply  # noqa: E402

FILES, FILE_CHARS, WINDOW = 40, 12_000, 100_000
KEY = "sk-ant-api03-bench-dummy-key-0000000000000000000000"
MODEL = "claude-sonnet-4-5"
SHORT_PROMPT = "hello there"
PROMPT = f"Read every file in data/ (f00.py to f{FILES - 1:02d}.py) one by one, then say how many you read."
EXE = Path(sys.executable).with_name("tui-agent")


@dataclass
class Timeline:
    """Server-side clock of one turn: when each request arrived, when its reply's last chunk went out."""

    arrived: list[float] = field(default_factory=list)
    finished: list[float] = field(default_factory=list)
    main_calls: int = 0
    side_calls: int = 0


class BenchServer(FakeAnthropic):
    """The fake API with a clock. Claude Code's requests carry fields our validator does not know
    (it is strict for our sake), so only ours are validated; the replies are the same for both."""

    def __init__(self, files: list[str]) -> None:
        super().__init__(model=reader_model(files), api_key=KEY)
        # Each SSE event is its own small write: with Nagle's algorithm on, the tail of every reply waited
        # for the client's delayed ACK (about 40 ms a call, for both agents alike). A real API does not.
        self.server.RequestHandlerClass.disable_nagle_algorithm = True
        self.timeline = Timeline()
        self.lock2 = threading.Lock()

    def handle(self, path: str, headers: dict[str, str], body: Any, raw: bytes) -> Reply:
        now = time.perf_counter()
        if "claude-cli" not in headers.get("user-agent", "") or not path.startswith("/v1/messages"):
            reply = super().handle(path, headers, body, raw)
        elif path.split("?")[0].endswith("count_tokens"):
            reply = Reply(json_body={"input_tokens": len(raw) // 4})
        else:
            reply = self._claude_code_reply(body)
        if reply.chunks is None:
            return reply
        main = isinstance(body, dict) and any(t.get("name") == "Read" for t in body.get("tools") or [])
        with self.lock2:
            if main:
                self.timeline.main_calls += 1
                self.timeline.arrived.append(now)
            else:
                self.timeline.side_calls += 1
        reply.chunks = self._timed(reply.chunks, main)
        return reply

    def _claude_code_reply(self, body: dict[str, Any]) -> Reply:
        if not any(t.get("name") == "Read" for t in body.get("tools") or []):
            return stream_reply(text("ok"))  # a side request (title, topic...): answer and move on
        return stream_reply(self.model(body), usage={"input_tokens": len(str(body)) // 4})

    def _timed(self, chunks: list[bytes], main: bool):
        yield from chunks
        if main:
            with self.lock2:
                self.timeline.finished.append(time.perf_counter())


@dataclass
class Run:
    wall: float
    startup: float
    model: float
    client: float
    exit: float
    calls: int
    side: int
    reads: int

    @property
    def per_call_ms(self) -> float:
        return self.client / max(self.calls - 1, 1) * 1000


def workspace() -> tuple[Path, list[str]]:
    root = Path(tempfile.mkdtemp(prefix="bench-turn-"))
    (root / "data").mkdir()
    files = []
    for i in range(FILES):
        line = f"def function_{i}_{{n}}(value):  # file {i}, a line of about sixty characters\n"
        body, n = [], 0
        while sum(map(len, body)) < FILE_CHARS:
            body.append(line.format(n=n))
            n += 1
        path = root / "data" / f"f{i:02d}.py"
        path.write_text("".join(body)[:FILE_CHARS])
        files.append(str(path))
    return root, files


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and not k.startswith(("ANTHROPIC_", "OPENAI_", "CLAUDE_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's Python caches bytecode (see bench_startup.py)
    env.update(ANTHROPIC_API_KEY=KEY, **extra)
    return env


def ours_command(ws: Path, python_args: list[str] | None = None, prompt: str = PROMPT) -> list[str]:
    """`tui-agent -p`; with `python_args` (even empty) as `python [ARGS] -m tui_agent`, which is also how a
    baseline tree on PYTHONPATH runs (an older tree may not have the console script's module)."""
    head = [sys.executable, *python_args, "-m", "tui_agent"] if python_args is not None else [str(EXE)]
    return [*head, "-p", prompt, "--model", MODEL, "--context-window", str(WINDOW),
            "--max-turns", str(FILES + 5), "-C", str(ws)]


def run_once(command: list[str], env: dict[str, str], ws: Path, files: list[str]) -> Run:
    """One turn; with no files it is one short call (the model answers at once)."""
    server = BenchServer(files)
    with server:
        env = {**env, "ANTHROPIC_BASE_URL": server.base_url}
        start = time.perf_counter()
        out = subprocess.run(command, cwd=ws, env=env, capture_output=True, text=True, timeout=300,
                             stdin=subprocess.DEVNULL)
        end = time.perf_counter()
    if out.returncode != 0 or server.violations:
        raise SystemExit(f"{command[0]} failed ({out.returncode}): {out.stderr[-800:]} {server.violations[:3]}")
    line = server.timeline
    if len(line.arrived) != len(files) + 1 or f"I read {len(files)} files." not in out.stdout:
        raise SystemExit(f"{command[0]}: {len(line.arrived)} model calls, answer {out.stdout[-200:]!r}")
    model = sum(f - a for a, f in zip(line.arrived, line.finished))
    client = sum(a - f for f, a in zip(line.finished, line.arrived[1:]))
    return Run(wall=end - start, startup=line.arrived[0] - start, model=model, client=client,
               exit=end - line.finished[-1], calls=len(line.arrived), side=line.side_calls, reads=len(files))


def profile_ours(ws: Path, files: list[str], env: dict[str, str]) -> None:
    """One turn of ours under cProfile (in a child process), grouped by where the time goes."""
    target = Path(tempfile.mkdtemp()) / "turn.prof"
    run_once(ours_command(ws, ["-m", "cProfile", "-o", str(target)]), env, ws, files)
    stats = pstats.Stats(str(target))
    groups = {"HTTP (anthropic SDK, httpx2)": ("anthropic", "httpx", "httpcore", "h11", "pydantic", "jiter"),
              "compaction": ("tui_agent/core/compaction",), "journal": ("tui_agent/core/journal",),
              "events / budget": ("tui_agent/core/events", "tui_agent/core/agent/budget", "tui_agent/faces/headless"),
              "tools": ("tui_agent/core/tools",), "loop / session": ("tui_agent/core/loop", "tui_agent/core/session")}
    own: dict[str, float] = {name: 0.0 for name in groups}
    for (filename, _, _), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        for name, parts in groups.items():
            if any(part in filename for part in parts):
                own[name] += tottime
                break
    print("\nour turn under cProfile (own time per group, whole process; cProfile slows everything down):")
    for name, seconds in sorted(own.items(), key=lambda kv: -kv[1]):
        print(f"  {name:24s} {seconds * 1000:7.0f} ms   {seconds / FILES * 1000:6.1f} ms per call")
    stats.sort_stats("cumulative").print_stats(r"tui_agent", 25)


def describe(name: str, runs: list[Run]) -> None:
    med = {key: statistics.median(getattr(r, key) for r in runs)
           for key in ("wall", "startup", "model", "client", "exit", "per_call_ms")}
    walls = [r.wall for r in runs]
    print(f"{name:12s} wall {med['wall'] * 1000:6.0f} ms median (range {min(walls) * 1000:.0f}–{max(walls) * 1000:.0f})"
          f" | start-up {med['startup'] * 1000:5.0f} | model (fake) {med['model'] * 1000:5.0f}"
          f" | client {med['client'] * 1000:5.0f} ({med['per_call_ms']:.1f} ms/call) | exit {med['exit'] * 1000:4.0f}"
          f" | {runs[0].calls} calls + {runs[0].side} side requests")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="also profile one turn of ours (cProfile)")
    parser.add_argument("--ours-only", action="store_true", help="skip Claude Code")
    parser.add_argument("--short", action="store_true",
                        help='`-p "hello there"`: one short call instead of the 40-Read turn (answered at once)')
    parser.add_argument("--baseline", metavar="REV",
                        help="also run tui-agent as of this git revision (checked out into a temp dir), alternated")
    args = parser.parse_args()
    ws, files = workspace()
    prompt = PROMPT
    if args.short:
        files, prompt = [], SHORT_PROMPT
    scratch = Path(tempfile.mkdtemp(prefix="bench-turn-state-"))  # config and journals (same disk as HOME)
    env = clean_env(TUI_AGENT_CONFIG_DIR=str(scratch / "config"), TUI_AGENT_DATA_DIR=str(scratch / "data"),
                    MODEL_MAX_RETRIES="1")
    claude = None if args.ours_only else find_claude_code()
    if claude is None and not args.ours_only:
        print("Claude Code is not available (npm install failed): measuring ours only")
    cc_env = clean_env(HOME=str(claude_code_home(ws, KEY)), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                       DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1")
    cc_command = [str(claude), "-p", prompt, "--model", MODEL] if claude else []
    ours = ours_command(ws, prompt=prompt)
    old = ours_command(ws, [], prompt=prompt)
    run_once(ours, env, ws, files)  # warm the bytecode and file caches
    if claude:
        run_once(cc_command, cc_env, ws, files)
    baseline_env, baseline = None, []
    if args.baseline:
        tree = scratch / "baseline"
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.baseline], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        baseline_env = {**env, "PYTHONPATH": str(tree)}  # before the editable install on sys.path
        run_once(old, baseline_env, ws, files)  # warm its bytecode
    mine, theirs = [], []
    for _ in range(args.runs):
        mine.append(run_once(ours, env, ws, files))
        if baseline_env:
            baseline.append(run_once(old, baseline_env, ws, files))
        if claude:
            theirs.append(run_once(cc_command, cc_env, ws, files))
    ours = mine
    what = f'-p "{SHORT_PROMPT}" (one short call)' if args.short else f"one turn of {FILES} Reads of {FILE_CHARS // 1000}k characters"
    print(f"{what}, {args.runs} alternated runs, load average {os.getloadavg()[0]:.2f}")
    describe("tui-agent", ours)
    if baseline:
        describe(f"at {args.baseline}"[:12], baseline)
        ratio = statistics.median(r.wall for r in ours) / statistics.median(r.wall for r in baseline)
        print(f"tui-agent now / at {args.baseline}: {ratio:.2f}×")
    if theirs:
        describe("Claude Code", theirs)
        ratio = statistics.median(r.wall for r in ours) / statistics.median(r.wall for r in theirs)
        print(f"tui-agent / Claude Code: {ratio:.2f}× (target ≤ 0.80: {'OK' if ratio <= 0.8 else 'OVER'})")
        pairs = [a.wall / b.wall for a, b in zip(ours, theirs)]  # each alternation side by side
        print(f"per alternation: median {statistics.median(pairs):.2f}×, range {min(pairs):.2f}–{max(pairs):.2f}×")
    if args.profile:
        profile_ours(ws, files, env)
    for folder in (ws, scratch, Path(cc_env["HOME"])):
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
