"""A working budget below what every call sends is refused, and the meter names the real cause (issue 40:
`--budget 1000` and `/budget 8000` were accepted without a word, and the meter blamed "the newest round").
The flag or variable: a usage error (rc 2) in one line naming the base. `/budget N`: one chat line, the
budget unchanged. What is known only later (MCP tools joining the base): said plainly once known."""

from __future__ import annotations

from pathlib import Path

from tests.faces.test_demo_and_headless import cli
from tests.journal.helpers import tools as journal_tools
from tests.turns import turn_events
from tui_agent.core.agent.budget_check import check_budget
from tui_agent.core.agent.builtin_commands import register_builtin_commands
from tui_agent.core.agent.session import Session
from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.paths import sessions_dir
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply

BIG_SYSTEM = "You are a careful agent. " * 1_600  # ≈10k tokens of system prompt, as a large CLAUDE.md makes


def session_with(tmp_path: Path, system: str = "You are a test agent.", replies=(), **kwargs) -> Session:
    provider = ScriptedProvider(replies=list(replies))
    provider.context_window, provider.max_output_tokens = 200_000, 4_000
    session = Session(provider, journal_tools(), tmp_path, system_prompt_builder=lambda s: system, **kwargs)
    register_builtin_commands(session)  # (what the door's factory does: `/budget` among them)
    return session


def test_the_flag_below_the_base_is_a_usage_error_naming_the_base(tmp_path: Path) -> None:
    done = cli(["--budget", "1000", "-p", "what is here?", "--model", "demo"], tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --budget 1,000 is below what every call sends"), lines
    assert "system prompt ≈" in lines[0] and "tool definitions ≈" in lines[0] and "give at least" in lines[0]
    assert not sessions_dir().exists() or not list(sessions_dir().glob("*.jsonl"))  # nothing ran or was saved
    env = cli(["-p", "what is here?", "--model", "demo"], tmp_path, env_extra={"COMPACT_BUDGET": "3500"})
    assert env.returncode == 2 and env.stderr.startswith("error: COMPACT_BUDGET 3,500 leaves under 1,000 tokens")
    fine = cli(["--budget", "20k", "-p", "what is here?", "--model", "demo"], tmp_path)
    assert fine.returncode == 0, fine.stderr


async def test_budget_below_the_base_is_one_line_and_changes_nothing(tmp_path: Path) -> None:
    session = session_with(tmp_path, BIG_SYSTEM)
    before = session.compactor.policy
    result = await session.commands.run(session, "/budget 8000")
    assert result is not None and result.level == "warning"
    assert result.text.startswith("/budget 8,000 is below what every call sends before any message: system prompt ≈")
    assert result.text.endswith(f"The working budget stays {before.room:,}.") and "\n" not in result.text
    assert session.compactor.policy is before and session.compact_policy is None  # (none was set)
    accepted = await session.commands.run(session, "/budget 20000")
    assert accepted is not None and accepted.text.startswith("Working budget set: budget 20.0k")
    assert session.compactor.policy.budget_tokens == 20_000


async def test_during_a_turn_the_turn_in_progress_counts_too(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("line of the big file\n" * 2_000)  # ≈10k tokens read in this turn
    session = session_with(tmp_path, replies=[tool_reply("Read", {"file_path": "big.txt"}, "t1"), text_reply("ok")])
    await turn_events(session, "read big.txt")
    session.history.pop()  # the turn as it is between its tool result and its next call
    session.running = True  # as when `/budget` comes in while this turn still works (ACP, the TUI's queue)
    result = await session.commands.run(session, "/budget 12000")
    session.running = False
    assert result is not None and result.level == "warning" and "+ the turn in progress ≈" in result.text, result


async def test_mcp_tools_that_push_the_base_over_the_budget_are_told_once_known(tmp_path: Path) -> None:
    session = session_with(tmp_path, compact_policy=CompactPolicy(budget_tokens=5_000, budget_origin="flag --budget"))
    assert await check_budget(session) == []  # fits while the base is the built-in tools
    from tests.core.helpers import EchoTool

    for n in range(12):  # an MCP server's tools join the base once it has started
        tool = EchoTool()
        tool.name, tool.description = f"mcp__wiki__page_{n}", "Fetch one page of the wiki. " * 40
        session.tools.add(tool)
    notices = await check_budget(session)
    assert len(notices) == 1 and notices[0].level == "warning", notices
    assert notices[0].text.startswith("The working budget is too small now: --budget 5,000")


async def test_the_meter_names_the_base_not_the_newest_round(tmp_path: Path) -> None:
    """A budget the base fits in but whose high mark it passes: every call is over the mark, and the
    reason says it is the system prompt and tools."""
    policy = CompactPolicy(budget_tokens=12_500, budget_origin="flag --budget", high_water=0.65, low_water=0.4)
    session = session_with(tmp_path, BIG_SYSTEM, replies=[text_reply("one")], compact_policy=policy)
    await turn_events(session, "hello")
    quiet = session.ledger.current.quiet if session.ledger.current else ""
    assert "system prompt and tools alone are" in quiet and "newest round" not in quiet, quiet

