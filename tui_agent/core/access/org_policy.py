"""The organisation's policy file, and the settings it bounds (like Claude Code's managed settings).

An administrator puts one JSON file where users cannot write: `/etc/tui-agent/policy.json` on Linux,
`/Library/Application Support/tui-agent/policy.json` on macOS, `%ProgramData%\\tui-agent\\policy.json` on
Windows (`$TUI_AGENT_POLICY_FILE` names another: tests, and a fleet that ships it elsewhere):

    {"telemetry": {"endpoint": "http://collector:4318", "resourceAttributes": {"team": "payments"}},
     "budget": "120k", "idle": "auto", "pingSpendCapUsd": 0.5}

- `telemetry`: turns OpenTelemetry on for everyone (spans and metrics go to `endpoint`, OTLP/HTTP), with
  resource attributes added to `OTEL_RESOURCE_ATTRIBUTES`; a user cannot turn it off or send it elsewhere;
- `budget`: the working budget (tokens, `120k`), which the marks are fractions of;
- `idle`: what a session does while it waits (`auto`, `ping`, `compact`, `cold`: `IDLE_POLICIES`);
- `pingSpendCapUsd`: what pings that keep the cache warm may cost, in USD per session.

Each is the default, and a limit: the user's `settings.json`, the repository's `.tui-agent/settings.json`,
`COMPACT_BUDGET` and `--budget` may set the same keys (`budget`, `idle`, `pingSpendCapUsd`) narrower —
a smaller budget or cap, an idle policy that spends less on pings — but a wider one is refused with one
line and the policy's value stands. Without a policy file the settings files set the defaults freely. The
budget line of the meter names where the budget came from (`organisation policy /etc/…`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.core.config_files import parse_json, read_text_capped

POLICY_ENV = "TUI_AGENT_POLICY_FILE"
IDLE_POLICIES = ("auto", "ping", "compact", "cold")
# What each idle policy may spend on pings, in order: a setting may move down this scale, never up.
IDLE_SPEND = {"cold": 0, "compact": 0, "auto": 1, "ping": 2}
DEFAULT_IDLE = "auto"
MIN_BUDGET = 1_000


def policy_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the organisation's policy is read from (`$TUI_AGENT_POLICY_FILE`, else the system's place)."""
    override = ((env or {}).get(POLICY_ENV) or os.environ.get(POLICY_ENV) or "").strip()
    if override:
        return Path(override).expanduser()
    if sys.platform == "darwin":
        return Path("/Library/Application Support/tui-agent/policy.json")
    if os.name == "nt":
        return Path(os.environ.get("ProgramData", r"C:\ProgramData")) / "tui-agent" / "policy.json"
    return Path("/etc/tui-agent/policy.json")


@dataclass(frozen=True)
class Layer:
    """One source's values (None: not set there) and the source's words."""

    source: str
    budget: int | None = None
    idle: str | None = None
    ping_cap_usd: float | None = None
    telemetry_endpoint: str | None = None
    resource_attributes: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class EffectiveSettings:
    """What a session starts with, each value beside where it came from; `notices`: one line per problem
    (a file that cannot be read, a value refused)."""

    idle: str = DEFAULT_IDLE
    idle_source: str = "default"
    budget: int | None = None  # None: the model's default
    budget_origin: str = ""
    budget_cap: int | None = None  # the organisation's: /budget may not go above it either
    budget_cap_origin: str = ""
    ping_cap_usd: float | None = None
    ping_cap_source: str = ""
    telemetry_endpoint: str | None = None
    resource_attributes: tuple[tuple[str, str], ...] = ()
    policy_file: Path | None = None  # the organisation's policy, when one is in force
    notices: tuple[str, ...] = field(default_factory=tuple)


def read_layer(path: Path, source: str, *, policy: bool = False) -> tuple[Layer | None, list[str]]:
    """The layer in the JSON file at `path` (None when there is no file) and one line per problem found;
    a bad value is left out, the rest kept."""
    try:
        text = read_text_capped(path)
    except OSError as error:
        return None, [f"{source} could not be read ({error.strerror or error}); it was ignored."]
    if text is None:
        return None, []
    try:
        data: Any = parse_json(text) if text.strip() else {}
    except ValueError as error:
        return None, [f"{source} is not valid JSON ({error}); it was ignored."]
    if not isinstance(data, dict):
        return None, [f"{source} must contain a JSON object; it was ignored."]
    return layer_of(data, source, policy=policy)


def layer_of(data: Mapping[str, Any], source: str, *, policy: bool = False) -> tuple[Layer, list[str]]:
    problems: list[str] = []
    budget = _budget(data.get("budget"), source, problems)
    idle = data.get("idle")
    if idle is not None and idle not in IDLE_POLICIES:
        problems.append(f"{source}: \"idle\" must be one of {', '.join(IDLE_POLICIES)} (got {str(idle)[:40]!r}).")
        idle = None
    cap = data.get("pingSpendCapUsd")
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, (int, float)) or not 0 <= cap < 1e6):
        problems.append(f"{source}: \"pingSpendCapUsd\" must be a number of US dollars ≥ 0 (got {str(cap)[:40]!r}).")
        cap = None
    endpoint, attributes = _telemetry(data.get("telemetry"), source, problems) if policy else (None, ())
    if not policy and "telemetry" in data:
        problems.append(f"{source}: \"telemetry\" is the organisation policy's to set; it was ignored.")
    return Layer(source, budget, idle, float(cap) if cap is not None else None, endpoint, attributes), problems


def _budget(value: Any, source: str, problems: list[str]) -> int | None:
    if value is None:
        return None
    text = str(value).strip().replace("_", "").replace(",", "")
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower(), 1)
    try:
        tokens = int(float(text[:-1] if scale > 1 else text) * scale) if not isinstance(value, bool) else -1
    except ValueError:
        tokens = -1
    if tokens < MIN_BUDGET:
        problems.append(f"{source}: \"budget\" must be whole tokens, at least {MIN_BUDGET:,} (e.g. 120000 or \"120k\"; "
                        f"got {str(value)[:40]!r}).")
        return None
    return tokens


def _telemetry(value: Any, source: str, problems: list[str]) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    if value is None or value is False:
        return None, ()
    if not isinstance(value, dict) or not isinstance(value.get("endpoint"), str) or not value["endpoint"].strip():
        problems.append(f"{source}: \"telemetry\" must be an object with an \"endpoint\" URL; it was ignored.")
        return None, ()
    attributes = value.get("resourceAttributes") or {}
    if not isinstance(attributes, dict):
        problems.append(f"{source}: telemetry.resourceAttributes must be an object of strings; it was ignored.")
        attributes = {}
    pairs = tuple(sorted((str(k), str(v)) for k, v in attributes.items() if isinstance(v, (str, int, float))))
    return value["endpoint"].strip(), pairs
