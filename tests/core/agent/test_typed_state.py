"""The engine keeps its state in typed fields, not `dict[str, Any]` bags: what the journal records and
what the parts share (the permission policy, project context, skills, MCP, skill commands) has a name
and a type on `Session` / `ToolContext`."""

from __future__ import annotations

import dataclasses

from tui_agent.core.agent.factory import build_session
from tui_agent.core.mcp.state import McpState
from tui_agent.core.tools.project_context import ProjectContext
from tui_agent.core.agent.session import Session
from tui_agent.core.tools.skill_catalog import SkillCatalog, catalog_for
from tui_agent.core.agent.system_prompt import project_context_for
from tui_agent.core.tools.base import ToolContext


def test_no_untyped_bags_remain() -> None:
    for cls in (Session, ToolContext):
        for f in dataclasses.fields(cls):
            assert f.type not in ("dict[str, Any]", dict), f"{cls.__name__}.{f.name} is an untyped bag"
    names = {f.name for f in dataclasses.fields(Session)}
    assert "extensions" not in names and "state" not in {f.name for f in dataclasses.fields(ToolContext)}


def test_the_parts_share_typed_fields(tmp_path) -> None:
    session, _ = build_session(tmp_path, model="demo", env={})
    assert session.ctx.permissions is session.permissions
    assert isinstance(session.mcp, McpState) and session.mcp.phase == "waiting"
    assert session.skill_commands is not None and session.skill_commands.names == set()
    assert isinstance(project_context_for(session.ctx), ProjectContext)
    assert session.ctx.project_context is project_context_for(session.ctx)  # cached, not rebuilt
    catalog = catalog_for(session.ctx)
    assert isinstance(catalog, SkillCatalog) and session.ctx.skills is catalog
    session.clear()
    assert session.ctx.skills is catalog and session.ctx.project_context is not None  # /clear keeps them
