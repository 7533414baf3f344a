"""The real agents (Claude Code, Codex CLI) for the tests that run them: installed from npm into a cache
outside the repository (`$TUI_AGENT_NPM_CACHE`, default `~/.cache/tui-agent-bench`; `.ci/run` fills it), and
the environment each needs to talk only to a loopback fake and write its logs into a test's folder.

Nothing skips: a test that needs an agent installs it when the cache lacks it, and fails with npm's words when
it cannot (CI reaches the npm registry).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

PACKAGES = {"codex": ("@openai/codex", "codex"), "claude-code": ("@anthropic-ai/claude-code", "claude"),
            "opencode": ("opencode-ai", "opencode"),
            "acpx": ("acpx@0.1.15", "acpx")}  # an ACP client CLI, pinned: the version issue 41 was found with


def cache_dir() -> Path:
    return Path(os.environ.get("TUI_AGENT_NPM_CACHE") or Path.home() / ".cache" / "tui-agent-bench")


def npm_agent(name: str) -> Path:
    """The executable of agent `name` ("codex" or "claude-code"), installed once into the cache."""
    package, binary = PACKAGES[name]
    folder = cache_dir() / name
    exe = folder / "node_modules" / ".bin" / binary
    if exe.exists():
        return exe
    assert shutil.which("npm"), f"npm is needed to install {package}"
    folder.mkdir(parents=True, exist_ok=True)
    # pytest-xdist's workers (and other test runs) may want the same agent at once: one installs, the others
    # wait for it under the folder's lock and find it installed.
    with open(folder / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not exe.exists():
            done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", package], cwd=folder,
                                  capture_output=True, text=True, timeout=600)
            assert exe.exists(), f"npm install {package} failed: {done.stderr[-2000:]}"
    return exe


def clean_env(**extra: str) -> dict[str, str]:
    """The caller's environment without any key, endpoint or agent config of its own."""
    env = {k: v for k, v in os.environ.items()
           if not k.endswith(("_API_KEY", "_AUTH_TOKEN")) and not k.startswith(("ANTHROPIC_", "OPENAI_", "CODEX_",
                                                                               "CLAUDE_"))}
    env.update(extra)
    return env


def codex_command(exe: Path, base_url: str, prompt: str, *, compact_at: int | None = None) -> list[str]:
    """`codex exec` on a provider at `base_url` (the Responses API, key from $FAKE_KEY), no sandbox (the
    commands it runs are the test's), no update check."""
    provider = f'{{name="fake",base_url="{base_url}",wire_api="responses",env_key="FAKE_KEY"}}'
    command = [str(exe), "exec", "--skip-git-repo-check", "-s", "danger-full-access", "-m", "gpt-5-codex",
               "-c", "model_provider=fake", "-c", f"model_providers.fake={provider}",
               "-c", "check_for_update_on_startup=false", "-c", "analytics.enabled=false"]
    if compact_at is not None:
        command += ["-c", f"model_auto_compact_token_limit={compact_at}"]
    return command + [prompt]


def codex_env(home: Path, key: str = "test-key") -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return clean_env(CODEX_HOME=str(home), FAKE_KEY=key, HOME=str(home), NO_COLOR="1")


def rollouts(home: Path) -> list[Path]:
    return sorted((home / "sessions").glob("*/*/*/rollout-*.jsonl"))


def claude_env(home: Path, workspace: Path, base_url: str, key: str = "test-key") -> dict[str, str]:
    """Claude Code with a throwaway HOME (onboarding done, folder trusted, key approved), pointed at `base_url`."""
    home.mkdir(parents=True, exist_ok=True)
    config = {"hasCompletedOnboarding": True, "theme": "dark",
              "customApiKeyResponses": {"approved": [key[-20:]], "rejected": []},
              "projects": {str(workspace): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}}}
    (home / ".claude.json").write_text(json.dumps(config))
    return clean_env(HOME=str(home), ANTHROPIC_API_KEY=key, ANTHROPIC_BASE_URL=base_url,
                     DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1",
                     DISABLE_ERROR_REPORTING="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", NO_COLOR="1")
