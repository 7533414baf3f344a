"""One real Codex CLI turn against the Responses fake: three shell calls, an automatic compaction, an answer.

Shared by the rollout tests and the proxy tests, and run as a script it writes `tests/data/codex-rollout.jsonl`
(`python -m tests.agents.codex_run`: the stored rollout the fast tests read, written by the real CLI).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.fakes.fake_responses import FakeResponses, function_call_item, message_item, reasoning_item, usage_of
from tests.npm_agents import codex_command, codex_env, npm_agent, rollouts

COMPACTION_PROMPT = "CONTEXT CHECKPOINT COMPACTION"  # Codex's own compaction request says this
COMPACT_AT = 5000  # the auto-compaction limit the turn runs with (model_auto_compact_token_limit)
SUMMARY = "SUMMARY: ran echo one, two and three in the workspace; the file notes.txt holds 'alpha-7'."


def codex_script() -> tuple[Any, list[dict[str, Any]]]:
    """The fake's model (a callable of the request body) and the usage it answered each request with."""
    replies = [[reasoning_item("Run the first command.", 1), function_call_item("exec_command", {"cmd": "echo one"}, "call_1")],
               [function_call_item("exec_command", {"cmd": "echo two"}, "call_2")],
               [function_call_item("exec_command", {"cmd": "cat notes.txt"}, "call_3")]]
    given: list[dict[str, Any]] = []

    def model(body: dict[str, Any]) -> list[dict[str, Any]]:
        last = body["input"][-1]
        text = str(last.get("content")) if last.get("type") == "message" else ""
        if COMPACTION_PROMPT in text:
            return [message_item(SUMMARY, 90)]
        return replies.pop(0) if replies else [message_item("done: alpha-7", 99)]

    def usage_for(body: dict[str, Any]) -> dict[str, Any]:
        usage = usage_of(600 * len(body["input"]), cached=300 * len(body["input"]))
        given.append(usage)
        return usage

    return (model, usage_for), given


def run_codex_turn(home: Path, workspace: Path, base_url: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`codex exec` in `workspace` with its logs in `home`, talking to the Responses API at `base_url`."""
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "notes.txt").write_text("alpha-7\n")
    command = codex_command(npm_agent("codex"), base_url, "Run echo one, echo two, then read notes.txt.",
                            compact_at=COMPACT_AT)
    return subprocess.run(command, cwd=workspace, env=codex_env(home), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def fake_for_codex() -> tuple[FakeResponses, list[dict[str, Any]]]:
    (model, usage_for), given = codex_script()
    return FakeResponses(model=model, usage_for=usage_for), given


def main(out: Path) -> int:
    import tempfile

    fake, _ = fake_for_codex()
    with fake, tempfile.TemporaryDirectory() as tmp:
        done = run_codex_turn(Path(tmp) / "home", Path(tmp) / "work", fake.base_url)
        found = rollouts(Path(tmp) / "home")
        if done.returncode != 0 or not found or fake.violations:
            print(done.stdout[-2000:], done.stderr[-2000:], fake.violations, file=sys.stderr)
            return 1
        text = found[0].read_text().replace(tmp, "/tmp/codex-test")
        out.write_text(text)
    print(f"wrote {out} ({len(fake.requests)} requests)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(__file__).resolve().parents[1] / "data" / "codex-rollout.jsonl"))
