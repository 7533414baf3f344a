"""A real Codex CLI session that compacts ten times, against the Responses fake.

Codex compacts in two ways, and 0.171 writes both to its rollout as a `compacted` record:
- **locally** (a provider of its own config, as `codex_command` sets it): it asks the model for a summary
  with its "CONTEXT CHECKPOINT COMPACTION" prompt and keeps it, after its summary prefix, as the last item
  of the replacement history;
- **on the server** (its built-in OpenAI provider, at `openai_base_url`): it sends a `compaction_trigger`
  item and keeps the encrypted `compaction` item the API answers with.

A tiny `model_auto_compact_token_limit` makes it compact after every command. Run as a script it writes the
two rollouts the fast tests read (`python -m tests.agents.codex_compactions`), made here by the real CLI.
"""

from __future__ import annotations

import json
import lzma
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.fakes.fake_responses import (FakeResponses, compaction_item, function_call_item, message_item, usage_of,
                                        wants_compaction)
from tests.npm_agents import clean_env, codex_command, npm_agent, rollouts

COMPACTIONS = 10
COMPACT_AT = 6000
PROMPT = "Run echo step1, step2 and so on, one command at a time."
LOCAL_PROMPT = "CONTEXT CHECKPOINT COMPACTION"
DATA = Path(__file__).resolve().parents[1] / "data"
FIXTURES = {"local": DATA / "codex-compactions-local.jsonl.xz", "remote": DATA / "codex-compactions-remote.jsonl.xz"}


def summary_of(n: int, step: int) -> str:
    return f"SUMMARY {n}: ran echo step1 to step{step}; nothing failed."


def compacting_fake(commands: int = COMPACTIONS) -> FakeResponses:
    """A model that runs `commands` echo commands, then answers; it summarises or compacts when asked."""
    seen = {"commands": 0, "compactions": 0}

    def model(body: dict[str, Any]) -> list[dict[str, Any]]:
        if wants_compaction(body):
            seen["compactions"] += 1
            return [compaction_item(seen["compactions"])]
        if LOCAL_PROMPT in json.dumps(body["input"][-1]):
            seen["compactions"] += 1
            return [message_item(summary_of(seen["compactions"], seen["commands"]), 100 + seen["compactions"])]
        seen["commands"] += 1
        if seen["commands"] > commands:
            return [message_item("done", 99)]
        n = seen["commands"]
        return [function_call_item("exec_command", {"cmd": f"echo step{n}"}, f"call_{n}")]

    return FakeResponses(model=model, usage_for=lambda body: usage_of(1500 * len(body["input"]),
                                                                       cached=700 * len(body["input"])))


def openai_command(exe: Path, base_url: str | None, prompt: str, *, compact_at: int | None = None) -> list[str]:
    """`codex exec` on its built-in OpenAI provider (what a user runs), its base URL moved to `base_url`
    (None: left as Codex has it)."""
    command = [str(exe), "exec", "--skip-git-repo-check", "-s", "danger-full-access", "-m", "gpt-5-codex",
               "-c", "check_for_update_on_startup=false", "-c", "analytics.enabled=false"]
    if base_url is not None:
        command += ["-c", f'openai_base_url="{base_url}"']
    if compact_at is not None:
        command += ["-c", f"model_auto_compact_token_limit={compact_at}"]
    return command + [prompt]


def run_compacting_session(mode: str, home: Path, workspace: Path, base_url: str,
                           timeout: float = 300) -> subprocess.CompletedProcess:
    """`codex exec` compacting after every command, locally (`mode` "local") or on the server ("remote")."""
    workspace.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    exe = npm_agent("codex")
    command = (codex_command(exe, base_url, PROMPT, compact_at=COMPACT_AT) if mode == "local"
               else openai_command(exe, base_url, PROMPT, compact_at=COMPACT_AT))
    env = clean_env(CODEX_HOME=str(home), HOME=str(home), NO_COLOR="1", FAKE_KEY="test-key", CODEX_API_KEY="test-key")
    return subprocess.run(command, cwd=workspace, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)


def write_fixture(mode: str, tmp: Path) -> Path:
    fake = compacting_fake()
    with fake:
        done = run_compacting_session(mode, tmp / "home", tmp / "work", fake.base_url)
    found = rollouts(tmp / "home")
    if done.returncode != 0 or not found or fake.violations:
        raise SystemExit(f"codex failed ({done.returncode}): {done.stderr[-2000:]} {fake.violations}")
    text = found[0].read_text().replace(str(tmp), "/tmp/codex-test")
    FIXTURES[mode].write_bytes(lzma.compress(text.encode()))
    return FIXTURES[mode]


def main() -> int:
    import tempfile

    for mode in FIXTURES:
        with tempfile.TemporaryDirectory() as tmp:
            path = write_fixture(mode, Path(tmp))
        print(f"wrote {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
