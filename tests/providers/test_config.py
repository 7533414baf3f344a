"""Provider selection from env/flags, model limits, and the cheap-construction rule (no SDK import)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tui_agent.core.providers.base import UsageInfo
from tui_agent.core.providers.config import missing_key_notice, provider_from_env
from tui_agent.core.models import (
    DEFAULT_ANTHROPIC_MODEL,
    DEFAULT_OUTPUT_CAP,
    cost_usd,
    model_info,
    resolve_limits,
)


def test_no_key_means_no_provider():
    assert provider_from_env({}, model=None, provider=None) is None
    assert provider_from_env({}, model=None, provider="anthropic") is None
    assert provider_from_env({"ANTHROPIC_API_KEY": "k"}, model=None, provider="demo") is None
    assert "ANTHROPIC_API_KEY" in missing_key_notice({}) and "OPENAI_API_KEY" in missing_key_notice({})
    assert "OPENAI_API_KEY" in missing_key_notice({}, "openai")


def test_anthropic_from_env_with_defaults_and_overrides():
    p = provider_from_env({"ANTHROPIC_API_KEY": "sk-ant"}, model=None, provider=None)
    assert p is not None and p.name == "anthropic" and p.model == DEFAULT_ANTHROPIC_MODEL
    assert p.reports_usage and p.context_window == model_info(DEFAULT_ANTHROPIC_MODEL).context_window
    assert p.max_output_tokens == DEFAULT_OUTPUT_CAP and p.base_url is None
    env = {"ANTHROPIC_API_KEY": "sk-ant", "ANTHROPIC_BASE_URL": "http://localhost:9", "ANTHROPIC_MODEL": "claude-haiku-4-5",
           "CONTEXT_WINDOW_TOKENS": "100000", "MAX_OUTPUT_TOKENS": "4096", "OPENAI_API_KEY": "sk-o"}
    p = provider_from_env(env, model=None, provider=None)
    assert p.name == "anthropic" and p.model == "claude-haiku-4-5" and p.base_url == "http://localhost:9"
    assert (p.context_window, p.max_output_tokens) == (100_000, 4096)
    assert provider_from_env(env, model="claude-opus-5-5", provider=None).model == "claude-opus-5-5"


def test_openai_from_env_and_flag():
    p = provider_from_env({"OPENAI_API_KEY": "sk-o"}, model=None, provider=None)
    assert p.name == "openai" and p.base_url == "https://api.deepseek.com" and p.model == "deepseek-chat"
    assert (p.context_window, p.max_output_tokens) == (128_000, 8_192)
    env = {"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o", "OPENAI_BASE_URL": "http://localhost:11434/v1",
           "OPENAI_MODEL": "qwen3-coder"}
    p = provider_from_env(env, model=None, provider="openai")
    assert p.name == "openai" and p.base_url == "http://localhost:11434/v1" and p.model == "qwen3-coder"
    # A local server needs no key when asked for explicitly; the hosted default does.
    local = provider_from_env({"OPENAI_BASE_URL": "http://localhost:8080/v1"}, model=None, provider="openai")
    assert local is not None and local.api_key
    assert provider_from_env({}, model=None, provider="openai") is None
    with pytest.raises(ValueError, match="anthropic, openai, bedrock, vertex, foundry"):
        provider_from_env({}, model=None, provider="gemini")


def test_model_limits_and_cost():
    assert model_info("claude-haiku-4-5-20251001").context_window == 200_000
    assert model_info("claude-sonnet-5-5").context_window == 1_000_000
    assert model_info("claude-sonnet-7").context_window == 1_000_000
    assert model_info("some-local-model").context_window == 128_000
    assert resolve_limits("claude-haiku-4-5", {"CONTEXT_WINDOW_TOKENS": "junk"}) == (200_000, DEFAULT_OUTPUT_CAP)
    assert resolve_limits("x", {"CONTEXT_WINDOW_TOKENS": "8000"}) == (8000, 4000)  # output capped at half the window
    assert resolve_limits("x", {}, context_window=50_000, max_output_tokens=2000) == (50_000, 2000)
    cost = cost_usd("claude-sonnet-5-5", UsageInfo(1_000_000, 100_000, 0, 1_000_000))
    assert cost == pytest.approx(2.0 + 1.0 + 0.1)
    assert cost_usd("deepseek-chat", UsageInfo(1, 1)) is None


def test_providers_do_not_import_the_sdks():
    code = (
        "import sys\n"
        "from tui_agent.core.providers.config import provider_from_env\n"
        "a = provider_from_env({'ANTHROPIC_API_KEY': 'k'}, model=None, provider=None)\n"
        "o = provider_from_env({'OPENAI_API_KEY': 'k'}, model=None, provider=None)\n"
        "assert a.name == 'anthropic' and o.name == 'openai'\n"
        "bad = [m for m in ('anthropic', 'openai', 'httpx2') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_the_key_stays_out_of_reprs():
    for env in ({"ANTHROPIC_API_KEY": "sk-secret-1"}, {"OPENAI_API_KEY": "sk-secret-1"}):
        assert "sk-secret-1" not in repr(provider_from_env(env, model=None, provider=None))


def test_preload_imports_the_sdk_without_a_loop():
    """The Anthropic provider's calls go through the `anthropic` SDK: constructing the provider imports
    nothing, preload imports the SDK (in the caller's thread: the TUI's after its first frame)."""
    code = ("import sys\n"
            "from tui_agent.core.providers.config import provider_from_env\n"
            "p = provider_from_env({'ANTHROPIC_API_KEY': 'k'})\n"
            "assert 'anthropic' not in sys.modules\n"
            "p.preload()\n"
            "print('anthropic' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
