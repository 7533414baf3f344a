"""Benchmark: the session journal of a long session, today's code beside a baseline commit, in one run.

Run: `.venv/bin/python bench/bench_journal.py [--prompts 3000] [--base REV]` (base: where this branch left
main). Each tree builds the same session in a fresh process: `--prompts` prompts, each a Read of one of
twenty 3 KB files and an answer (two model calls, four messages), scripted offline, journaled into its own
data dir; the default compactor cuts, masks and drops as the history outgrows the window. Then, each in a
fresh process again:

- the journal's size (MB, and KB per prompt) beside the size of its message records alone;
- `--continue` in process: read the journal, restore the session, plan the next request (wall seconds);
- `tui-agent --continue --print-outbound` as a user runs it (wall seconds, interpreter start included).

The baseline tree is `git archive`d into a temporary folder and run with the same interpreter, so both
sides see the same machine at the same time (shared and noisy: compare the columns). Not a pytest test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BUILD = r"""
import asyncio, sys
from pathlib import Path
from tui_agent.core.journal.writer import journal_of, start_journal
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply
from tui_agent.core.agent.session import Session
from tui_agent.core.tools import ToolRegistry
from tui_agent.core.tools.read import ReadTool

workspace, data, prompts = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
replies = []
for n in range(prompts):
    replies.append(tool_reply("Read", {"file_path": f"f{n % 20}.txt"}, f"toolu_{n}", f"Reading f{n % 20}."))
    replies.append(text_reply(f"Answer {n}: the file holds " + "several lines of text; " * 20))
provider = ScriptedProvider(replies=replies, model="demo", name="demo")
session = Session(provider, ToolRegistry([ReadTool()]), workspace, system_prompt_builder=lambda s: "bench")
start_journal(session, environ={"TUI_AGENT_DATA_DIR": data})

async def main():
    for n in range(prompts):
        async for _ in session.run_turn(f"prompt {n}: what is in f{n % 20}.txt?"):
            pass

asyncio.run(main())
journal_of(session).close()
print(journal_of(session).path)
"""

CONTINUE = r"""
import sys, time
started = time.perf_counter()
from pathlib import Path
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.resume import resume_journaled
from tui_agent.core.providers.scripted import ScriptedProvider
from tui_agent.core.agent.session import Session
from tui_agent.core.tools import ToolRegistry
from tui_agent.core.tools.read import ReadTool

path, workspace, data = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
load = read_journal(path)
session = Session(ScriptedProvider(model="demo", name="demo"), ToolRegistry([ReadTool()]), workspace,
                  system_prompt_builder=lambda s: "bench")
_, notices = resume_journaled(session, load, {"TUI_AGENT_DATA_DIR": data})
warnings = [n.text for n in notices if n.level == "warning"]
session.next_request()
print(f"{time.perf_counter() - started:.3f}", len(session.history), len(warnings))
"""


def sizes(path: Path) -> tuple[int, int, int]:
    """(file bytes, bytes of message records, bytes of compaction_state records)."""
    total = messages = states = 0
    with open(path, "rb") as handle:
        for line in handle:
            total += len(line)
            kind = json.loads(line).get("type")
            messages += len(line) if kind == "message" else 0
            states += len(line) if kind == "compaction_state" else 0
    return total, messages, states


def measure(tree: Path, prompts: int, scratch: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        env.pop(name, None)
    workspace, data = scratch / "repo", scratch / "data"
    workspace.mkdir(parents=True)
    for i in range(20):
        (workspace / f"f{i}.txt").write_text("".join(f"line {n} of file {i}: " + "x" * 40 + "\n" for n in range(50)))
    started = time.perf_counter()
    built = subprocess.run([sys.executable, "-c", BUILD, str(workspace), str(data), str(prompts)], cwd=tree,
                           env=env, capture_output=True, text=True, check=True)
    build_s = time.perf_counter() - started
    path = Path(built.stdout.strip().splitlines()[-1])
    total, messages, states = sizes(path)
    out = subprocess.run([sys.executable, "-c", CONTINUE, str(path), str(workspace), str(data)], cwd=tree, env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    cli_env = {**env, "TUI_AGENT_DATA_DIR": str(data)}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import sys; from tui_agent.faces.cli import main; sys.exit(main())",
                    "--continue", "--print-outbound"], cwd=workspace, env=cli_env, capture_output=True, check=True)
    cli_s = time.perf_counter() - started
    return {"build s": build_s, "journal MB": total / 1e6, "KB per prompt": total / 1e3 / prompts,
            "messages MB": messages / 1e6, "state MB": states / 1e6, "continue s (in process)": float(out[0]),
            "history": float(out[1]), "restore warnings": float(out[2]), "--continue --print-outbound s": cli_s}


def extract(rev: str, into: Path) -> None:
    """`rev`'s tui_agent package into `into` (run with the same interpreter and installed dependencies)."""
    archive = subprocess.run(["git", "archive", rev, "tui_agent"], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=3000)
    parser.add_argument("--base", default=None, help="the baseline revision (default: merge-base with main)")
    parser.add_argument("--after", default=None, help="a revision to measure instead of the working tree")
    args = parser.parse_args()
    base_rev = args.base or subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True,
                                           text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="bench-journal-") as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        extract(base_rev, base)
        tree = ROOT
        if args.after:
            tree = Path(tmp) / "after-tree"
            tree.mkdir()
            extract(args.after, tree)
        before = measure(base, args.prompts, Path(tmp) / "before")
        after = measure(tree, args.prompts, Path(tmp) / "after")
    print(f"{args.prompts} prompts; base {base_rev[:9]} vs {args.after or 'the working tree'}; "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"{'':32}{'before':>12}{'after':>12}")
    for key in before:
        print(f"{key:32}{before[key]:12.3f}{after[key]:12.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
