"""`tui-agent proxy -- AGENT [ARGS]`: start the agent through the proxy with everything set so that it behaves
as it does without us, in the foreground of this terminal, and return its exit code.

Why each setting (the start-up lines say them):
- **Claude Code** reads `ANTHROPIC_BASE_URL`. A base URL that is not api.anthropic.com makes it a third-party
  client: its models' 1M window falls back to 200K (it stops or compacts near 180K instead of 1M) and some
  features go. So when Claude Code would have talked to Anthropic's API without us (no base URL of its own, or
  api.anthropic.com), `_CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL=1` keeps it first-party; a gateway of the
  user's own stays what it was, and is where the proxy sends its calls.
- **Codex** (0.171) ignores `OPENAI_BASE_URL`; its built-in OpenAI provider takes `openai_base_url` (a `-c`
  override), which keeps that provider: its own request shape, its server-side compaction, its sign-in. A
  ChatGPT sign-in sends its calls to chatgpt.com/backend-api/codex, an API key to api.openai.com/v1: the
  proxy sends them on where Codex would have (`api_base`: the URL its `/v1` stands for). A provider of the
  user's own config gets its `base_url` overridden the same way.
- any other agent gets both SDK variables (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL` with `/v1`).

The agent owns the terminal while it runs: the panel is the watch face on the recording, opened in a tmux pane
beside it when this runs inside tmux (closed when the agent exits), else the command that opens it is printed
(what capture tools like `npx context-lens claude` do: the agent in front, the view elsewhere).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping
from urllib.parse import urlsplit

FIRST_PARTY = "_CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL"
ANTHROPIC_API = "https://api.anthropic.com"
OPENAI_V1 = "https://api.openai.com/v1"
CHATGPT_CODEX = "https://chatgpt.com/backend-api/codex"
CLOUD_SWITCHES = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY",
                  "CLAUDE_CODE_USE_MANTLE", "CLAUDE_CODE_USE_ANTHROPIC_AWS")


@dataclass
class AgentPlan:
    """Where the agent's calls go on from the proxy, and how the agent is pointed at the proxy."""

    kind: str  # "claude", "codex" or "other"
    argv: list[str]
    upstream: str | None = None  # an origin the request's whole path is appended to (None: the vendor's)
    api_base: str | None = None  # the URL the proxy's `/v1` stands for (Codex's base URL)
    env: dict[str, str] = field(default_factory=dict)  # set for the agent; "{base}" is the proxy's URL
    args: list[str] = field(default_factory=list)  # inserted into its command line at `insert_at`
    insert_at: int = 1
    lines: list[str] = field(default_factory=list)  # what was set and why

    def command(self, base: str) -> tuple[list[str], dict[str, str]]:
        """The agent's command line and the variables it gets, for a proxy listening at `base`."""
        env = {k: v.replace("{base}", base) for k, v in self.env.items()}
        at = self.insert_at
        return [*self.argv[:at], *[a.replace("{base}", base) for a in self.args], *self.argv[at:]], env


def agent_kind(executable: str) -> str:
    name = Path(executable).name.lower().removesuffix(".exe").removesuffix(".cmd")
    return "claude" if name in ("claude", "claude-code") else "codex" if name == "codex" else "other"


def plan_for(argv: list[str], environ: Mapping[str, str], upstream: str | None) -> AgentPlan | str:
    """How to start `argv` through the proxy (a string: why it cannot be, in one line). `upstream`: the
    proxy's --upstream, the URL this agent's own setting would name (Claude Code's ANTHROPIC_BASE_URL, Codex's
    base URL), overriding where its calls would have gone."""
    kind = agent_kind(argv[0])
    if kind == "claude":
        return _claude(argv, environ, upstream)
    if kind == "codex":
        return _codex(argv, environ, upstream)
    plan = AgentPlan("other", argv, upstream=upstream, env={"ANTHROPIC_BASE_URL": "{base}",
                                                            "OPENAI_BASE_URL": "{base}/v1"})
    plan.lines = ["ANTHROPIC_BASE_URL={base} and OPENAI_BASE_URL={base}/v1: the SDKs' own variables (an agent "
                  "that reads neither is not seen)"]
    return plan


def _claude(argv: list[str], environ: Mapping[str, str], upstream: str | None) -> AgentPlan | str:
    cloud = [name for name in CLOUD_SWITCHES if environ.get(name, "").strip() not in ("", "0", "false")]
    if cloud:
        return (f"{cloud[0]} is set: Claude Code then calls that cloud's API, not ANTHROPIC_BASE_URL, and the "
                "proxy would see nothing")
    own = environ.get("ANTHROPIC_BASE_URL", "").strip()
    first_party = not own or urlsplit(own).hostname == "api.anthropic.com"
    plan = AgentPlan("claude", argv, upstream=upstream or own or None, env={"ANTHROPIC_BASE_URL": "{base}"})
    plan.lines.append("ANTHROPIC_BASE_URL={base}: Claude Code's API calls go through the proxy")
    if first_party:
        plan.env[FIRST_PARTY] = "1"
        plan.lines.append(f"{FIRST_PARTY}=1: without it Claude Code takes a base URL that is not api.anthropic.com "
                          "for a third party's (a 200K window instead of its model's 1M: it stops or compacts near 180K)")
    elif environ.get(FIRST_PARTY):
        plan.lines.append(f"{FIRST_PARTY} kept as you set it")
    else:
        plan.lines.append(f"your ANTHROPIC_BASE_URL ({own}) is not Anthropic's: Claude Code treats it as a third "
                          f"party's with us as without us ({FIRST_PARTY} not set)")
    plan.lines.append(f"its calls go on to {upstream or own or ANTHROPIC_API}")
    return plan


def _codex(argv: list[str], environ: Mapping[str, str], upstream: str | None) -> AgentPlan | str:
    from tui_agent.faces.proxy_codex import codex_settings, insert_at

    found = codex_settings(argv[1:], environ)
    if isinstance(found, str):
        return found
    plan = AgentPlan("codex", argv, insert_at=insert_at(argv))
    if found.provider == "openai":
        destination = upstream or found.base_url or (CHATGPT_CODEX if found.chatgpt else OPENAI_V1)
        plan.args = ["-c", 'openai_base_url="{base}/v1"']
        plan.lines.append("-c openai_base_url=\"{base}/v1\": Codex's built-in OpenAI provider calls through the "
                          "proxy and stays that provider (its request shape, server-side compaction, sign-in); "
                          "Codex 0.171 ignores OPENAI_BASE_URL")
        why = "your openai_base_url" if found.base_url and not upstream else (
            "a ChatGPT sign-in" if found.chatgpt and not upstream else "an API key" if not upstream else "--upstream")
    else:
        if not (upstream or found.base_url):
            return f"Codex's provider {found.provider!r} has no base_url to send its calls on to: give --upstream"
        destination = upstream or found.base_url or ""
        plan.args = ["-c", f'model_providers.{found.provider}.base_url="{{base}}/v1"']
        plan.lines.append(f"-c model_providers.{found.provider}.base_url=\"{{base}}/v1\": your provider "
                          f"{found.provider!r} calls through the proxy (the rest of its settings kept)")
        why = "--upstream" if upstream else "its base_url"
    plan.api_base = destination
    plan.lines.append(f"its calls go on to {destination} ({why})")
    return plan


def open_panel(recording: Path, mode: str, environ: Mapping[str, str]) -> str | None:
    """The watch face on `recording` in a tmux pane beside the agent (its pane id), or None (the command
    to open it is printed instead)."""
    command = [sys.executable, "-m", "tui_agent", "watch", str(recording)]
    if mode == "tmux" or (mode == "auto" and environ.get("TMUX")):
        done = subprocess.run(["tmux", "split-window", "-h", "-d", "-P", "-F", "#{pane_id}", shlex.join(command)],
                              capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    return None


def launch(plan: AgentPlan, base: str, recording: Path, panel: str) -> int:
    """Say what is set and why, open the panel, run the agent; its exit code."""
    command, env = plan.command(base)
    for line in plan.lines:
        _say(line.replace("{base}", base))
    pane = open_panel(recording, panel, os.environ) if panel != "none" else None
    if pane is None:
        _say(f"the panel: tui-agent watch {shlex.quote(str(recording))} (in another terminal)")
    else:
        _say(f"the panel: the watch face on the recording, in tmux pane {pane} beside the agent")
    try:
        return run_agent(command, env)
    finally:
        if pane is not None:
            subprocess.run(["tmux", "kill-pane", "-t", pane], capture_output=True)


def _say(line: str) -> None:
    print(f"proxy: {line}", file=sys.stderr, flush=True)


def run_agent(command: list[str], env: dict[str, str]) -> int:
    """The agent in the foreground, sharing this terminal; its exit code (128 + the signal that ended it).
    Ctrl+C reaches it from the terminal directly, so it is not ours to act on; a SIGTERM or SIGHUP sent to us
    is passed on."""
    try:
        child = subprocess.Popen(command, env={**os.environ, **env})
    except OSError as error:
        print(f"error: cannot start {command[0]}: {error.strerror or error}", file=sys.stderr)
        return 127 if isinstance(error, FileNotFoundError) else 126
    forward = {sig: signal.signal(sig, lambda s, _f: child.send_signal(s)) for sig in (signal.SIGTERM, signal.SIGHUP)}
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        code = child.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
        for sig, handler in forward.items():
            signal.signal(sig, handler)
    return 128 - code if code < 0 else code
