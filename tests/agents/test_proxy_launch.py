"""`tui-agent proxy -- claude|codex`: the real agents (npm, cached) behave through it as they do without it.

Claude Code: a fake of Anthropic's API reports usage climbing 200K a call while the agent keeps reading. Talking
to Anthropic's own API (the fake, with `_CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL=1` standing for
api.anthropic.com) Claude Code 2.1.197 with its 1M model reads on to 1,000,000 tokens and stops there ("Prompt
is too long", rc 1); through `tui-agent proxy -- claude` it sends the very same requests (bar its session ids
and billing hash) and stops at the same call, with the same exit code; pointed at the proxy by
ANTHROPIC_BASE_URL alone (what the docs said before) it takes the proxy for a third party's: a 200K window, so
it stops after the first call.

Codex: on its built-in OpenAI provider it compacts on the server (a `compaction_trigger` item) at the same calls
and sends the same requests direct and through `tui-agent proxy -- codex`, which points that provider (not one
of its own) at the proxy.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agents.codex_compactions import COMPACT_AT, COMPACTIONS, PROMPT, compacting_fake, openai_command
from tests.agents.proxy_run import ROOT, ProxyProcess, exchanges_of
from tests.fakes.fake_anthropic import FakeAnthropic, stream_reply, text, tool_use
from tests.fakes.http import Reply
from tests.npm_agents import claude_env, clean_env, npm_agent

STEP = 200_000
MODEL = "claude-sonnet-5"  # a model with a native 1M window (Claude Code's own model table)
# what differs between any two runs (ids), and `connection`, hop-by-hop: each connection's own business
VOLATILE_HEADERS = {"host", "x-client-request-id", "x-claude-code-session-id", "connection"}


class Climbing(FakeAnthropic):
    """Each main call (the Read tool offered) reports STEP more cached tokens and asks for one more Read."""

    def __init__(self, target: Path) -> None:
        super().__init__()
        self.target, self.tokens, self.main = target, 0, []

    def handle(self, path: str, headers: dict[str, str], body: Any, raw: bytes) -> Reply:
        if path.split("?")[0].endswith("/count_tokens"):
            return Reply(json_body={"input_tokens": 10})
        if not any(t.get("name") == "Read" for t in body.get("tools") or []):
            return stream_reply(text("ok"))
        self.tokens += STEP
        self.main.append(self.tokens)
        usage = {"input_tokens": 100, "cache_read_input_tokens": self.tokens, "cache_creation_input_tokens": 0}
        return stream_reply(tool_use("Read", {"file_path": str(self.target)}, f"toolu_read_{len(self.main)}"),
                            usage=usage)


def _normalised(requests: list[dict]) -> list[dict]:
    """The requests without what differs between any two runs: session and request ids, the billing hash."""
    out = []
    for r in requests:
        body = json.loads(re.sub(r"cch=[0-9a-f]+", "cch=*", json.dumps(r["body"])))
        body.get("metadata", {}).pop("user_id", None)
        out.append({"path": r["path"], "body": body,
                    "headers": {k: v for k, v in r["headers"].items() if k not in VOLATILE_HEADERS}})
    return out


def _claude(argv_head: list[str], env: dict[str, str], work: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*argv_head, str(npm_agent("claude-code")), "-p", "Read f.txt until told to stop.",
                           "--model", MODEL], cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow  # two real Claude Code runs (direct and through the proxy): CI runs it with -m slow
def test_claude_code_through_proxy_dash_dash_keeps_its_1m_window_and_its_requests(tmp_path):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    (work / "f.txt").write_text("hello\n")
    runs = {}
    for how in ("direct", "launched", "base-url-only"):
        fake = Climbing(work / "f.txt")
        with fake:
            env = claude_env(home, work, fake.origin)
            if how == "direct":  # the fake stands for api.anthropic.com
                done = _claude([], {**env, "_CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL": "1"}, work)
            elif how == "launched":  # `tui-agent proxy -- claude`, as a user with no base URL of their own
                env.pop("ANTHROPIC_BASE_URL")
                done = _claude([sys.executable, "-m", "tui_agent", "proxy", "--upstream", fake.origin,
                                "--record-dir", str(tmp_path / "rec"), "--panel", "none", "--"], env, work)
                recorded = exchanges_of(next((tmp_path / "rec").glob("proxy-*.jsonl")))
            else:
                proxy = ProxyProcess(fake.origin, tmp_path / "rec-plain")
                try:
                    done = _claude([], {**env, "ANTHROPIC_BASE_URL": proxy.base}, work)
                finally:
                    proxy.stop()
        runs[how] = (done, fake.main, fake.requests)
        assert fake.violations == [], (how, fake.violations)
    direct, launched, plain = runs["direct"], runs["launched"], runs["base-url-only"]
    assert direct[0].returncode == launched[0].returncode == 1 and "Prompt is too long" in launched[0].stdout
    assert direct[1] == launched[1] == list(range(STEP, 1_000_001, STEP))  # read on to its 1M window
    assert plain[1] == [STEP]  # a 200K window: it stopped after the first call
    assert _normalised(launched[2]) == _normalised(direct[2])  # the same requests, headers and bodies
    assert [e["request"] for e in recorded] == [r["body"] for r in launched[2]]  # recorded as the fake got them
    assert "_CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL=1" in launched[0].stderr  # said at start-up, with why


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


VARYING = [(UUID, "ID"), (re.compile(r'"create_time": [0-9.]+'), '"create_time": 0'),
           (re.compile(r'_unix_ms\\":[0-9]+'), r'_unix_ms\\":0'), (re.compile(r"Chunk ID: [0-9a-f]+"), "Chunk ID: *"),
           (re.compile(r"Wall time: [0-9.]+"), "Wall time: *")]


def _codex_normalised(requests: list[dict]) -> list[str]:
    """The requests without what differs between any two runs: ids, times, an output's chunk id."""
    out = []
    for r in requests:
        text_ = json.dumps(r["body"], sort_keys=True)
        for pattern, put in VARYING:
            text_ = pattern.sub(put, text_)
        out.append(text_)
    return out


@pytest.mark.slow  # two real Codex runs compacting (direct and through the proxy): CI runs it with -m slow
def test_codex_through_proxy_dash_dash_keeps_its_provider_and_compacts_where_it_does_direct(tmp_path, capsys):
    exe = npm_agent("codex")
    runs = {}
    for how in ("direct", "launched"):
        fake = compacting_fake()
        home, work = tmp_path / "home", tmp_path / "work"  # the same for both: the requests name them
        home.mkdir(exist_ok=True)
        work.mkdir(exist_ok=True)
        env = clean_env(CODEX_HOME=str(home), HOME=str(home), NO_COLOR="1", CODEX_API_KEY="test-key")
        with fake:
            if how == "direct":  # the fake stands for api.openai.com/v1
                command = openai_command(exe, fake.base_url, PROMPT, compact_at=COMPACT_AT)
            else:  # what the user types, with no base URL: the proxy points the built-in provider at itself
                command = [sys.executable, "-m", "tui_agent", "proxy", "--upstream", fake.base_url, "--record-dir",
                           str(tmp_path / "rec"), "--panel", "none", "--",
                           *openai_command(exe, None, PROMPT, compact_at=COMPACT_AT)]
            done = subprocess.run(command, cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True, timeout=300)
        assert done.returncode == 0, (how, done.stderr[-3000:])
        assert fake.violations == [], (how, fake.violations)
        runs[how] = fake.response_requests
    triggers = {how: [n for n, r in enumerate(reqs) if r["body"]["input"][-1].get("type") == "compaction_trigger"]
                for how, reqs in runs.items()}
    assert len(triggers["direct"]) == COMPACTIONS and triggers["launched"] == triggers["direct"]
    assert _codex_normalised(runs["launched"]) == _codex_normalised(runs["direct"])
    recorded = exchanges_of(next((tmp_path / "rec").glob("proxy-*.jsonl")))
    assert [e["request"] for e in recorded if e["call"]] == [r["body"] for r in runs["launched"]]
    from tui_agent.faces.proxy import json_printer

    capsys.readouterr()
    emit = json_printer()  # what `--json` prints of these calls: each compaction request a compaction line
    for exchange in recorded:
        emit(exchange)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [n for n, line in enumerate(lines) if line["kind"] == "compaction"] == triggers["launched"]
    assert {line["compaction"] for line in lines if line["kind"] == "compaction"} == {"server"}
    assert sum(line["compacted"] for line in lines) == COMPACTIONS


def test_the_start_up_lines_say_what_was_set_and_the_agents_exit_code_is_ours(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tui_agent", "proxy", "--record-dir", str(tmp_path), "--panel", "none",
                           "--", "sh", "-c", 'echo "$ANTHROPIC_BASE_URL $OPENAI_BASE_URL"; exit 7'],
                          cwd=ROOT, env=clean_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 7
    base = done.stdout.split()[0]
    assert done.stdout.split() == [base, base + "/v1"] and base.startswith("http://127.0.0.1:")
    assert f"ANTHROPIC_BASE_URL={base}" in done.stderr and "tui-agent watch" in done.stderr
