"""Where the Codex CLI would send its model calls, read as Codex reads it: its provider (`-c model_provider=`,
a `--profile`'s, `config.toml`'s, else the built-in "openai"), that provider's base URL (`openai_base_url` or
`[model_providers.ID] base_url`, `-c` overrides first) and how it signs in (a ChatGPT sign-in in `auth.json`
sends the built-in provider's calls to chatgpt.com, an API key to api.openai.com).

Why read and not guess: `tui-agent proxy -- codex` must send each call on exactly where Codex would have sent
it without us, and must point at the proxy only the provider Codex will use.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

LOCAL_PROVIDERS = ("oss", "ollama", "lmstudio")  # built in, on this machine: nothing to watch through us


@dataclass(frozen=True)
class CodexSettings:
    provider: str  # "openai" (built in) or the id of a provider in the user's config
    base_url: str | None  # openai_base_url, or that provider's base_url (None: the built-in default)
    chatgpt: bool  # signed in with ChatGPT: the built-in provider calls chatgpt.com/backend-api/codex


def codex_home(environ: Mapping[str, str]) -> Path:
    configured = environ.get("CODEX_HOME")
    return Path(configured).expanduser() if configured else Path(environ.get("HOME") or Path.home()) / ".codex"


def overrides(args: list[str]) -> tuple[dict[str, Any], str | None, bool]:
    """The `-c key=value` overrides on Codex's command line (values read as TOML, else as strings), its
    `--profile`, and whether it runs `--oss`."""
    found: dict[str, Any] = {}
    profile, oss = None, False
    for n, arg in enumerate(args):
        value = None
        if arg in ("-c", "--config") and n + 1 < len(args):
            value = args[n + 1]
        elif arg.startswith("--config="):
            value = arg.split("=", 1)[1]
        elif arg in ("-p", "--profile") and n + 1 < len(args):
            profile = args[n + 1]
        elif arg.startswith("--profile="):
            profile = arg.split("=", 1)[1]
        oss = oss or arg == "--oss"
        if value is not None and "=" in value:
            key, raw = value.split("=", 1)
            found[key.strip()] = _toml_value(raw)
    return found, profile, oss


def _toml_value(raw: str) -> Any:
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def read_config(home: Path) -> dict[str, Any] | str:
    path = home / "config.toml"
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        return f"cannot read {path}: {error}"


def signed_in_with_chatgpt(home: Path, environ: Mapping[str, str]) -> bool:
    if environ.get("CODEX_API_KEY"):
        return False
    try:
        auth = json.loads((home / "auth.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(auth, dict):
        return False
    mode = auth.get("auth_mode")
    if isinstance(mode, str) and mode:
        return mode.lower().startswith("chatgpt")
    return bool(auth.get("tokens")) and not auth.get("OPENAI_API_KEY")


def codex_settings(args: list[str], environ: Mapping[str, str]) -> CodexSettings | str:
    """Codex's provider, its base URL and its sign-in for this command line (a string: why it cannot go
    through the proxy, in one line)."""
    home = codex_home(environ)
    config = read_config(home)
    if isinstance(config, str):
        return config
    found, profile, oss = overrides(args)
    profile = profile or (config.get("profile") if isinstance(config.get("profile"), str) else None)
    profiles = config.get("profiles") if isinstance(config.get("profiles"), dict) else {}
    chosen = profiles.get(profile) if profile and isinstance(profiles.get(profile), dict) else {}
    provider = found.get("model_provider") or chosen.get("model_provider") or config.get("model_provider") or (
        "oss" if oss else "openai")
    if not isinstance(provider, str):
        return f"Codex's model_provider is not a name: {provider!r}"
    if provider in LOCAL_PROVIDERS:
        return f"Codex's provider {provider!r} is a local model server: point a provider of your config at it instead"
    if provider == "openai":
        base = found.get("openai_base_url") or chosen.get("openai_base_url") or config.get("openai_base_url")
        return CodexSettings("openai", base if isinstance(base, str) else None, signed_in_with_chatgpt(home, environ))
    providers = config.get("model_providers") if isinstance(config.get("model_providers"), dict) else {}
    table = found.get(f"model_providers.{provider}")  # a whole provider given with -c (an inline table)
    if not isinstance(table, dict):
        table = providers.get(provider) if isinstance(providers.get(provider), dict) else {}
    base = found.get(f"model_providers.{provider}.base_url") or table.get("base_url")
    if not table and base is None:
        return f"Codex's provider {provider!r} is not in {home / 'config.toml'}"
    return CodexSettings(provider, base if isinstance(base, str) else None, False)


SUBCOMMANDS = ("exec", "e", "resume", "review", "fork")


def insert_at(argv: list[str]) -> int:
    """Where our `-c` overrides go in Codex's command line: after the last `-c` of the user's own (Codex
    applies them in order, and a subcommand's over the top level's), else after the subcommand, else after the
    executable; never past a `--`."""
    end = argv.index("--") if "--" in argv else len(argv)
    last = 0
    for n, arg in enumerate(argv[:end]):
        if arg in ("-c", "--config") and n + 1 < end:
            last = n + 2
        elif arg.startswith("--config="):
            last = n + 1
    if last:
        return last
    return 2 if len(argv) > 1 and argv[1] in SUBCOMMANDS else 1
