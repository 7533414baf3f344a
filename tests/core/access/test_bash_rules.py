"""Bash permission rules on shell words (issue 9, item 3): allow rules cover only commands whose words
say everything that runs; deny rules look through the usual respellings; Bash always runs /bin/bash."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui_agent.core.shell import words as shell_words
from tui_agent.core.access.rules import Rule, command_rule_pattern
from tui_agent.core.access.gate import PermissionPolicy
from tui_agent.core.tools.base import ToolContext
from tui_agent.core.tools.bash import BashTool, run_command

BASH = BashTool()


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path)


def decide(policy: PermissionPolicy, command: str, ctx: ToolContext):
    return policy.decide(BASH, {"command": command}, ctx)


# -- allow rules: only what the words prove ---------------------------------------------------------
ALLOWED_BY_GIT_STATUS = [
    "git status",
    "git status -s",
    "git  status --short",
    "git status 2>&1",
    "git status > /dev/null",
    "git status 2>/dev/null",
    "git status >&2",
    "git status && git status -s",
    "git status; git status",
    'git status "a b"',
    "git status # a comment; rm -rf /",
    "git status < README.md",
    "git status $HOME",
]

ASKED_UNDER_GIT_STATUS = [
    "git status =(touch P)",  # zsh process substitution (the example)
    "git status *(e:'touch P':)",  # zsh glob qualifier (the example)
    "git status $(touch P)",
    'git status "$(touch P)"',
    "git status `touch P`",
    'git status "`touch P`"',
    "git status <(touch P)",
    "git status >(touch P)",
    "git status $((1 + 2))",
    "git status ${x:-$(touch P)}",
    "git status ${x:=y}",
    "git status $'\\x3btouch P'",
    "git status > out.txt",
    "git status >> out.txt",
    "git status &> out.txt",
    "git status >| out.txt",
    "git status 2> err.txt",
    "git status >&out.txt",
    "git status <<EOF\nhello\nEOF",
    "git status <<< hello",
    "git status ; touch P",
    "git status\ntouch P",
    "git status & touch P",
    "git status || touch P",
    "git status | sh",
    "(git status)",
    "{ git status; }",
    "X=1 git status",
    "LD_PRELOAD=/tmp/evil.so git status",
    "/tmp/evil/git status",
    "./git status",
    "git statusx",
    "git",
    'git "status;touch P"',
    "echo git status",
    "git status 'unterminated",
    "$GIT status",
    "g?t status",
]


@pytest.mark.parametrize("command", ALLOWED_BY_GIT_STATUS)
def test_prefix_rule_allows_plain_commands(command: str, ctx: ToolContext) -> None:
    policy = PermissionPolicy(mode="headless", allow_rules=[Rule.parse("Bash(git status:*)")])
    assert decide(policy, command, ctx).behavior == "allow"


@pytest.mark.parametrize("command", ASKED_UNDER_GIT_STATUS)
def test_prefix_rule_does_not_cover_what_it_cannot_prove(command: str, ctx: ToolContext) -> None:
    headless = PermissionPolicy(mode="headless", allow_rules=[Rule.parse("Bash(git status:*)")])
    assert decide(headless, command, ctx).behavior == "deny"
    interactive = PermissionPolicy(allow_rules=[Rule.parse("Bash(git status:*)")])
    assert decide(interactive, command, ctx).behavior == "ask"


def test_each_part_may_be_covered_by_a_different_rule(ctx: ToolContext) -> None:
    policy = PermissionPolicy(mode="headless", allow_rules=[Rule.parse("Bash(git status:*)"),
                                                            Rule.parse("Bash(pytest:*)")])
    assert decide(policy, "git status && pytest -q", ctx).behavior == "allow"
    assert decide(policy, "git status && pytest -q && rm x", ctx).behavior == "deny"


def test_exact_and_glob_allow_rules(ctx: ToolContext) -> None:
    exact = PermissionPolicy(mode="headless", allow_rules=[Rule.parse("Bash(npm test)")])
    assert decide(exact, "npm test", ctx).behavior == "allow"
    assert decide(exact, "npm test --watch", ctx).behavior == "deny"
    glob = PermissionPolicy(mode="headless", allow_rules=[Rule.parse("Bash(npm run *)")])
    assert decide(glob, "npm run build", ctx).behavior == "allow"
    assert decide(glob, "npm run build; rm x", ctx).behavior == "deny"
    assert decide(glob, "npm run $(rm x)", ctx).behavior == "deny"


# -- deny rules: respellings ---------------------------------------------------------------------
DENIED_BY_RM = [
    "rm x",
    "rm",
    "/bin/rm x",
    "/usr/bin/rm -rf x",
    "\\rm x",
    "'rm' x",
    '"rm" x',
    "r''m x",
    "command rm x",
    "builtin rm x",
    "exec rm x",
    "env rm x",
    "env -i FOO=1 rm x",
    "env -u HOME rm x",
    "env -S 'rm x'",
    "x=1 rm x",
    "A=1 B=2 /bin/rm x",
    "(rm x)",
    "( cd /tmp && rm x )",
    "{ rm x; }",
    "sh -c 'rm x'",
    'bash -c "rm -rf x"',
    "bash -lc 'rm x'",
    "zsh -c 'ls; rm x'",
    "sh -c \"sh -c 'rm x'\"",
    "sudo rm x",
    "sudo -u root rm x",
    "sudo -- rm x",
    "doas rm x",
    "xargs rm",
    "xargs -n 1 rm",
    "xargs -I{} rm {}",
    "find . -name '*.tmp' -exec rm {} \\;",
    "find . -execdir rm {} +",
    "echo $(rm x)",
    'echo "$(rm x)"',
    "echo `rm x`",
    "cat <(rm x)",
    "echo ${x:-$(rm x)}",
    "eval 'rm x'",
    "eval rm x",
    "nohup rm x &",
    "timeout 5 rm x",
    "timeout -s KILL 5 rm x",
    "nice -n 5 rm x",
    "time rm x",
    "! rm x",
    "stdbuf -oL rm x",
    "setsid rm x",
    "watch rm x",
    "busybox rm x",
    "ls; rm x",
    "ls\nrm x",
    "ls && rm x",
    "true || rm x",
    "ls | rm",
    "ls|rm",
    "ls & rm x",
    "if true; then rm x; fi",
    "for f in a; do rm $f; done",
    "while true; do rm x; done",
    "ls # x\nrm x",
]

UNCHECKABLE_UNDER_RM = [
    "$CMD x",
    "${CMD} x",
    "/bin/r? x",
    "/bin/r[m] x",
    "$(echo rm) x",
    "`echo rm` x",
    'sh -c "$X"',
    'eval "$X"',
    "$'\\x72m' x",
    "'unterminated",
]

NOT_DENIED_BY_RM = [
    "rmdir x",
    "echo rm",
    "git rm x",
    "ls -la",
    "command -v rm",
    "grep -r rm .",
    "cat 'rm x'",
]


@pytest.mark.parametrize("command", DENIED_BY_RM)
def test_deny_rule_catches_respellings(command: str, ctx: ToolContext) -> None:
    policy = PermissionPolicy(mode="allow_all", deny_rules=[Rule.parse("Bash(rm:*)")])
    decision = decide(policy, command, ctx)
    assert decision.behavior == "deny" and "Bash(rm:*)" in decision.message, command


@pytest.mark.parametrize("command", UNCHECKABLE_UNDER_RM)
def test_deny_rule_asks_when_the_command_name_is_only_known_at_run_time(command: str, ctx: ToolContext) -> None:
    rules = [Rule.parse("Bash(rm:*)")]
    allow_all = decide(PermissionPolicy(mode="allow_all", deny_rules=rules), command, ctx)
    assert allow_all.behavior == "deny" and "cannot be checked" in allow_all.message
    headless = decide(PermissionPolicy(mode="headless", allow_write=True, deny_rules=rules), command, ctx)
    assert headless.behavior == "deny"
    everything = PermissionPolicy(deny_rules=rules, allow_rules=[Rule("Bash")])
    assert decide(everything, command, ctx).behavior == "ask"


@pytest.mark.parametrize("command", NOT_DENIED_BY_RM)
def test_deny_rule_leaves_other_commands(command: str, ctx: ToolContext) -> None:
    policy = PermissionPolicy(mode="allow_all", deny_rules=[Rule.parse("Bash(rm:*)")])
    assert decide(policy, command, ctx).behavior == "allow"


def test_multi_word_and_exact_deny_rules(ctx: ToolContext) -> None:
    policy = PermissionPolicy(mode="allow_all", deny_rules=[Rule.parse("Bash(git push:*)"),
                                                            Rule.parse("Bash(curl evil.example)")])
    for command in ("git push", "git push --force origin", "/usr/bin/git push", "sh -c 'git push'",
                    "curl evil.example", "ls && curl evil.example"):
        assert decide(policy, command, ctx).behavior == "deny", command
    for command in ("git pull", "git status", "curl good.example", "curl evil.example -o x"):
        assert decide(policy, command, ctx).behavior == "allow", command


def test_remembered_session_rules(ctx: ToolContext) -> None:
    assert command_rule_pattern("git status -s") == "git status:*"
    assert command_rule_pattern("  pytest -q tests/") == "pytest:*"
    for compound in ("git status && rm x", "git status > out", "X=1 pytest", "pytest $(cat list)",
                     "(pytest)", "$RUNNER -q"):
        assert command_rule_pattern(compound) == compound
    policy = PermissionPolicy(workspace=ctx.workspace)
    rule = policy.remember(BASH, {"command": "git status -s"})
    assert rule == Rule("Bash", "git status:*")
    # What "allow for this session" recorded must not let zsh-only tricks through.
    assert decide(policy, "git status =(touch P)", ctx).behavior == "ask"


def test_parse_reports_inner_commands() -> None:
    line = shell_words.parse('echo "$(git log | head)" `date` <(ls)')
    assert set(line.inner) == {"git log | head", "date", "ls"}
    assert not line.plain
    assert shell_words.parse("a 'b c' \"d\\\"e\"").commands == [["a", "b c", 'd"e']]


# -- Bash runs /bin/bash whatever $SHELL says --------------------------------------------------------
async def test_bash_tool_runs_bin_bash_not_the_login_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "shell-was-used"
    fake_shell = tmp_path / "fakesh"
    fake_shell.write_text(f"#!/bin/sh\ntouch {marker}\nexec /bin/sh \"$@\"\n")
    fake_shell.chmod(0o755)
    monkeypatch.setenv("SHELL", str(fake_shell))
    output = await run_command('echo "version=$BASH_VERSION"', tmp_path, 10)
    assert not output.is_error and output.content.startswith("version=") and output.content[8:9].isdigit()
    assert not marker.exists()


def test_many_globstars_match_quickly_or_are_refused() -> None:
    """The hand-written glob regex took seconds per match on `**/**/…` rules; pathspec plus collapsing
    `**/**` keeps it linear. Run in a child process with a bound, so a regression fails instead of hanging."""
    script = (
        "from pathlib import Path\n"
        "from tui_agent.core.access.rules import Rule\nfrom tui_agent.core.access.gate import PermissionPolicy\n"
        "from tui_agent.core.tools.base import ToolContext\n"
        "from tui_agent.core.tools.read import ReadTool\n"
        "import tempfile\n"
        "ws = Path(tempfile.mkdtemp())\n"
        "rule = Rule.parse('Read(' + '**/' * 40 + 'secret)')\n"
        "policy = PermissionPolicy(deny_rules=[rule])\n"
        "ctx = ToolContext(workspace=ws)\n"
        "deep = '/'.join(['a'] * 120)\n"
        "for _ in range(20):\n"
        "    assert policy.decide(ReadTool(), {'file_path': deep + '/x'}, ctx).behavior == 'allow'\n"
        "assert policy.decide(ReadTool(), {'file_path': deep + '/secret'}, ctx).behavior == 'deny'\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[3], env={**os.environ, "PYTHONPATH": "."})
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr
    with pytest.raises(ValueError, match=r"\*\*"):
        Rule.parse("Read(" + "**/a/" * 4 + "x)")


def test_absurdly_deep_paths_are_refused(ctx: ToolContext) -> None:
    from tui_agent.core.tools.read import ReadTool

    deep = "/".join(["a"] * 300)
    decision = PermissionPolicy(mode="allow_all").decide(ReadTool(), {"file_path": deep}, ctx)
    assert decision.behavior == "deny" and "path components" in decision.message


@pytest.mark.parametrize("command", ['"$(' * 5000, "${x:-" * 5000, 'echo "$(echo "$(' * 2000, "x" * 200_000,
                                     "'" * 3, "$(", "`", "<(", "${", "\\"])
def test_hostile_command_lines_never_crash_the_gate(command: str, ctx: ToolContext) -> None:
    deny = PermissionPolicy(mode="allow_all", deny_rules=[Rule.parse("Bash(rm:*)")])
    assert decide(deny, command, ctx).behavior == "deny"  # cannot be checked: refused, not run
    allow = PermissionPolicy(mode="headless", allow_rules=[Rule.parse("Bash(echo:*)")])
    assert decide(allow, command, ctx).behavior == "deny"
