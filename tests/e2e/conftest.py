"""The e2e tests' one fake server and one CLI environment (they were copied in four files)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic


@pytest.fixture
def fake():
    """A fake Claude over real HTTP; it fails the test if it saw an invalid request."""
    server = FakeAnthropic()
    with server:
        yield server
    assert server.violations == [], "the fake API saw invalid requests"


def cli_env(tmp_path: Path | None = None, fake: FakeAnthropic | None = None, **extra: str) -> dict[str, str]:
    """The environment for a `tui-agent` subprocess: no key or endpoint of the caller's leaks in; with
    `fake`, the real anthropic SDK talks to it; with `tmp_path`, the config folder is the test's."""
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and not k.startswith(("ANTHROPIC_", "OPENAI_", "CLAUDE_CODE_USE_", "AWS_"))
           and k not in ("GOOGLE_APPLICATION_CREDENTIALS", "CLOUD_ML_REGION")}
    if fake is not None:
        env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.base_url, MODEL_MAX_RETRIES="1")
    if tmp_path is not None:
        env["TUI_AGENT_CONFIG_DIR"] = str(tmp_path / "config")
    env.update(extra)
    return env
