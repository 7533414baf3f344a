"""Pick the model provider from flags and the environment, without importing any SDK.

Precedence: `--provider` > which key is set (Anthropic first: it is the default when its key is set) >
nothing (None: the caller falls back to the demo model and shows `missing_key_notice`).

| variable | meaning |
| --- | --- |
| ANTHROPIC_API_KEY | Claude API key (selects the Anthropic provider) |
| ANTHROPIC_BASE_URL | any Anthropic-compatible endpoint (default: the SDK's api.anthropic.com) |
| ANTHROPIC_MODEL | model id (default `DEFAULT_ANTHROPIC_MODEL`); `--model` wins |
| OPENAI_API_KEY | key for an OpenAI-compatible endpoint (used when no Anthropic key, or `--provider openai`) |
| OPENAI_BASE_URL | endpoint (default https://api.deepseek.com); local servers: e.g. http://localhost:11434/v1 |
| OPENAI_MODEL | model id (default deepseek-chat); `--model` wins |
| CONTEXT_WINDOW_TOKENS | override the model's context window |
| MAX_OUTPUT_TOKENS | override max output tokens per call |
| MODEL_MAX_RETRIES | retries for 429/529/5xx/connection errors (default 4) |
| ENABLE_PROMPT_CACHING_1H | 1: the 1-hour prompt cache (Claude Code's name; `--cache-1h`) |
| MAX_THINKING_TOKENS | extended thinking with this budget per call (Claude Code's name; `--thinking-tokens`) |
| CLAUDE_CODE_USE_BEDROCK | 1: Claude on Amazon Bedrock (AWS_REGION, AWS credentials; `--provider bedrock`) |
| CLAUDE_CODE_USE_VERTEX | 1: Claude on Vertex AI (CLOUD_ML_REGION, ANTHROPIC_VERTEX_PROJECT_ID; `--provider vertex`) |
| CLAUDE_CODE_USE_FOUNDRY | 1: Claude on Microsoft Foundry (ANTHROPIC_FOUNDRY_RESOURCE, ..._API_KEY) |
| ANTHROPIC_BEDROCK_BASE_URL | the Bedrock endpoint instead of the region's (a gateway) |
| ANTHROPIC_VERTEX_BASE_URL | the Vertex AI endpoint instead of the region's (a gateway) |
| ANTHROPIC_FOUNDRY_BASE_URL | the Foundry endpoint instead of the resource's |

A `CLAUDE_CODE_USE_*` switch wins over the keys, as in Claude Code (core/providers/cloud.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Mapping

from tui_agent.core.providers.base import Provider
from tui_agent.core.providers.cloud import PLATFORMS, chosen_platform, cloud_settings
from tui_agent.core.models import (
    DEFAULT_ANTHROPIC_MODEL,
    DEFAULT_OPENAI_BASE_URL,
    DEFAULT_OPENAI_MODEL,
    resolve_limits,
)
from tui_agent.core.providers.retry import RetryPolicy
from tui_agent.core.redact import remember_sent
from tui_agent.core.providers.server_report import diagnosis_wanted

_ALIASES = {"claude": "anthropic", "deepseek": "openai", "openai-compatible": "openai"}
_DEMO = ("demo", "mock", "scripted")
# Local OpenAI-compatible servers (Ollama, llama.cpp, vLLM) accept any key; the SDK insists on one.
LOCAL_PLACEHOLDER_KEY = "not-needed"


def _get(env: Mapping[str, str], key: str) -> str:
    return (env.get(key) or "").strip()


def _anthropic() -> Callable[..., Provider]:
    from tui_agent.core.providers.anthropic_provider import AnthropicProvider  # its module, not an SDK

    return AnthropicProvider


def _openai() -> Callable[..., Provider]:
    from tui_agent.core.providers.openai_provider import OpenAIProvider

    return OpenAIProvider


@dataclass(frozen=True)
class ProviderEntry:
    """One real provider: the variables that configure it and the class that talks to it (imported on use)."""

    name: str
    key_var: str
    model_var: str
    base_url_var: str
    default_model: str
    default_base_url: str | None  # None: the provider's own default endpoint
    build: Callable[[], Callable[..., Provider]]
    keyless_local: bool = False  # `--provider NAME` with a base URL and no key: a local server (any key)
    options: Callable[[Mapping[str, str]], dict[str, object]] = lambda env: {}  # the provider's own settings
    key_required: bool = True  # False: a cloud platform, whose credentials its SDK client finds itself


# In order of precedence when no --provider says otherwise: the first whose key is set is used.
PROVIDERS: dict[str, ProviderEntry] = {
    "anthropic": ProviderEntry("anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_MODEL", "ANTHROPIC_BASE_URL",
                               DEFAULT_ANTHROPIC_MODEL, None, _anthropic, options=lambda env: _anthropic_options(env)),
    "openai": ProviderEntry("openai", "OPENAI_API_KEY", "OPENAI_MODEL", "OPENAI_BASE_URL", DEFAULT_OPENAI_MODEL,
                            DEFAULT_OPENAI_BASE_URL, _openai, keyless_local=True),
    **{name: ProviderEntry(name, "", "ANTHROPIC_MODEL", platform.base_url_var, DEFAULT_ANTHROPIC_MODEL, None,
                           _anthropic, key_required=False,
                           options=lambda env, name=name: _cloud_options(env, name))  # type: ignore[misc]
       for name, platform in PLATFORMS.items()},
}
PROVIDER_NAMES = tuple(PROVIDERS)


def normalize_provider(provider: str | None) -> str | None:
    """'anthropic' / 'openai' / 'demo' or None; raises ValueError naming the choices for anything else."""
    if provider is None or not provider.strip():
        return None
    name = provider.strip().lower()
    name = _ALIASES.get(name, name)
    if name in _DEMO:
        return "demo"
    if name not in PROVIDER_NAMES:
        raise ValueError(f"Unknown provider {provider!r}: choose one of {', '.join(PROVIDER_NAMES)}.")
    return name


def chosen_provider(env: Mapping[str, str], provider: str | None = None) -> str | None:
    """The provider that would be used (None when no key is configured)."""
    name = normalize_provider(provider)
    if name is not None:
        return name
    platform = chosen_platform(env)  # CLAUDE_CODE_USE_BEDROCK=1 & co. win over keys, as in Claude Code
    if platform is not None:
        return platform
    return next((name for name, entry in PROVIDERS.items() if entry.key_var and _get(env, entry.key_var)), None)


def _truthy(value: str) -> bool:
    return value.lower() in ("1", "true", "yes", "on")


def _anthropic_options(env: Mapping[str, str]) -> dict[str, object]:
    """Claude's own settings, named as Claude Code names them: the 1-hour cache and the thinking budget."""
    return {"cache_ttl": "1h" if _truthy(_get(env, "ENABLE_PROMPT_CACHING_1H")) else "5m",
            "thinking_budget": _thinking_budget(env), "diagnose": diagnosis_wanted(env)}


def _cloud_options(env: Mapping[str, str], platform: str) -> dict[str, object]:
    """A cloud platform is Claude with its own client: Claude's options, the platform's settings (or a
    `CloudConfigError` naming what is missing) and the credentials to name when they are refused."""
    settings = cloud_settings(env, platform)
    return {**_anthropic_options(env), "cloud": settings, "key_variable": settings.credentials_hint,
            "name": platform, "diagnose": False}  # the cache diagnosis is the Claude API's own


def _thinking_budget(env: Mapping[str, str]) -> int:
    """MAX_THINKING_TOKENS as Claude Code reads it: a positive number turns thinking on (else off)."""
    raw = _get(env, "MAX_THINKING_TOKENS")
    return int(raw) if raw.isdigit() else 0


def _retry_policy(env: Mapping[str, str]) -> RetryPolicy:
    raw = _get(env, "MODEL_MAX_RETRIES")
    if raw.isdigit():
        return RetryPolicy(max_retries=int(raw))
    return RetryPolicy()


def provider_from_env(
    env: Mapping[str, str] | None = None,
    *,
    model: str | None = None,
    provider: str | None = None,
    context_window: int | None = None,
    max_output_tokens: int | None = None,
) -> Provider | None:
    """The configured real provider, or None when no key is set (or `--provider demo`).

    Cheap: builds the provider object only; the SDK is imported on its first call. Raises ValueError
    for an unknown `--provider` name.
    """
    env = os.environ if env is None else env
    name = chosen_provider(env, provider)
    if name is None or name == "demo":
        return None
    entry = PROVIDERS[name]
    key = _get(env, entry.key_var) if entry.key_var else ""
    base_url = _get(env, entry.base_url_var) or entry.default_base_url
    if not key and entry.key_required:
        # `--provider openai` pointed at a local server works without a key; the hosted default does not.
        if entry.keyless_local and normalize_provider(provider) == name and _get(env, entry.base_url_var):
            key = LOCAL_PLACEHOLDER_KEY
        else:
            return None
    remember_sent(key)  # redacted wherever a server's words are shown or stored (a 401 that echoes it)
    model_id = (model or "").strip() or _get(env, entry.model_var) or entry.default_model
    window, output = resolve_limits(model_id, env, context_window=context_window, max_output_tokens=max_output_tokens)
    return entry.build()(api_key=key, base_url=base_url, model=model_id, context_window=window,
                         max_output_tokens=output, retry=_retry_policy(env), **entry.options(env))


def missing_key_notice(env: Mapping[str, str] | None = None, provider: str | None = None) -> str:
    """The one-line notice to show when `provider_from_env` returned None."""
    env = os.environ if env is None else env
    name = normalize_provider(provider)
    if name == "demo":
        return "Using the demo model (no real model calls)."
    if name == "openai":
        return ("No OPENAI_API_KEY set: using the demo model. Set OPENAI_API_KEY (and OPENAI_BASE_URL / "
                "OPENAI_MODEL) for an OpenAI-compatible endpoint.")
    return ("No API key set: using the demo model. Set ANTHROPIC_API_KEY for Claude, or OPENAI_API_KEY "
            "(+ OPENAI_BASE_URL, OPENAI_MODEL) for an OpenAI-compatible endpoint.")
