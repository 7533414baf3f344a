"""A warning when the configured budget cannot work: `--context-window 100`, or a base bigger than the window;
and a refusal when the working budget the user set is below what every call sends (`--budget 1000`, `/budget
8000`: accepted without a word, while the meter blamed "the newest round").

Compaction keeps at least a floor of messages, so such a session would not fail at once: every call would
just be over budget, and a real API would refuse it with an error the user cannot connect to the flag
they typed. The checks run when the session opens (a refusal, usage error), once start-up work is done
(project context, skills and MCP tool schemas are all part of the base: a warning then) and after
`/model`, and say which numbers clash and which flag changes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.core.compaction.working_budget import MIN_MESSAGE_ROOM, below_base
from tui_agent.core.events import Notice

if TYPE_CHECKING:
    from tui_agent.core.agent.session import Session

FIX = "raise --context-window (CONTEXT_WINDOW_TOKENS) or lower --max-output-tokens (MAX_OUTPUT_TOKENS)"


def impossible_budget(window: int, reserve: int, system: int, tools: int) -> str | None:
    """The clash when no request can fit at all (a usage error at start-up: nothing should run)."""
    text = budget_warning(window, reserve, system, tools)
    return text if text and text.startswith(IMPOSSIBLE) else None


def session_budget_error(session: "Session") -> str | None:
    """`impossible_budget` for a built session (its base without MCP tools: those only add to it)."""
    system, tools = session.baseline_tokens()
    return impossible_budget(session.provider.context_window, session.provider.max_output_tokens, system, tools)


IMPOSSIBLE = "Impossible budget"


def budget_warning(window: int, reserve: int, system: int, tools: int) -> str | None:
    """One sentence naming the clash, or None when the budget leaves room for a conversation."""
    base = system + tools
    if window <= reserve:
        return (f"{IMPOSSIBLE}: the context window ({window:,} tokens) is not larger than the output "
                f"reserve ({reserve:,} tokens), so no request can fit; {FIX}.")
    room = window - reserve - base
    if room <= 0:
        return (f"{IMPOSSIBLE}: the base of every call (system prompt ≈{system:,} + tool definitions "
                f"≈{tools:,} = ≈{base:,} tokens) does not fit in the {window:,}-token window less the "
                f"{reserve:,}-token output reserve; every call will be over budget. {FIX[0].upper()}{FIX[1:]}.")
    if room < MIN_MESSAGE_ROOM:
        return (f"Tight budget: the {window:,}-token window leaves only ≈{room:,} tokens for the conversation "
                f"after the base (≈{base:,}) and the output reserve ({reserve:,}); {FIX}.")
    return None


def session_below_base(session: "Session") -> str | None:
    """`below_base` for a session's own policy and base (a refusal when the session opens)."""
    system, tools = session.baseline_tokens()
    return below_base(session.policy_in_force(), system, tools)


def session_budget_notices(session: "Session") -> list[Notice]:
    system, tools = session.baseline_tokens()
    provider = session.provider
    text = budget_warning(provider.context_window, provider.max_output_tokens, system, tools)
    below = session_below_base(session)  # MCP tools joined the base since the session opened
    return ([Notice(text, "warning")] if text else []) + ([Notice(f"The working budget is too small now: {below} "
                                                                  "(/budget sets another).", "warning")] if below else [])


async def check_budget(session: "Session") -> list[Notice]:
    """A `background_start` task: queued last, so the base includes project context and MCP tools."""
    return session_budget_notices(session)
