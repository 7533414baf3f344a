"""The settings a session starts with: the organisation's policy (`org_policy`), then the user's and the
repository's settings files, then `COMPACT_BUDGET` / `--budget`, the most specific winning — except that
nothing may go past the policy: a wider budget, a higher ping spend cap or an idle policy that spends more
on pings is refused in one line, and the value below it stands.

Why apart from `org_policy` (the file and its keys): this is the rule of the layers, which the factory, the
`/budget` command and `tui-agent report` read alike; a face shows `notices` as warnings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from tui_agent.core.access.org_policy import (
    DEFAULT_IDLE,
    IDLE_SPEND,
    EffectiveSettings,
    Layer,
    policy_path,
    read_layer,
)

WIDEN = "a setting may narrow the organisation's policy, never widen it"
# The variables that turn the OpenTelemetry spans on (`core/agent/telemetry.py`); here, beside the policy's
# endpoint that sets them, so a session can tell it has no telemetry without importing that module.
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


def effective_settings(workspace: Path, env: Mapping[str, str] | None = None, *, budget: int | None = None,
                       budget_origin: str = "") -> EffectiveSettings:
    """The policy file, the settings files of `workspace` and a `budget` set by a flag or variable (its
    words in `budget_origin`), merged."""
    from tui_agent.core.access.settings import settings_files

    path = policy_path(env)
    policy, notices = read_layer(path, f"organisation policy {path}", policy=True)
    layers: list[Layer] = []
    user, project = settings_files(workspace)
    for file, words in ((user, f"settings {user}"), (project, f"project settings {project}")):
        if file == user or file.resolve() != user.resolve():
            layer, problems = read_layer(file, words)
            notices += problems
            if layer is not None:
                layers.append(layer)
    if budget is not None:
        layers.append(Layer(budget_origin or "flag --budget", budget=budget))
    merged = merge(policy, layers, path if policy is not None else None)
    return replace(merged, notices=tuple(notices) + merged.notices)


def policy_settings(env: Mapping[str, str] | None = None) -> EffectiveSettings:
    """The organisation policy alone (no settings files): what telemetry reads, with no workspace."""
    path = policy_path(env)
    policy, notices = read_layer(path, f"organisation policy {path}", policy=True)
    merged = merge(policy, [], path if policy is not None else None)
    return replace(merged, notices=tuple(notices))


def merge(policy: Layer | None, layers: Sequence[Layer], policy_file: Path | None = None) -> EffectiveSettings:
    """`layers` (least specific first) over `policy` (None: no policy file, read from `policy_file`)."""
    notices: list[str] = []
    budget, budget_origin = (policy.budget, policy.source) if policy is not None and policy.budget else (None, "")
    cap, cap_source = (policy.ping_cap_usd, policy.source) if policy is not None and policy.ping_cap_usd is not None \
        else (None, "")
    idle, idle_source = (policy.idle, policy.source) if policy is not None and policy.idle else (DEFAULT_IDLE, "default")
    for layer in layers:
        if layer.budget is not None:
            if policy is not None and policy.budget and layer.budget > policy.budget:
                notices.append(f"{layer.source}: budget {layer.budget:,} tokens refused: the {policy.source} sets "
                               f"at most {policy.budget:,} ({WIDEN}).")
            else:
                budget, budget_origin = layer.budget, layer.source
        if layer.ping_cap_usd is not None:
            if policy is not None and policy.ping_cap_usd is not None and layer.ping_cap_usd > policy.ping_cap_usd:
                notices.append(f"{layer.source}: ping spend cap ${layer.ping_cap_usd:g} refused: the {policy.source} "
                               f"sets at most ${policy.ping_cap_usd:g} per session ({WIDEN}).")
            else:
                cap, cap_source = layer.ping_cap_usd, layer.source
        if layer.idle is not None:
            if policy is not None and policy.idle and IDLE_SPEND[layer.idle] > IDLE_SPEND[policy.idle]:
                notices.append(f"{layer.source}: idle policy {layer.idle!r} refused: the {policy.source} sets "
                               f"{policy.idle!r}, which spends less on pings ({WIDEN}).")
            else:
                idle, idle_source = layer.idle, layer.source
    return EffectiveSettings(
        idle=idle, idle_source=idle_source, budget=budget, budget_origin=budget_origin,
        budget_cap=policy.budget if policy is not None else None,
        budget_cap_origin=policy.source if policy is not None and policy.budget else "",
        ping_cap_usd=cap, ping_cap_source=cap_source,
        telemetry_endpoint=policy.telemetry_endpoint if policy is not None else None,
        resource_attributes=policy.resource_attributes if policy is not None else (),
        policy_file=policy_file,
        notices=tuple(notices))


def telemetry_env(env: Mapping[str, str], settings: EffectiveSettings) -> dict[str, str]:
    """`env` as the OpenTelemetry exporters should read it: the policy's endpoint in force (whatever the
    user set), its resource attributes added to `OTEL_RESOURCE_ATTRIBUTES` (the policy's win on a clash)."""
    out = dict(env)
    if settings.telemetry_endpoint is None:
        return out
    out["OTEL_EXPORTER_OTLP_ENDPOINT"] = settings.telemetry_endpoint
    for key in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_SDK_DISABLED"):
        out.pop(key, None)
    if settings.resource_attributes:
        theirs = [pair for pair in out.get("OTEL_RESOURCE_ATTRIBUTES", "").split(",") if "=" in pair]
        ours = dict(settings.resource_attributes)
        kept = [pair for pair in theirs if pair.split("=", 1)[0].strip() not in ours]
        out["OTEL_RESOURCE_ATTRIBUTES"] = ",".join([*kept, *(f"{k}={v}" for k, v in ours.items())])
    return out
