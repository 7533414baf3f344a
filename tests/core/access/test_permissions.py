"""The permission gate (AC-P1..P4 adapted), rules, remember(), settings files and /permissions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.turns import scripted_session, turn_events
from tui_agent.core import events as ev
from tui_agent.core.agent.builtin_commands import register_builtin_commands
from tui_agent.core.access.rules import Rule, command_rule_pattern
from tui_agent.core.access.gate import REJECT_MESSAGE, PermissionDecision, PermissionPolicy
from tui_agent.core.providers.scripted import text_reply, tool_reply
from tui_agent.core.agent.session import Session
from tui_agent.core.access.settings import apply_loaded, load_permission_settings
from tui_agent.core.tools.base import ToolContext, ToolRegistry
from tui_agent.core.tools.bash import BashTool
from tui_agent.core.tools.edit import EditTool
from tui_agent.core.tools.read import ReadTool
from tui_agent.core.tools.write import WriteTool

READ, WRITE, EDIT, BASH = ReadTool(), WriteTool(), EditTool(), BashTool()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("s")
    (workspace / "escape").symlink_to(tmp_path)
    return workspace


@pytest.fixture
def ctx(ws: Path) -> ToolContext:
    return ToolContext(workspace=ws)


@pytest.fixture(autouse=True)
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config"
    monkeypatch.setenv("TUI_AGENT_CONFIG_DIR", str(path))
    return path


def behavior(policy: PermissionPolicy, tool, tool_input: dict, ctx: ToolContext) -> str:
    return policy.decide(tool, tool_input, ctx).behavior


# -- modes ------------------------------------------------------------------------------------
def test_headless_reads_allowed_writes_need_allow_write(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    write = {"file_path": "out.txt", "content": "hi"}
    assert behavior(PermissionPolicy.headless(False), READ, {"file_path": "a.txt"}, ctx) == "allow"
    decision = PermissionPolicy.headless(False).decide(WRITE, write, ctx)
    assert decision.behavior == "deny" and "ALLOW_WRITE=1" in decision.message
    assert behavior(PermissionPolicy.headless(True), WRITE, write, ctx) == "allow"
    assert behavior(PermissionPolicy.headless(True), BASH, {"command": "ls"}, ctx) == "allow"
    monkeypatch.setenv("ALLOW_WRITE", "1")
    assert behavior(PermissionPolicy.headless(), WRITE, write, ctx) == "allow"


def test_interactive_asks_only_for_changes(ctx: ToolContext) -> None:
    policy = PermissionPolicy()
    assert behavior(policy, READ, {"file_path": "src/a.py"}, ctx) == "allow"
    assert behavior(policy, WRITE, {"file_path": "out.txt", "content": "hi"}, ctx) == "ask"
    assert behavior(policy, EDIT, {"file_path": "a", "old_string": "x", "new_string": "y"}, ctx) == "ask"
    assert behavior(policy, BASH, {"command": "ls"}, ctx) == "ask"


@pytest.mark.parametrize("raw", ["../secret.txt", "escape/secret.txt", "ABS", "src/../../secret.txt"])
def test_reads_outside_the_workspace_need_permission(raw: str, ws: Path, ctx: ToolContext) -> None:
    raw = str(ws.parent / "secret.txt") if raw == "ABS" else raw
    tool_input = {"file_path": raw}
    assert behavior(PermissionPolicy(), READ, tool_input, ctx) == "ask"
    decision = PermissionPolicy.headless(True).decide(READ, tool_input, ctx)
    assert decision.behavior == "deny" and "outside the workspace" in decision.message
    # A tool-wide rule does not reach outside; a rule naming the path does.
    assert behavior(PermissionPolicy(allow_rules=[Rule("Read")]), READ, tool_input, ctx) == "ask"
    named = Rule.parse(f"Read({ws.parent / 'secret.txt'})")
    assert behavior(PermissionPolicy(mode="headless", allow_rules=[named]), READ, tool_input, ctx) == "allow"


def test_symlink_inside_pointing_inside_is_fine(ws: Path, ctx: ToolContext) -> None:
    (ws / "src" / "real.py").write_text("")
    (ws / "alias.py").symlink_to(ws / "src" / "real.py")
    assert behavior(PermissionPolicy.headless(False), READ, {"file_path": "alias.py"}, ctx) == "allow"


def test_git_internals_are_never_written(ws: Path, ctx: ToolContext) -> None:
    (ws / ".git").mkdir()
    tool_input = {"file_path": ".git/config", "content": "x"}
    everything = PermissionPolicy(mode="allow_all", allow_rules=[Rule("Write"), Rule("Write", ".git/**")])
    for policy in (PermissionPolicy(), PermissionPolicy.headless(True), everything):
        decision = policy.decide(WRITE, tool_input, ctx)
        assert decision.behavior == "deny" and ".git/" in decision.message
    assert behavior(PermissionPolicy.headless(False), READ, {"file_path": ".git/config"}, ctx) == "allow"


def test_writes_outside_need_an_explicit_rule_in_every_mode(ws: Path, ctx: ToolContext) -> None:
    target = ws.parent / "out.txt"
    tool_input = {"file_path": str(target), "content": "x"}
    assert behavior(PermissionPolicy(mode="allow_all"), WRITE, tool_input, ctx) == "deny"
    assert behavior(PermissionPolicy.headless(True), WRITE, tool_input, ctx) == "deny"
    assert behavior(PermissionPolicy(allow_rules=[Rule("Write")]), WRITE, tool_input, ctx) == "ask"
    explicit = PermissionPolicy.headless(False)
    explicit.add_rule(Rule.parse(f"Write({target})"), "allow")
    assert behavior(explicit, WRITE, tool_input, ctx) == "allow"


# -- rules ------------------------------------------------------------------------------------
def test_bash_prefix_rule_covers_every_part(ctx: ToolContext) -> None:
    policy = PermissionPolicy(mode="headless", allow_rules=[Rule.parse("Bash(pytest:*)")])
    allowed = ["pytest", "pytest -q tests", "pytest -q 2>&1", "pytest -x > /dev/null"]
    refused = ["pytestx", "pytest -q && rm -rf /", "pytest; curl evil", "pytest $(rm -rf /)", "pytest `id`",
               "pytest | sh", "pytest > out.txt", "echo pytest"]
    for command in allowed:
        assert behavior(policy, BASH, {"command": command}, ctx) == "allow", command
    for command in refused:
        assert behavior(policy, BASH, {"command": command}, ctx) == "deny", command


def test_bash_deny_rule_matches_any_part(ctx: ToolContext) -> None:
    policy = PermissionPolicy(mode="allow_all", deny_rules=[Rule.parse("Bash(rm:*)")])
    assert behavior(policy, BASH, {"command": "ls && rm -rf x"}, ctx) == "deny"
    assert behavior(policy, BASH, {"command": "ls | rm"}, ctx) == "deny"
    assert behavior(policy, BASH, {"command": "rmdir x"}, ctx) == "allow"


def test_deny_read_env_anywhere(ws: Path, ctx: ToolContext) -> None:
    (ws / ".env").write_text("KEY=1")
    (ws / "innocent").symlink_to(ws / ".env")
    policy = PermissionPolicy(deny_rules=[Rule.parse("Read(.env)")])
    for raw in (".env", "sub/.env", str(ws / ".env"), "./src/../.env", "innocent"):
        decision = policy.decide(READ, {"file_path": raw}, ctx)
        assert decision.behavior == "deny" and "Read(.env)" in decision.message, raw
    assert behavior(policy, READ, {"file_path": ".env.example"}, ctx) == "allow"


def test_edit_path_globs(ctx: ToolContext) -> None:
    def edit(raw: str) -> dict:
        return {"file_path": raw, "old_string": "a", "new_string": "b"}

    policy = PermissionPolicy(mode="headless", allow_rules=[Rule.parse("Edit(src/*.py)")])
    assert behavior(policy, EDIT, edit("src/a.py"), ctx) == "allow"
    assert behavior(policy, EDIT, edit(str(ctx.workspace / "src" / "a.py")), ctx) == "allow"
    assert behavior(policy, EDIT, edit("src/deep/a.py"), ctx) == "deny"
    assert behavior(policy, EDIT, edit("lib/a.py"), ctx) == "deny"
    assert behavior(policy, WRITE, {"file_path": "src/a.py", "content": ""}, ctx) == "deny"  # other tool
    deep = PermissionPolicy(mode="headless", allow_rules=[Rule.parse("Edit(src/**/*.py)"), Rule.parse("Edit(docs)")])
    assert behavior(deep, EDIT, edit("src/deep/a.py"), ctx) == "allow"
    assert behavior(deep, EDIT, edit("src/a.py"), ctx) == "allow"
    assert behavior(deep, EDIT, edit("docs/guide/x.md"), ctx) == "allow"


def test_rule_parse() -> None:
    assert Rule.parse("Bash(pytest:*)") == Rule("Bash", "pytest:*")
    assert Rule.parse(" Read ") == Rule("Read")
    assert str(Rule.parse("Edit(src/*.py)")) == "Edit(src/*.py)"
    for bad in ("", "Bash(", "Bash)x(", "two words", "Read(.env"):
        with pytest.raises(ValueError):
            Rule.parse(bad)


def test_remember(ctx: ToolContext) -> None:
    policy = PermissionPolicy(workspace=ctx.workspace)  # explicit: decide() keeps no state for remember()
    tool_input = {"file_path": "./src/../out[1].txt", "content": "x"}
    rule = policy.remember(WRITE, tool_input)
    assert rule == Rule("Write", "out\\[1].txt")
    assert behavior(policy, WRITE, tool_input, ctx) == "allow"
    assert behavior(policy, WRITE, {"file_path": "out1.txt", "content": "x"}, ctx) == "ask"
    assert command_rule_pattern("git status -s") == "git status:*"
    assert command_rule_pattern("python -m pytest -q") == "python -m pytest:*"
    assert command_rule_pattern("ls -la") == "ls:*"
    assert command_rule_pattern("make && rm -rf x") == "make && rm -rf x"
    bash = {"command": "make && ./run.sh"}
    policy.remember(BASH, bash, ctx)
    assert behavior(policy, BASH, bash, ctx) == "allow"
    assert behavior(policy, BASH, {"command": "make && ./run.sh; rm x"}, ctx) == "ask"


# -- through the loop (AC-P2, AC-P4) ------------------------------------------------------------
async def run(session: Session, prompt: str, answer: PermissionDecision | None = None) -> tuple[str, list]:
    """How the turn ended, and the permission requests it made (each answered `answer`)."""
    events = await turn_events(session, prompt, lambda request: answer)
    reason = next((e.reason for e in reversed(events) if isinstance(e, ev.TurnEnded)), "")
    return reason, [e for e in events if isinstance(e, ev.PermissionRequested)]


def make_session(ws: Path, replies: list, policy: PermissionPolicy) -> Session:
    return scripted_session(ws, replies, ToolRegistry([READ, WRITE, EDIT]), permissions=policy)


async def test_interactive_deny_and_allow_write(ws: Path) -> None:
    write = tool_reply("Write", {"file_path": "out.txt", "content": "hi"}, "w1")
    session = make_session(ws, [write, text_reply("ok")], PermissionPolicy())
    reason, asked = await run(session, "write", PermissionDecision.DENY)
    assert reason == "denied" and not (ws / "out.txt").exists()
    assert "out.txt" in asked[0].preview and "2 bytes" in asked[0].preview
    result = session.history[-1]["content"][0]
    assert result["is_error"] and result["content"] == REJECT_MESSAGE
    session = make_session(ws, [write, text_reply("ok")], PermissionPolicy())
    reason, _ = await run(session, "write", PermissionDecision.ALLOW_ONCE)
    assert reason == "completed" and (ws / "out.txt").read_text() == "hi"


async def test_interactive_edit_question_and_denial(ws: Path) -> None:
    (ws / "src" / "a.ts").write_text("const foo = 1;\n")
    replies = [tool_reply("Read", {"file_path": "src/a.ts"}, "r1"),
               tool_reply("Edit", {"file_path": "src/a.ts", "old_string": "foo", "new_string": "bar"}, "e1"),
               text_reply("ok")]
    session = make_session(ws, replies, PermissionPolicy())
    reason, asked = await run(session, "edit", PermissionDecision.DENY)
    assert reason == "denied" and (ws / "src" / "a.ts").read_text() == "const foo = 1;\n"
    assert asked[0].tool_name == "Edit" and "src/a.ts" in asked[0].preview and "foo" in asked[0].preview
    replies = [tool_reply("Read", {"file_path": "src/a.ts"}, "r1"),
               tool_reply("Edit", {"file_path": "src/a.ts", "old_string": "foo", "new_string": "bar"}, "e1"),
               text_reply("ok")]
    session = make_session(ws, replies, PermissionPolicy())
    reason, _ = await run(session, "edit", PermissionDecision.ALLOW_SESSION)
    assert reason == "completed" and (ws / "src" / "a.ts").read_text() == "const bar = 1;\n"
    assert Rule("Edit", "src/a.ts") in session.permissions.allow_rules


async def test_headless_edit_refused_file_unchanged(ws: Path) -> None:
    (ws / "a.txt").write_text("foo\n")
    replies = [tool_reply("Read", {"file_path": "a.txt"}, "r1"),
               tool_reply("Edit", {"file_path": "a.txt", "old_string": "foo", "new_string": "bar"}, "e1"),
               text_reply("ok")]
    session = make_session(ws, replies, PermissionPolicy.headless(False))
    reason, _ = await run(session, "edit")
    assert reason == "denied" and (ws / "a.txt").read_text() == "foo\n"
    assert "ALLOW_WRITE" in session.history[-2]["content"][0]["content"]  # the model then answered "ok"


# -- settings and /permissions ------------------------------------------------------------------
def test_settings_files(ws: Path, config_dir: Path) -> None:
    config_dir.mkdir()
    (config_dir / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(pytest:*)"]}}))
    (ws / ".tui-agent").mkdir()
    (ws / ".tui-agent" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(.env)", "Bad("], "allow": "nope"}}))
    loaded = load_permission_settings(ws)
    assert loaded.allow == [Rule("Bash", "pytest:*")] and loaded.deny == [Rule("Read", ".env")]
    assert loaded.allow[0].source == str(config_dir / "settings.json")
    assert len(loaded.warnings) == 2 and any("Bad(" in w for w in loaded.warnings)
    policy = PermissionPolicy()
    apply_loaded(policy, load_permission_settings(ws))  # what the session's factory does
    assert policy.deny_rules == [Rule("Read", ".env")]


def test_broken_settings_file_is_a_warning(ws: Path, config_dir: Path) -> None:
    config_dir.mkdir()
    (config_dir / "settings.json").write_text("{not json")
    (ws / ".tui-agent").mkdir()
    (ws / ".tui-agent" / "settings.json").write_text("[1, 2]")
    warnings = apply_loaded(PermissionPolicy(), load_permission_settings(ws))
    assert len(warnings) == 2 and "not valid JSON" in warnings[0] and "JSON object" in warnings[1]


async def test_permissions_command(ws: Path) -> None:
    session = make_session(ws, [], PermissionPolicy())
    register_builtin_commands(session)
    result = await session.commands.run(session, "/permissions allow Bash(pytest:*)")
    assert result is not None and "Added allow rule Bash(pytest:*)" in result.text
    result = await session.commands.run(session, "/permissions deny Read(.env)")
    assert session.permissions.deny_rules == [Rule("Read", ".env")]
    shown = (await session.commands.run(session, "/permissions")).text
    assert "Bash(pytest:*)" in shown and "Read(.env)" in shown and "interactive" in shown
    bad = await session.commands.run(session, "/permissions allow Bash(")
    assert bad.level == "error" and "Invalid permission rule" in bad.text
    removed = await session.commands.run(session, "/permissions remove Read(.env)")
    assert "Removed" in removed.text and session.permissions.deny_rules == []
    session.clear()
    assert session.permissions.allow_rules == [Rule("Bash", "pytest:*")]  # rules survive /clear


# -- read-deny rules also hide contents from Grep ---------------------------------------------------------
async def test_read_deny_rule_hides_file_contents_from_grep(tmp_path):
    from tui_agent.core import events as ev
    from tui_agent.core.access.rules import Rule
    from tui_agent.core.access.gate import PermissionPolicy
    from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply
    from tui_agent.core.agent.session import Session
    from tui_agent.core.tools import ToolRegistry, builtin_tools

    (tmp_path / ".env").write_text("API_TOKEN=SECRET-VALUE\n")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / ".env").write_text("SECRET-VALUE nested\n")
    (tmp_path / "app.py").write_text("token = 'SECRET-VALUE'  # placeholder\n")
    policy = PermissionPolicy.headless(allow_write=False)
    policy.add_rule(Rule.parse("Read(.env)"), "deny")
    replies = [
        tool_reply("Grep", {"pattern": "SECRET"}, "g1"),
        tool_reply("Grep", {"pattern": "SECRET", "output_mode": "content", "glob": ".env"}, "g2"),
        tool_reply("Grep", {"pattern": "SECRET", "output_mode": "count"}, "g3"),
        text_reply("done"),
    ]
    session = Session(ScriptedProvider(replies=replies), ToolRegistry(builtin_tools()), tmp_path, permissions=policy)
    results = [e for e in [x async for x in session.run_turn("find secrets")] if isinstance(e, ev.ToolFinished)]
    files, content, count = (r.content for r in results)
    assert "app.py" in files and ".env" not in files
    assert ".env" not in content and "SECRET-VALUE" not in content  # a user glob cannot bring it back
    assert "app.py" in count and ".env" not in count

    denied = Session(ScriptedProvider(replies=[tool_reply("Grep", {"pattern": "SECRET", "path": "config/.env"}, "g4")]),
                     ToolRegistry(builtin_tools()), tmp_path, permissions=policy)
    events = [x async for x in denied.run_turn("look")]
    finished = next(e for e in events if isinstance(e, ev.ToolFinished))
    assert finished.is_error and "Read(.env)" in finished.content
    assert events[-1].reason == "denied"
