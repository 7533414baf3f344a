"""Benchmark: time from launching `tui-agent` in a real terminal (tmux) to its first frame, beside Claude Code's.

Run: `.venv/bin/python bench/bench_startup.py [--runs N] [--floor]`. Target: tui-agent ≤ 0.7× Claude Code.

Both run in tmux at 120×40, alternated N times in one run (these machines are noisy: medians count; each round
starts with the next program in turn), each
timed from launch until `capture-pane` shows its first frame (polled every 5 ms, at most 15 s). Claude Code
(`npm install @anthropic-ai/claude-code` into a cache outside the repository, see bench_claude_code.py) gets
a throwaway HOME that has finished onboarding, trusted the folder and approved a dummy key, and an
`ANTHROPIC_BASE_URL` on a closed loopback port (without it, it waits seconds for a DNS answer that never
comes): it then paints its main prompt screen, which is what we wait for (`--onboarding`: an empty HOME,
and its welcome screen). The first paint of anything and
which screen it was are printed too. `--floor` adds a trivial Textual app (Header, Static, TextArea, Footer)
and `tui-agent --version`. `--first-token` times, for each agent pointed at the fake model of bench_turn.py,
the first frame and then Enter (typed the moment the frame is up: the worst case for an SDK still being
imported in a thread) to the first words of the answer on the screen.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_claude_code import claude_code_home, claude_code_version, find_claude_code  # noqa: E402

EXE = Path(sys.executable).with_name("tui-agent")
KEY = "sk-ant-api03-bench-dummy-key-0000000000000000000000"
TRIVIAL_APP = """
from textual.app import App
from textual.widgets import Footer, Header, Static, TextArea

class Trivial(App):
    def compose(self):
        yield Header()
        yield Static("Context budget")
        yield TextArea()
        yield Footer()

Trivial().run()
"""


@dataclass
class Frame:
    first_paint: float  # anything on the pane
    ready: float  # the screen we wait for
    screen: str  # what the first paint was


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def capture(server: str) -> str:
    return subprocess.run(["tmux", "-L", server, "capture-pane", "-p", "-t", "bench"],
                          capture_output=True, text=True).stdout


def first_frame(command: str, cwd: Path, ready: str, name: str) -> Frame:
    """Launch `command` in a fresh tmux server; time the first non-blank pane and the pane showing `ready`."""
    server = f"tui-agent-bench-{os.getpid()}-{name}"
    start = time.perf_counter()
    subprocess.run(["tmux", "-L", server, "new-session", "-d", "-s", "bench", "-x", "120", "-y", "40", "-c",
                    str(cwd), command], check=True)
    leader = subprocess.run(["tmux", "-L", server, "display-message", "-p", "-t", "bench", "#{pane_pid}"],
                            capture_output=True, text=True).stdout.strip()
    painted, screen = None, ""
    try:
        while time.perf_counter() - start < 15:
            pane = capture(server)
            now = time.perf_counter() - start
            if painted is None and pane.strip():
                painted, screen = now, describe_screen(pane)
            if ready in pane:
                return Frame(painted or now, now, screen)
            time.sleep(0.005)
        raise RuntimeError(f"{name}: no {ready!r} within 15 s; the pane shows:\n{capture(server)}")
    finally:
        subprocess.run(["tmux", "-L", server, "kill-server"], capture_output=True)
        if leader.isdigit():
            end_process_group(int(leader))


def first_token(command: str, cwd: Path, ready: str, answer: str, name: str) -> tuple[float, float]:
    """Launch `command` in tmux; when `ready` shows, type a prompt and Enter; seconds to the frame and
    from Enter to `answer` on the screen."""
    server = f"tui-agent-bench-{os.getpid()}-{name}"
    start = time.perf_counter()
    subprocess.run(["tmux", "-L", server, "new-session", "-d", "-s", "bench", "-x", "120", "-y", "40", "-c",
                    str(cwd), command], check=True)
    leader = subprocess.run(["tmux", "-L", server, "display-message", "-p", "-t", "bench", "#{pane_pid}"],
                            capture_output=True, text=True).stdout.strip()
    try:
        frame = entered = None
        while time.perf_counter() - start < 30:
            pane = capture(server)
            if frame is None and ready in pane:
                frame = time.perf_counter() - start
                subprocess.run(["tmux", "-L", server, "send-keys", "-t", "bench", "-l", "say hi"], check=True)
                subprocess.run(["tmux", "-L", server, "send-keys", "-t", "bench", "Enter"], check=True)
                entered = time.perf_counter()
            elif entered is not None and answer in pane:
                return frame, time.perf_counter() - entered
            time.sleep(0.005)
        raise RuntimeError(f"{name}: no {answer!r} within 30 s; the pane shows:\n{capture(server)}")
    finally:
        subprocess.run(["tmux", "-L", server, "kill-server"], capture_output=True)
        if leader.isdigit():
            end_process_group(int(leader))


def measure_first_token(commands: dict[str, str], workspace: Path, runs: int) -> None:
    """Frame and Enter → first token for each command, alternated, against one fake model (bench_turn's)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench_turn import BenchServer

    server = BenchServer([])  # no files: every main request is answered at once
    answer = "I read 0 files."
    with server:
        cmds = {name: cmd.replace("{BASE_URL}", server.base_url) for name, cmd in commands.items()}
        for name, cmd in cmds.items():
            first_token(cmd, workspace, READY[name], answer, f"warm-{name}")
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
        for run in range(runs):
            for name, cmd in cmds.items():
                results[name].append(first_token(cmd, workspace, READY[name], answer, f"{name}{run}"))
    print(f"Enter → first token, typed as the first frame shows ({runs} alternated runs, "
          f"load average {os.getloadavg()[0]:.2f}):")
    for name, pairs in results.items():
        frames = [p[0] for p in pairs]
        tokens = [p[1] for p in pairs]
        print(f"  {name:12s} first frame {statistics.median(frames) * 1000:5.0f} ms, Enter → first token "
              f"{statistics.median(tokens) * 1000:5.0f} ms median (range {min(tokens) * 1000:.0f}–"
              f"{max(tokens) * 1000:.0f})")


READY = {"tui-agent": "Context budget", "baseline": "Context budget", "Claude Code": "for shortcuts"}


def end_process_group(leader: int) -> None:
    """The program we launched, if the hang-up did not end it (a TUI can hang in its shutdown once its
    terminal is gone): its pane made it a process-group leader, so the group is exactly what we started."""
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            os.killpg(leader, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    try:
        os.killpg(leader, signal.SIGKILL)
    except ProcessLookupError:
        pass


def describe_screen(pane: str) -> str:
    if "for shortcuts" in pane:
        return "Claude Code's main prompt screen"
    if "Welcome to Claude Code" in pane:
        return "Claude Code's onboarding"
    if "Context budget" in pane:
        return "tui-agent's main screen" if "tui-agent" in pane else "the trivial app's screen"
    lines = [line.strip() for line in pane.splitlines() if line.strip()]
    return f"first line {lines[0][:60]!r}" if lines else "blank"


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - start


def summary(name: str, frames: list[Frame]) -> float:
    ready = statistics.median(f.ready for f in frames)
    paint = statistics.median(f.first_paint for f in frames)
    screens = sorted({f.screen for f in frames})
    print(f"{name:12s} first frame {ready * 1000:5.0f} ms median (range {min(f.ready for f in frames) * 1000:.0f}–"
          f"{max(f.ready for f in frames) * 1000:.0f}), first paint {paint * 1000:5.0f} ms: {', '.join(screens)}")
    return ready


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--floor", action="store_true", help="also a trivial Textual app and --version")
    parser.add_argument("--baseline", metavar="REV",
                        help="also time tui-agent as of this git revision (checked out into a temp dir), alternated")
    parser.add_argument("--first-token", action="store_true",
                        help="time Enter → first token of the answer (fake model) instead of the bare first frame")
    parser.add_argument("--onboarding", action="store_true",
                        help="give Claude Code an empty HOME: time its onboarding (welcome) screen instead")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("tmux is not installed: cannot measure the first frame in a real terminal")
        return 2
    scratch = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    workspace = scratch / "repo"
    workspace.mkdir()
    (workspace / "README.md").write_text("# bench\n")
    # PYTHONDONTWRITEBYTECODE is set on these sandboxes, which makes every start recompile the package
    # from source; a user's Python caches bytecode after the first run, so measure that (warm) case.
    ours = (f"env -u PYTHONDONTWRITEBYTECODE TUI_AGENT_CONFIG_DIR={scratch / 'config'} "
            f"TUI_AGENT_DATA_DIR={scratch / 'data'} {EXE} --model demo -C {workspace}")
    claude = find_claude_code()
    theirs = None
    if claude is None:
        print("Claude Code is not available (npm install failed): measuring tui-agent only")
    else:
        home = Path(tempfile.mkdtemp(dir=scratch)) if args.onboarding else claude_code_home(workspace, KEY)
        theirs = (f"env HOME={home} ANTHROPIC_API_KEY={KEY} ANTHROPIC_BASE_URL=http://127.0.0.1:{closed_port()} "
                  f"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 {claude}")
        print(f"Claude Code {claude_code_version(claude)} ({claude})")
    baseline_cmd = None
    if args.baseline:
        tree = scratch / "baseline"
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(Path(__file__).resolve().parents[1]), "archive", args.baseline],
                                 capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        baseline_cmd = ours.replace("TUI_AGENT_CONFIG_DIR=", f"PYTHONPATH={tree} TUI_AGENT_CONFIG_DIR=", 1)
        first_frame(baseline_cmd, workspace, "Context budget", "warm-baseline")
    if args.first_token:
        model_env = (f"ANTHROPIC_API_KEY={KEY} ANTHROPIC_BASE_URL={{BASE_URL}} MODEL_MAX_RETRIES=1 ")
        commands = {"tui-agent": ours.replace("--model demo", "--model claude-sonnet-4-5").replace(
            "env -u PYTHONDONTWRITEBYTECODE ", "env -u PYTHONDONTWRITEBYTECODE " + model_env, 1)}
        if baseline_cmd:
            commands["baseline"] = baseline_cmd.replace("--model demo", "--model claude-sonnet-4-5").replace(
                "env -u PYTHONDONTWRITEBYTECODE ", "env -u PYTHONDONTWRITEBYTECODE " + model_env, 1)
        if theirs:
            commands["Claude Code"] = theirs.replace("ANTHROPIC_BASE_URL=http://127.0.0.1:", "UNUSED_PORT=").replace(
                "env ", "env ANTHROPIC_BASE_URL={BASE_URL} ", 1)
        measure_first_token(commands, workspace, args.runs)
        shutil.rmtree(scratch, ignore_errors=True)
        return 0
    cc_ready = "Welcome to Claude Code" if args.onboarding else "for shortcuts"
    trivial = f"env -u PYTHONDONTWRITEBYTECODE {sys.executable} {scratch / 'trivial_app.py'}"
    (scratch / "trivial_app.py").write_text(TRIVIAL_APP)
    first_frame(ours, workspace, "Context budget", "warm")  # the file cache and the bytecode cache
    if theirs:
        first_frame(theirs, workspace, cc_ready, "warm-cc")
    frames, cc, floor, versions, before = [], [], [], [], []
    # Each round starts with the next program in turn: in a fixed order tui-agent always started right after
    # Claude Code's (or the trivial app's) process was ended, whose exit still used the CPU, and the baseline
    # right after tui-agent's; rotating spreads that over all of them.
    lineup = [(frames, ours, "Context budget", "ours")]
    if baseline_cmd:
        lineup.append((before, baseline_cmd, "Context budget", "baseline"))
    if theirs:
        lineup.append((cc, theirs, cc_ready, "cc"))
    if args.floor:
        lineup.append((floor, trivial, "Context budget", "trivial"))
    for run in range(args.runs):
        for k in range(len(lineup)):
            results, command, ready, name = lineup[(run + k) % len(lineup)]
            results.append(first_frame(command, workspace, ready, f"{name}{run}"))
        if args.floor:
            versions.append(timed([str(EXE), "--version"]))
    print(f"{args.runs} alternated runs in tmux 120×40, load average {os.getloadavg()[0]:.2f}")
    ours_ready = summary("tui-agent", frames)
    if before:
        print(f"tui-agent now / at {args.baseline}: {ours_ready / summary(f'at {args.baseline}'[:12], before):.2f}×")
    if floor:
        summary("trivial app", floor)
        print(f"tui-agent --version {statistics.median(versions) * 1000:.0f} ms median")
    code = 0
    if cc:
        ratio = ours_ready / summary("Claude Code", cc)
        print(f"tui-agent / Claude Code: {ratio:.2f}× (target ≤ 0.70: {'OK' if ratio <= 0.7 else 'OVER'})")
        code = 0 if ratio <= 0.7 else 1
    shutil.rmtree(scratch, ignore_errors=True)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
