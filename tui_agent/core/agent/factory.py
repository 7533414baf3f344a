"""Build a ready Session from the environment and flags: the one place where the parts meet.

Cheap on purpose: no SDK is imported here (providers import theirs on first use), and slow start-up
work (MCP servers) is queued on `Session.background_start`, so `tui-agent` paints its first frame at once.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from tui_agent.core.agent.budget_check import check_budget
from tui_agent.core.agent.builtin_commands import register_builtin_commands, sync_skill_commands
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.settings import CompactSettings, settings_from
from tui_agent.core.events import Notice
from tui_agent.core.agent.mcp_install import install_mcp
from tui_agent.core.access.effective_settings import ENDPOINT_VARIABLES, effective_settings, telemetry_env
from tui_agent.core.access.gate import PermissionPolicy
from tui_agent.core.models import for_provider
from tui_agent.core.providers.base import Provider
from tui_agent.core.agent.session import Session
from tui_agent.core.access.settings import PermissionSettings, apply_loaded, load_permission_settings, project_rules_item
from tui_agent.core.agent.system_prompt import build_system_prompt, context_notices
from tui_agent.core.tools import ToolRegistry, builtin_tools

if TYPE_CHECKING:
    from tui_agent.core.providers.demo import DemoProvider


def provider_for_model(
    name: str | None,
    env: Mapping[str, str] = os.environ,
    *,
    provider: str | None = None,
    workspace: Path | None = None,
    demo_delay: float = 0.0,
    context_window: int | None = None,
    max_output_tokens: int | None = None,
) -> tuple[Provider, list[Notice]]:
    """The provider for a model name (or the environment's default) and any notice to show.

    `demo` (or no configured key) gives the offline demo model, which announces itself in its first
    reply; asking for a real model or provider without its key also gets a warning naming the variable.
    Raises ValueError for an unknown provider name.
    """
    if name == "demo" or provider == "demo":
        demo = _demo(workspace, demo_delay, context_window, max_output_tokens)
        demo.chosen = True
        return demo, []
    from tui_agent.core.providers.config import missing_key_notice, provider_from_env  # only when needed

    real = provider_from_env(env, model=name, provider=provider, context_window=context_window,
                             max_output_tokens=max_output_tokens)
    if real is not None:
        return real, []
    notices = []
    if name or provider:
        notices.append(Notice(missing_key_notice(env, provider), "warning"))
    return _demo(workspace, demo_delay, context_window, max_output_tokens), notices


def _demo(workspace: Path | None, delay: float, context_window: int | None,
          max_output_tokens: int | None) -> DemoProvider:
    """The demo model honours the budget flags too, so a new user can try them without a key. Imported here
    only: a session with a real model never loads the demo's nine modules."""
    from tui_agent.core.providers.demo import DemoProvider

    demo = DemoProvider(workspace=workspace, delay=delay)
    if context_window:
        demo.context_window = context_window
    if max_output_tokens:
        demo.max_output_tokens = max_output_tokens
    return demo


def build_session(
    workspace: Path,
    *,
    model: str | None = None,
    provider: str | None = None,
    headless: bool = False,
    allow_write: bool | None = None,
    max_turns: int | None = None,
    env: Mapping[str, str] = os.environ,
    demo_delay: float = 0.0,
    context_window: int | None = None,
    max_output_tokens: int | None = None,
    compact: CompactSettings | None = None,
    trust_project_mcp: bool = False,
) -> tuple[Session, list[Notice]]:
    """A Session for `workspace` with the built-in tools, project context, skills, settings and MCP.

    `trust_project_mcp` (`--trust-project-mcp`) starts the repository's own MCP servers without asking."""
    workspace = Path(workspace).resolve()
    compact = compact or settings_from(env)
    org = effective_settings(workspace, env, budget=compact.budget, budget_origin=compact.budget_origin)
    compact = replace(compact, budget=org.budget, budget_origin=org.budget_origin)  # the policy bounds the flags
    chosen, notices = provider_for_model(model, env, provider=provider, workspace=workspace, demo_delay=demo_delay,
                                         context_window=context_window, max_output_tokens=max_output_tokens)
    permissions = PermissionPolicy.headless(allow_write) if headless else PermissionPolicy()
    base_policy = None
    demo = sys.modules.get("tui_agent.core.providers.demo")  # loaded only if a demo was made
    if demo is not None and isinstance(chosen, demo.DemoProvider):  # its own marks, under the user's flags
        chosen.headless = headless
        base_policy = demo.demo_policy()
    price = for_provider(chosen)  # the compactor prices its cuts at the model's own cache prices (and TTL)
    from tui_agent.core.models import model_info

    base_policy = replace(base_policy or CompactPolicy(), cache_read=price.read, cache_write=price.write,
                          long_context_step=model_info(chosen.model).long_context_above)
    session = Session(
        provider=chosen,
        tools=ToolRegistry(builtin_tools()),
        workspace=workspace,
        compact_mode=compact.mode,
        compact_policy=replace(compact.policy(base_policy), budget_cap=org.budget_cap,
                               budget_cap_origin=org.budget_cap_origin),
        permissions=permissions,
    )
    if max_turns is not None:
        session.max_turns = max_turns
    notices += [Notice(line, "warning") for line in org.notices]  # a refused setting, a policy file unread
    notices += _install_extensions(session, env, headless=headless, trust_project_mcp=trust_project_mcp)
    notices += _install_telemetry(session, telemetry_env(env, org))
    return session, notices


def _install_telemetry(session: Session, env: Mapping[str, str]) -> list[Notice]:
    """A span per model call when OTEL_EXPORTER_OTLP_ENDPOINT is set (`core.agent.telemetry`; else nothing).
    `env` already holds the policy's endpoint (`telemetry_env`), so without one of the variables there is no
    telemetry, and its modules (the wire form of every event with them) are not imported: the TUI's first
    frame does not wait for them."""
    if not any(env.get(name, "").strip() for name in ENDPOINT_VARIABLES):
        return []
    from tui_agent.core.agent import telemetry

    from tui_agent.core.agent import metrics

    if not telemetry.enabled(env):
        return []
    try:
        telemetry.attach(session, env)
        metrics.attach(session, env)  # counters and histograms beside the spans
    except RuntimeError as error:
        return [Notice(str(error), "warning")]
    return []


def _install_extensions(session: Session, env: Mapping[str, str], *, headless: bool = False,
                        trust_project_mcp: bool = False) -> list[Notice]:
    """Settings rules, project context and skills, slash commands and MCP (started in the background)."""
    loaded = load_permission_settings(session.workspace)
    notices = [Notice(text, "warning") for text in apply_loaded(session.permissions, loaded)]
    notices += _project_allow_rules(session, loaded, env, headless)
    session.system_prompt_builder = build_system_prompt
    register_builtin_commands(session)
    session.background_start.insert(0, _context_warnings)  # scans skills and AGENTS.md: after the first frame
    install_mcp(session, environ=env, trust_project=trust_project_mcp)
    session.background_start.append(check_budget)  # last: the base then includes MCP tool schemas
    return notices


PROJECT_RULES_TITLE = "Apply this project's allow rules?"
PROJECT_RULES_EXPLANATION = (
    "The repository's .tui-agent/settings.json allows these tool calls without asking you. Approve only "
    "a project you trust; the answer is remembered for this project until the rules change. Its deny "
    "rules always apply."
)


def _project_allow_rules(session: Session, loaded: PermissionSettings, env: Mapping[str, str],
                         headless: bool) -> list[Notice]:
    """Apply the repository's allow rules only when the user approved this exact list (never headless)."""
    item = project_rules_item(loaded)
    if item is None:
        return []
    if headless:
        return [Notice(f"Allow rules in {item.source} are ignored in headless mode (a repository cannot allow "
                       "itself tools); use --allow-write.", "info")]
    from tui_agent.core.access.trust import TrustQuestion, TrustStore, trust_path

    store = TrustStore(trust_path(env))
    status = store.status(session.workspace, item)
    if status == "approved":
        for rule in loaded.project_allow:
            session.permissions.add_rule(rule, "allow")
    if status != "pending":
        return []

    async def ask(session: Session) -> list[Notice]:
        if session.ask_trust is None:
            return [Notice(f"Allow rules in {item.source} are not applied: not approved.", "info")]
        answer = await session.ask_trust(TrustQuestion(PROJECT_RULES_TITLE, PROJECT_RULES_EXPLANATION, [item]))
        if answer not in ("approved", "refused"):
            return []
        problem = store.record(session.workspace, [item], answer)
        if answer == "approved":
            for rule in loaded.project_allow:
                session.permissions.add_rule(rule, "allow")
        return [Notice(problem, "warning")] if problem else []

    session.background_start.append(ask)
    return []


async def _context_warnings(session: Session) -> list[Notice]:
    """Register `/<skill>` commands and report skipped skills or a truncated AGENTS.md, once the UI is up
    (headless: before the turn)."""
    sync_skill_commands(session)
    return context_notices(session)
