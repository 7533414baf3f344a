"""Build a ready Session from the environment and flags: the one place where the parts meet.

Cheap on purpose: no SDK is imported here (providers import theirs on first use), and slow start-up
work (MCP servers) is queued on `Session.background_start`, so `tui-agent` paints its first frame at once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from tui_agent.core.builtin_commands import register_builtin_commands, sync_skill_commands
from tui_agent.core.compaction.settings import CompactSettings, settings_from
from tui_agent.core.events import Notice
from tui_agent.core.mcp import install_mcp
from tui_agent.core.permissions import PermissionPolicy
from tui_agent.core.providers.base import Provider
from tui_agent.core.providers.demo import DemoProvider
from tui_agent.core.session import Session
from tui_agent.core.settings import apply_permission_settings
from tui_agent.core.system_prompt import build_system_prompt, context_notices
from tui_agent.core.tools import ToolRegistry, builtin_tools


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
        return DemoProvider(workspace=workspace, delay=demo_delay), []
    from tui_agent.core.providers.config import missing_key_notice, provider_from_env  # only when needed

    real = provider_from_env(env, model=name, provider=provider, context_window=context_window,
                             max_output_tokens=max_output_tokens)
    if real is not None:
        return real, []
    notices = []
    if name or provider:
        notices.append(Notice(missing_key_notice(env, provider), "warning"))
    demo = DemoProvider(workspace=workspace, delay=demo_delay)
    if context_window:
        demo.context_window = context_window
    return demo, notices


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
) -> tuple[Session, list[Notice]]:
    """A Session for `workspace` with the built-in tools, project context, skills, settings and MCP."""
    workspace = Path(workspace).resolve()
    compact = compact or settings_from(env)
    chosen, notices = provider_for_model(model, env, provider=provider, workspace=workspace, demo_delay=demo_delay,
                                         context_window=context_window, max_output_tokens=max_output_tokens)
    permissions = PermissionPolicy.headless(allow_write) if headless else PermissionPolicy()
    session = Session(
        provider=chosen,
        tools=ToolRegistry(builtin_tools()),
        workspace=workspace,
        compact_mode=compact.mode,
        compact_policy=compact.policy(),
        permissions=permissions,
    )
    if max_turns is not None:
        session.max_turns = max_turns
    notices += _install_extensions(session, env)
    return session, notices


def _install_extensions(session: Session, env: Mapping[str, str]) -> list[Notice]:
    """Settings rules, project context and skills, slash commands and MCP (started in the background)."""
    notices = [Notice(text, "warning") for text in apply_permission_settings(session.permissions, session.workspace)]
    session.system_prompt_builder = build_system_prompt
    register_builtin_commands(session)
    session.background_start.insert(0, _context_warnings)  # scans skills and AGENTS.md: after the first frame
    install_mcp(session, environ=env)
    return notices


async def _context_warnings(session: Session) -> list[Notice]:
    """Register `/<skill>` commands and report skipped skills or a truncated AGENTS.md, once the UI is up
    (headless: before the turn)."""
    sync_skill_commands(session)
    return context_notices(session)
