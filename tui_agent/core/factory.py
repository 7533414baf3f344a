"""Build a ready Session from the environment and flags: the one place where the parts meet.

Cheap on purpose: no SDK is imported here (providers import theirs on first use), and slow start-up
work (MCP servers) is queued on `Session.background_start`, so `tui-agent` paints its first frame at once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from tui_agent.core.compaction import CompactOptions
from tui_agent.core.events import Notice
from tui_agent.core.permissions import PermissionPolicy
from tui_agent.core.providers.base import Provider
from tui_agent.core.providers.demo import DemoProvider
from tui_agent.core.session import Session
from tui_agent.core.tools import ToolRegistry, builtin_tools


def provider_for_model(
    name: str | None,
    env: Mapping[str, str] = os.environ,
    *,
    provider: str | None = None,
    workspace: Path | None = None,
    demo_delay: float = 0.0,
) -> tuple[Provider, list[Notice]]:
    """The provider for a model name (or the environment's default) and any notice to show.

    `demo` (or no configured key) gives the offline demo model.
    """
    if name == "demo" or provider == "demo":
        return DemoProvider(workspace=workspace, delay=demo_delay), []
    try:
        from tui_agent.core.providers.config import provider_from_env
    except ImportError:  # providers not available in this build
        provider_from_env = None  # type: ignore[assignment]
    real = provider_from_env(env, model=name, provider=provider) if provider_from_env else None
    if real is not None:
        return real, []
    # The demo model announces itself in its first reply; a model asked for by name deserves a warning.
    notices = []
    if name or provider:
        notices.append(Notice(f"No API key is configured for {name or provider!r}; using the offline demo model. "
                              "Set ANTHROPIC_API_KEY (or OPENAI_API_KEY) to use a real model.", "warning"))
    return DemoProvider(workspace=workspace, delay=demo_delay), notices


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
) -> tuple[Session, list[Notice]]:
    """A Session for `workspace` with the built-in tools, project context, skills, settings and MCP."""
    workspace = Path(workspace).resolve()
    chosen, notices = provider_for_model(model, env, provider=provider, workspace=workspace, demo_delay=demo_delay)
    permissions = PermissionPolicy.headless(allow_write) if headless else PermissionPolicy()
    session = Session(
        provider=chosen,
        tools=ToolRegistry(builtin_tools()),
        workspace=workspace,
        compact=CompactOptions(),
        permissions=permissions,
    )
    if max_turns is not None:
        session.max_turns = max_turns
    notices += _install_extensions(session)
    return session, notices


def _install_extensions(session: Session) -> list[Notice]:
    """Project context, skills, settings, slash commands and MCP, each optional in this build."""
    notices: list[Notice] = []
    try:
        from tui_agent.core.system_prompt import build_system_prompt

        session.system_prompt_builder = build_system_prompt
    except ImportError:
        pass
    try:
        from tui_agent.core.builtin_commands import register_builtin_commands

        register_builtin_commands(session)
    except ImportError:
        pass
    try:
        from tui_agent.core.mcp import install_mcp

        install_mcp(session)
    except ImportError:
        pass
    return notices
