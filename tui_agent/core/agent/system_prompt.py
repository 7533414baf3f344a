"""The system prompt: the base instructions, the project's AGENTS.md/CLAUDE.md, and the skills catalog.

`build_system_prompt(session)` is a `Session.system_prompt_builder`: the loop calls it before every
model call, so a changed AGENTS.md or a new skill applies to the next call. Both are cached on
`session.ctx.project_context` and only re-read when their files' mtimes change. `/clear` keeps them, because
`Session.clear()` only empties the history and the read-file record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.core.agent.base_prompt import BASE_SYSTEM_PROMPT
from tui_agent.core.tools.project_context import ProjectContext
from tui_agent.core.tools.skill_catalog import catalog_for, catalog_text
from tui_agent.core.events import BaseBreakdown
from tui_agent.core.tokens import text_tokens, tools_tokens

if TYPE_CHECKING:
    from tui_agent.core.events import Notice
    from tui_agent.core.agent.commands import PromptHost
    from tui_agent.core.tools.base import ToolContext


TOOLS_GUIDANCE = """To change files, use Edit for changes to an existing file (Read it first: Edit refuses files you have not read) and Write for new files or complete rewrites. Never write inside .git/.
Use Bash to run commands (tests, builds, git) in the workspace root; prefer the file tools over cat, sed or echo.
Tools that change things may need the user's permission. If the user denies a tool use, stop and wait for their instructions."""


def project_context_for(ctx: "ToolContext") -> ProjectContext:
    """The session's cached project context (kept in `ctx.project_context`, which `/clear` does not touch)."""
    if ctx.project_context is None:
        ctx.project_context = ProjectContext(ctx.workspace)
    return ctx.project_context


def build_system_prompt(session: "PromptHost") -> str:
    """Base prompt + tool guidance + project instructions + skills catalog, separated by blank lines."""
    parts = [BASE_SYSTEM_PROMPT.format(workspace=session.workspace), TOOLS_GUIDANCE]
    loaded = project_context_for(session.ctx).get()
    if loaded is not None:
        names = ", ".join(_shown(path, session) for path in loaded.files)
        parts.append(
            f"# Project instructions\n\nInstructions from the project's {names}. Follow them; where they "
            f"differ from the defaults above, they win.\n\n{loaded.text.strip()}"
        )
    catalog = catalog_for(session.ctx)
    text = catalog_text(catalog.skills)
    if text:
        parts.append(text)
    _sync_skill_commands(session)
    return "\n\n".join(parts)


def context_notices(session: "PromptHost") -> list["Notice"]:
    """Warnings to show at start-up: skipped skills, a truncated AGENTS.md."""
    from tui_agent.core.events import Notice

    notices = [Notice(text, "warning") for text in catalog_for(session.ctx).warnings]
    context = project_context_for(session.ctx)
    loaded = context.get()
    notices += [Notice(text, "warning") for text in context.warnings]
    if loaded is not None and loaded.truncated:
        names = ", ".join(_shown(path, session) for path in loaded.files)
        notices.append(Notice(f"Project instructions ({names}) are over 64 KB; only the first 64 KB are used.",
                              "warning"))
    return notices


def _shown(path, session: "PromptHost") -> str:
    try:
        return path.relative_to(session.workspace).as_posix()
    except ValueError:
        return str(path)


def _sync_skill_commands(session: "PromptHost") -> None:
    """Keep `/<skill-id>` commands in step with the catalog, once builtin commands are registered."""
    if session.skill_commands is None:
        return
    from tui_agent.core.agent.builtin_commands import sync_skill_commands

    sync_skill_commands(session)


def base_breakdown(session: "PromptHost") -> BaseBreakdown:
    """The base of `session`'s next call, each part measured from where it comes from."""
    
    system = text_tokens(session.system_prompt())
    project = skills = 0
    if session.system_prompt_builder is build_system_prompt:  # only that builder adds these parts
        from tui_agent.core.tools.skill_catalog import catalog_for, catalog_text

        loaded = project_context_for(session.ctx).get()
        project = text_tokens(loaded.text) if loaded is not None else 0
        skills = text_tokens(catalog_text(catalog_for(session.ctx).skills))
    schemas = session.tools.schemas()
    mcp = [s for s in schemas if str(s.get("name", "")).startswith("mcp__")]
    builtin = [s for s in schemas if not str(s.get("name", "")).startswith("mcp__")]
    tools_all = tools_tokens(schemas)
    mcp_tokens = tools_tokens(mcp) if mcp else 0
    return BaseBreakdown(system_prompt=max(system - project - skills, 0), project_context=project, skills=skills,
                         builtin_tools=max(tools_all - mcp_tokens, 0) if builtin else 0, mcp_tools=mcp_tokens)
