"""Headless exit cost: the interpreter's last garbage collection must not walk the heap a turn leaves behind.

After a turn a `-p` process holds the SDK's classes and the whole history; Python's shutdown collection
walked all of it and took about a second after the answer was printed (bench/bench_turn.py, "exit").
The heap is frozen at exit instead: the check runs in a child process, from an exit handler that runs
after ours (handlers run last-registered first, and this one is registered before the CLI starts).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

CHILD = """
import atexit, gc, sys
atexit.register(lambda: print(f"frozen={gc.get_freeze_count()}", flush=True))
from tui_agent.faces.cli import main
code = main(sys.argv[1:])
print(f"code={code}", flush=True)
"""


def test_headless_freezes_the_heap_before_the_interpreter_exits(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# demo\n")
    env = {**os.environ, "TUI_AGENT_CONFIG_DIR": str(tmp_path / "config")}
    out = subprocess.run([sys.executable, "-c", CHILD, "-p", "hello", "--model", "demo", "-C", str(tmp_path)],
                         capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert "code=0" in out.stdout, out.stderr
    frozen = int(out.stdout.rsplit("frozen=", 1)[1].split()[0])
    assert frozen > 10_000, out.stdout  # the whole heap, not a handful of objects


def test_headless_imports_the_sdk_before_the_turn_with_the_collector_paused(tmp_path: Path, monkeypatch) -> None:
    """The SDK import (most of a headless start) creates long-lived objects by the hundred thousand: the
    cyclic GC is paused while it runs, and on again before the turn, with what start-up made frozen."""
    import gc

    from tui_agent.core.providers.demo import DemoProvider
    from tui_agent.faces.headless import run_headless

    (tmp_path / "README.md").write_text("# demo\n")
    monkeypatch.setenv("TUI_AGENT_CONFIG_DIR", str(tmp_path / "config"))
    seen: list[bool] = []
    monkeypatch.setattr(DemoProvider, "preload", lambda self: seen.append(gc.isenabled()))
    turn_started: list[bool] = []
    real_stream = DemoProvider.stream

    def stream(self, request):
        turn_started.append(gc.isenabled() and gc.get_freeze_count() > 0)
        return real_stream(self, request)

    monkeypatch.setattr(DemoProvider, "stream", stream)
    assert gc.isenabled()
    gc.unfreeze()  # an earlier test in this process may have frozen the heap
    code = run_headless("hello", workspace=tmp_path, model="demo", out=io.StringIO(), err=io.StringIO())
    assert code == 0
    assert seen == [False]  # imported once, before the turn, with the collector paused
    assert turn_started and all(turn_started)  # on again for the turn, start-up's objects frozen out of its way
    assert gc.isenabled()
