"""Issue 19 item 3: bash forms that passed a `Bash(rm:*)` deny rule. Each form is first run in a real
/bin/bash on a victim file in a tmp dir (so the test proves it really deletes), then the gate must refuse
it (allow_all, headless with --allow-write) or ask (interactive) - never allow it. The allow side is
re-checked: none of these forms is covered by `Bash(git status:*)`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tui_agent.core.access.rules import Rule
from tui_agent.core.access.gate import PermissionPolicy
from tui_agent.core.tools.base import ToolContext
from tui_agent.core.tools.bash import BashTool

BASH = BashTool()

ATTACKS = [
    "bash -c -- 'rm victim'",
    "bash -c -e 'rm victim'",
    "sh -e -c -- 'rm victim'",
    "echo $(case x in x) rm victim;; esac)",
    "cat <<'EOF'\nit's\nEOF\nrm victim\ncat <<'EOF'\nthat's\nEOF",
    "cat <<EOF\nit's\nEOF\nrm victim\ncat <<EOF\nthat's\nEOF",
    "cat <<-EOF\n\tit's\n\tEOF\nrm victim\ncat <<'EOF'\nthat's\nEOF",
    "cat <<EOF\n$(rm victim)\nEOF",
    "cat <<EOF\n`rm victim`\nEOF",
    "function f { rm victim; }; f",
    "function f() { rm victim; }; f",
    "f() { rm victim; }; f",
    "f(){ rm victim; }\nf",
    "{rm,victim}",
    "coproc rm victim; wait",
    "coproc X { rm victim; }; wait",
    "trap 'rm victim' EXIT",
    "trap -- 'rm victim' EXIT",
    "echo rm victim | sh",
    "echo rm victim | bash -s",
    "bash <<< 'rm victim'",
    "bash <<'EOF'\nrm victim\nEOF",
    "source <(echo rm victim)",
    ". <(echo rm victim)",
    ". /dev/stdin <<< 'rm victim'",
    "bash /dev/stdin <<< 'rm victim'",
    "bash <(echo rm victim)",
    "script -qc 'rm victim' /dev/null",
    "script -q -c 'rm victim' /dev/null",
    "script --command 'rm victim' /dev/null",
    "find . -name victim -delete",
    "find -name victim -delete",
    "echo rm victim | xargs env",
    "printf 'rm victim' | xargs -0 sh -c",
    "find /bin/ -name rm -exec {} $PWD/victim \\;",
    "shopt -s expand_aliases\nalias f='rm victim'\nf",
    "echo $(echo x # )\nrm victim\n)",
    "((x = 1 << 2))\nrm victim",
    "{ x=1 rm victim; }",
    "if true; then x=1 rm victim; fi",
    "! x=1 rm victim",
    "while ! x=1 rm victim; do break; done",
    "f() { x=1 rm victim; }; f",
    "eval -- 'rm victim'",
    "hash -p /bin/rm foo; foo victim",
]

# Launchers that run their arguments (checked by the gate only: not every machine has them, or allows
# a user namespace, so bash is not asked to prove these).
LAUNCHERS = ["prlimit rm victim", "setpriv rm victim", "unshare -U rm victim", "nsenter rm victim",
             "fakeroot rm victim", "pkexec rm victim", "systemd-run --user rm victim", "enable -f x.so rm"]


def run_in_bash(command: str, folder: Path) -> bool:
    """Run `command` in a real /bin/bash -c (as the Bash tool does) in `folder`; True if the victim is gone."""
    victim = folder / "victim"
    victim.write_text("precious")
    subprocess.run(["/bin/bash", "-c", command], cwd=folder, stdin=subprocess.DEVNULL, capture_output=True,
                   timeout=30)
    return not victim.exists()


@pytest.mark.parametrize("command", ATTACKS)
def test_each_form_really_deletes_and_the_deny_rule_stops_it(command: str, tmp_path: Path) -> None:
    assert run_in_bash(command, tmp_path), f"the form no longer deletes in bash: {command!r}"
    ctx = ToolContext(workspace=tmp_path)
    rules = [Rule.parse("Bash(rm:*)")]
    for policy in (PermissionPolicy(mode="allow_all", deny_rules=rules),
                   PermissionPolicy(mode="headless", allow_write=True, deny_rules=rules)):
        assert policy.decide(BASH, {"command": command}, ctx).behavior == "deny", command
    interactive = PermissionPolicy(deny_rules=rules, allow_rules=[Rule("Bash")])
    assert interactive.decide(BASH, {"command": command}, ctx).behavior in ("deny", "ask"), command


@pytest.mark.parametrize("command", LAUNCHERS)
def test_launchers_are_looked_through(command: str, tmp_path: Path) -> None:
    policy = PermissionPolicy(mode="allow_all", deny_rules=[Rule.parse("Bash(rm:*)")])
    assert policy.decide(BASH, {"command": command}, ToolContext(workspace=tmp_path)).behavior == "deny"


@pytest.mark.parametrize("command", ATTACKS + [a.replace("rm victim", "git status; touch pwned") for a in ATTACKS])
def test_none_of_the_forms_is_covered_by_an_allow_rule(command: str, tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path)
    policy = PermissionPolicy(mode="headless", allow_rules=[Rule.parse("Bash(git status:*)")])
    assert policy.decide(BASH, {"command": command}, ctx).behavior == "deny", command


ORDINARY = [
    "git commit -m \"$(cat <<'EOF'\nFix the parser's edge case\n\nIt's done.\nEOF\n)\"",
    "cat > notes.txt <<'EOF'\ndon't rm me\nEOF",
    "cat <<EOF\nhome is $HOME, it's fine\nEOF",
    "python3 - <<'PY'\nprint('it''s')\nPY",
    "echo $((1 << 2))",
    "bash build.sh",
    "sh -c 'ls -la'",
    "find . -name '*.py' -print",
    "trap 'echo bye' EXIT",
    "echo {a,b}.txt",
    "case $x in a) echo a;; esac",
]


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_commands_still_pass_a_deny_rule(command: str, tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path)
    policy = PermissionPolicy(mode="allow_all", deny_rules=[Rule.parse("Bash(rm:*)")])
    assert policy.decide(BASH, {"command": command}, ctx).behavior == "allow", command


def test_a_here_document_body_is_data_for_the_allow_side_too(tmp_path: Path) -> None:
    """`git status <<'EOF'` with an apostrophe in the body, then a real command: not covered."""
    ctx = ToolContext(workspace=tmp_path)
    policy = PermissionPolicy(mode="headless", allow_rules=[Rule.parse("Bash(git status:*)")])
    command = "git status <<'EOF'\nit's\nEOF\ntouch pwned"
    assert policy.decide(BASH, {"command": command}, ctx).behavior == "deny"
