"""The engine's slash commands: `/permissions`, `/skills`, `/init` and one `/<skill-id>` per skill.

They only need the session, so every face (the TUI's completion and palette, headless, tests) shares
them through `session.commands`. Skill commands follow the catalog: when a skill is added or removed
on disk, `sync_skill_commands` (run by the system prompt builder and by `/skills`) updates them.
"""

from __future__ import annotations

import re

from tui_agent.core.agent.commands import Command, CommandHost, CommandResult, PromptHost, SkillCommandState
from tui_agent.core.access.rules import Rule
from tui_agent.core.tools.skill_catalog import catalog_for
from tui_agent.core.formats import plural

_COMMAND_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")

# Claude Code's (old) /init prompt, aimed at AGENTS.md, the file every agent reads.
INIT_PROMPT = """Please analyze this codebase and create an AGENTS.md file, which will be given to future instances of coding agents (tui-agent, Claude Code, Codex and others) to operate in this repository.

What to add:
1. Commands that will be commonly used, such as how to build, lint, and run tests. Include the necessary commands to develop in this codebase, such as how to run a single test.
2. High-level code architecture and structure so that future instances can be productive more quickly. Focus on the "big picture" architecture that requires reading multiple files to understand.

Usage notes:
- If there's already an AGENTS.md (or a CLAUDE.md), suggest improvements to it, and update AGENTS.md rather than starting over.
- When you make the initial AGENTS.md, do not repeat yourself and do not include obvious instructions like "Provide helpful error messages to users", "Write unit tests for all new utilities", "Never include sensitive information (API keys, tokens) into code or docs".
- Avoid listing every component or file structure that can be easily discovered.
- Don't include generic development practices.
- If there are Cursor rules (in .cursor/rules/ or in .cursorrules), Copilot rules (in .github/copilot-instructions.md) or a CLAUDE.md, make sure to include the important parts.
- If there is a README.md, make sure to include the important parts.
- Do not make up information such as "Common Development Tasks", "Tips for Development", "Support and Documentation" unless this is expressly included in other files that you read.
- Be sure to prefix the file with the following text:

```
# AGENTS.md

This file provides guidance to coding agents when working with code in this repository.
```"""

PERMISSIONS_USAGE = (
    "Usage: /permissions allow <rule> · /permissions deny <rule> · /permissions remove <rule>\n"
    "Rules: Tool or Tool(pattern), e.g. Bash(pytest:*), Bash(git status), Read(.env), Edit(src/**/*.py), "
    "Write(/tmp/out.txt)"
)


def register_builtin_commands(session: CommandHost) -> None:
    """Add `/permissions`, `/skills`, `/init` and the skill commands to `session.commands`."""
    session.commands.register(Command(
        "permissions", "Show the permission rules, or allow / deny / remove one", _permissions,
        "[allow|deny|remove <rule>]",
    ))
    session.commands.register(Command("skills", "List the available skills", _skills))
    session.commands.register(Command("compact", "Compact now: drop older turns with a summary in their place",
                                      _compact, "[focus]"))
    session.commands.register(Command("undo-compaction", "Take the last compaction event back (what it costs is said)",
                                      _undo_compaction))
    session.commands.register(Command("approve", "Ask before each compaction event (on/off); while one waits: "
                                      "yes, edit or later", _approve, "[on|off|yes|edit|later]"))
    session.commands.register(Command("summary", "Show the summary draft, or replace its text before it is sent",
                                      _summary, "[edit TEXT]"))
    session.commands.register(Command("init", "Ask the model to write an AGENTS.md for this project", _init))
    session.commands.register(Command("budget", "Show or set the working budget (tokens) that compaction keeps to",
                                      _budget, "[TOKENS]"))
    if session.skill_commands is None:
        session.skill_commands = SkillCommandState()
    # `/<skill>` commands are registered by `sync_skill_commands`, which the factory's background start
    # runs (scanning skills imports YAML: not on the path to the first frame).


def sync_skill_commands(session: PromptHost) -> None:
    """Register `/<id>` for each skill (once per catalog version); ids that clash with a command are left out."""
    catalog = catalog_for(session.ctx)
    if session.skill_commands is None:
        session.skill_commands = SkillCommandState()
    state = session.skill_commands
    if state.version == catalog.version:
        return
    for name in state.names:
        session.commands.unregister(name)
    names: set[str] = set()
    for skill in catalog.skills:
        if not _COMMAND_NAME.match(skill.id) or session.commands.get(skill.id) is not None:
            continue
        description = skill.description or f"Run the {skill.id} skill"
        session.commands.register(Command(skill.id, f"{description} (skill)", _skill_handler(skill.id), "[args]"))
        names.add(skill.id)
    state.version, state.names = catalog.version, names


def _skill_handler(skill_id: str):
    def run(session: CommandHost, args: str) -> CommandResult:
        skill = catalog_for(session.ctx).get(skill_id)
        if skill is None:
            return CommandResult(f"The skill {skill_id} is no longer available.", level="error")
        # The prompt is what the user would type; the system prompt tells the model that `/<id>` means
        # "load that skill with the Skill tool", so the body arrives as a visible tool call.
        prompt = f"/{skill_id} {args}".rstrip()
        return CommandResult(f"Running skill {skill_id}", prompt=prompt)

    return run


def _permissions(session: CommandHost, args: str) -> CommandResult:
    policy = session.permissions
    action, _, rest = args.strip().partition(" ")
    action = action.lower()
    if not action:
        return CommandResult(describe_permissions(session))
    if action not in ("allow", "deny", "remove"):
        return CommandResult(f"Unknown /permissions action {action!r}.\n{PERMISSIONS_USAGE}", level="error")
    if not rest.strip():
        return CommandResult(f"/permissions {action} needs a rule.\n{PERMISSIONS_USAGE}", level="error")
    try:
        rule = Rule.parse(rest, source="session")
    except ValueError as error:
        return CommandResult(f"{error}\n{PERMISSIONS_USAGE}", level="error")
    if action == "remove":
        if policy.remove_rule(rule):
            return CommandResult(f"Removed the rule {rule}.")
        return CommandResult(f"No rule {rule} to remove.", level="warning")
    if not policy.add_rule(rule, action):  # type: ignore[arg-type]
        return CommandResult(f"{rule} is already a {action} rule.")
    note = " (deny rules win over allow rules)" if action == "allow" and rule in policy.deny_rules else ""
    return CommandResult(f"Added {action} rule {rule} for this session{note}.")


def describe_permissions(session: CommandHost) -> str:
    """The `/permissions` report: the mode in words, then the rules and where they come from."""
    policy = session.permissions
    if policy.mode == "headless":
        mode = ("headless with --allow-write: Write, Edit and Bash run inside the workspace"
                if policy.allow_write else "headless: tools that change things are denied (no --allow-write)")
    elif policy.mode == "allow_all":
        mode = "allow all: every tool runs without asking (file changes outside the workspace still need a rule)"
    else:
        mode = ("interactive: read-only tools inside the workspace run without asking; Write, Edit, Bash and "
                "anything outside the workspace ask first")
    lines = [f"Permission mode: {mode}", ""]
    for title, rules in (("Allow rules", policy.allow_rules), ("Deny rules", policy.deny_rules)):
        lines.append(f"{title}:")
        if not rules:
            lines.append("  (none)")
        for rule in rules:
            origin = f"{rule.source}, the project's, approved by you" if rule.project and title == "Allow rules" else rule.source
            lines.append(f"  {rule}  ({origin})")
    try:
        from tui_agent.core.access.settings import settings_files

        files = ", ".join(str(path) for path in settings_files(session.workspace))
        lines += ["", f"Settings files: {files}"]
    except Exception:  # noqa: BLE001 - the report must show even without a config dir
        pass
    lines += ["", PERMISSIONS_USAGE]
    return "\n".join(lines)


async def _compact(session: CommandHost, args: str) -> CommandResult:
    return CommandResult(await session.compact_now(args))


def _undo_compaction(session: CommandHost, args: str) -> CommandResult:
    """`/undo-compaction`: the state before the last event returns and holds (`compaction_control`)."""
    from tui_agent.core.agent.compaction_control import undo_compaction

    said = undo_compaction(session)
    return CommandResult(said, level="info" if said.startswith("Took back") else "warning")


APPROVE_USAGE = ("Usage: /approve (on or off) · /approve on · /approve off · while a compaction waits: /approve yes, "
                 "/approve edit (pin / exclude first) or /approve later (send this call whole)")


def _approve(session: CommandHost, args: str) -> CommandResult:
    """`/approve [on|off]`: ask before each compaction event (only a face with a user can be asked). The
    answers (`yes`, `edit`, `later`) are the face's to take while it waits; here nothing waits."""
    word = args.strip().lower()
    if word in ("yes", "edit", "later", "approve", "postpone"):
        return CommandResult("Nothing waits for your approval: with /approve on, a compaction that is due asks "
                             "first.", level="warning")
    if word not in ("", "on", "off"):
        return CommandResult(APPROVE_USAGE, level="warning")
    session.approve_compaction = not session.approve_compaction if not word else word == "on"
    if not session.approve_compaction:
        return CommandResult("Approve before compacting: off. Events run when they are due.")
    if session.ask_approval is None:
        return CommandResult("Approve before compacting: on, but nobody can be asked here: events run when they "
                             "are due.", level="warning")
    return CommandResult("Approve before compacting: on. When an event is due, the turn waits and the chat says so: "
                         "/approve yes (Alt+Y) compacts, /approve edit (F4) pins or excludes first, /approve later "
                         "(Alt+L) sends the call whole.")


def _budget(session: CommandHost, args: str) -> CommandResult:
    """`/budget [TOKENS]`: the working budget, its origin and the window; with a size, the new budget."""
    from tui_agent.core.compaction.working_budget import below_base, budget_command

    policy = getattr(session.compactor, "policy", None) or session.compact_policy
    if policy is None:
        return CommandResult("This compaction mode has no working budget.", level="warning")
    changed, text = budget_command(policy, args)
    below = below_base(changed, *_base_now(session)) if changed is not None else None
    if below:  # one line, and the budget stays as it was
        return CommandResult(f"{below}. The working budget stays {policy.room:,}.", level="warning")
    if changed is not None:
        session.compact_policy = changed
        if hasattr(session.compactor, "policy"):
            session.compactor.policy = changed  # the marks move from the next call; decisions made stay
    return CommandResult(text, level="warning" if changed is None and args.strip() else "info")


def _base_now(session: CommandHost) -> tuple[int, int, int]:
    """(system prompt, tool definitions, the turn in progress: what no compaction may take) in tokens."""
    from tui_agent.core.tokens import message_tokens, text_tokens, tools_tokens

    in_progress = 0
    if session.running:
        in_progress = sum(map(message_tokens, session.history[session.plan_call().plan.protected_from:]))
    return text_tokens(session.system_prompt()), tools_tokens(session.tools.schemas()), in_progress


SUMMARY_EDIT_USAGE = "Usage: /summary edit TEXT (in the TUI, /summary edit alone opens the draft in an editor)"


def _summary(session: CommandHost, args: str) -> CommandResult:
    """`/summary`: the draft and its state; `/summary edit TEXT`: the user's text replaces it."""
    verb, _, text = args.partition(" ")
    if verb == "edit":
        if not text.strip():
            return CommandResult(SUMMARY_EDIT_USAGE, level="warning")
        told = session.edit_summary_draft(text)
        return CommandResult(told, level="info" if told.startswith("Summary draft edited") else "warning")
    if args:
        return CommandResult(SUMMARY_EDIT_USAGE, level="warning")
    draft = session.summary_draft()
    if draft is None:
        return CommandResult("No summary draft yet: /compact writes one (so does an event with --compact-summary).")
    body = draft.text or ("(being written…)" if draft.state == "writing" else "(no text)")
    return CommandResult(f"{draft.line()}\n\n{body}")


def _skills(session: CommandHost, args: str) -> CommandResult:
    catalog = catalog_for(session.ctx)
    sync_skill_commands(session)
    lines: list[str] = []
    if not catalog.skills:
        lines.append(
            "No skills found. Add one as .agents/skills/<name>/SKILL.md (or .claude/skills/<name>/SKILL.md) "
            "with a frontmatter like:\n---\nname: review\ndescription: Review a change\n---"
        )
    else:
        lines.append(f"{len(catalog.skills)} skill{'s' if len(catalog.skills) != 1 else ''}:")
        for skill in catalog.skills:
            label = skill.id if skill.name == skill.id else f"{skill.id} ({skill.name})"
            description = f" — {skill.description}" if skill.description else ""
            note = " [truncated at 32KB]" if skill.truncated else ""
            lines.append(f"  /{label}{description}{note}\n      {skill.path}")
    for warning in catalog.warnings:
        lines.append(f"Warning: {warning}")
    return CommandResult("\n".join(lines), level="warning" if catalog.warnings else "info")


INIT_SHOWN = "/init: asking the model to write AGENTS.md"


def _init(session: CommandHost, args: str) -> CommandResult:
    prompt = INIT_PROMPT
    if args.strip():
        prompt += f"\n\nAdditional instructions from the user: {args.strip()}"
    target = session.workspace / "AGENTS.md"
    before = _file_state(target)

    def outcome() -> str | None:
        after = _file_state(target)
        if after == before:
            return ("Nothing was written: AGENTS.md is unchanged." if before is not None
                    else "Nothing was written: there is still no AGENTS.md.")
        lines = target.read_text(encoding="utf-8", errors="replace").count("\n") if after is not None else 0
        return f"AGENTS.md {'updated' if before is not None else 'written'} ({plural(lines, 'line')}): {target}"

    shown = INIT_SHOWN + (f" ({args.strip()})" if args.strip() else "")
    return CommandResult(prompt=prompt, shown=shown, after=outcome)


def _file_state(path) -> tuple[int, int, bytes] | None:
    """(mtime, size, bytes) of a file, None when there is none: what tells a written file from an old one."""
    try:
        stat = path.stat()
        return stat.st_mtime_ns, stat.st_size, path.read_bytes() if stat.st_size <= 1_000_000 else b""
    except OSError:
        return None
