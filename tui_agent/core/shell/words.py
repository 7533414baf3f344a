"""Shell command lines as the permission rules see them: simple commands of `shlex` words, plus the
constructs a word matcher cannot vouch for.

Bash always runs `/bin/bash -c` (see tools/bash.py), so this module only has to understand bash. It
does not interpret the language; it answers two narrower questions:

- for **allow** rules: is the line a plain list of simple commands (`git status && pytest -q`) whose
  words say everything that will run? Anything else (command or process substitution, `=(…)`,
  subshells and `{ …; }` groups, here-documents, `${…}` expansions, redirections that write, an
  unterminated quote) is reported in `ShellLine.unsafe`, and the caller asks instead of allowing;
- for **deny** rules (tui_agent.core.shell.reach): the simple commands, the bodies of substitutions,
  and `uncertain`: what the scanner could not follow with certainty, so the caller asks rather than
  guesses. Here-document bodies are data (tui_agent.core.shell.heredoc), never scanned as code.

What it cannot see (documented as advisory in the README): code run by an allowed or not-denied program
itself (`python -c`, `make`, a script, `git -c alias…`), and options placed between a command and the
words a rule names (`git -C dir push` against `Bash(git push:*)`).
"""

from __future__ import annotations

import posixpath
import re
import shlex

from tui_agent.core.shell.scan import ShellLine, scan

# Operators after shlex's punctuation grouping (`;(` arrives as one token and is split here).
_OPERATORS = sorted(
    ["&&", "||", ";;&", ";;", ";&", "|&", "&>>", "&>", ">>", ">|", ">&", "<&", "<<<", "<<-", "<<", "<>",
     ";", "&", "|", "(", ")", "<", ">"],
    key=len, reverse=True,
)
_SEPARATORS = {"&&", "||", ";;&", ";;", ";&", "|&", ";", "&", "|", "(", ")"}
_REDIRECTS = {"&>>", "&>", ">>", ">|", ">&", "<&", "<<<", "<<-", "<<", "<>", "<", ">"}
_WRITES = {"&>>", "&>", ">>", ">|", ">", "<>", ">&"}
_HEREDOCS = {"<<", "<<-", "<<<"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
# A variable, a glob, or brace expansion (`{rm,-rf,x}` is `rm -rf x`).
_DYNAMIC = re.compile(r"[$`*?\[]|\{[^}]*(,|\.\.)[^}]*\}")
# Words that may precede the command itself in a simple command.


def _operators(token: str) -> list[str] | None:
    """A punctuation token split into known operators (`;(` → `;`, `(`); None for a plain word."""
    if not token or any(c not in "();<>|&" for c in token):
        return None
    parts: list[str] = []
    i = 0
    while i < len(token):
        op = next((o for o in _OPERATORS if token.startswith(o, i)), token[i])
        parts.append(op)
        i += len(op)
    return parts


MAX_CHARS = 100_000  # longer lines are not parsed (shlex is pure Python): never allowed by a rule, asked


def parse(command: str) -> ShellLine:
    """Split `command` into simple commands of shell words and note what an allow rule cannot vouch for.

    Never raises: a line too long or too deeply nested to check comes back `parsed=False`."""
    if len(command) > MAX_CHARS:
        return ShellLine(unsafe=[f"longer than {MAX_CHARS} characters"], parsed=False)
    try:
        return _parse(command)
    except RecursionError:
        return ShellLine(unsafe=["too deeply nested"], parsed=False)


def _parse(command: str) -> ShellLine:
    line = ShellLine()
    outer = scan(command, line)
    lexer = shlex.shlex(outer, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    lexer.whitespace = " \t\r"
    tokens: list[str] = []
    try:
        for token in lexer:
            tokens.append(token)
    except ValueError:  # "No closing quotation" and friends
        line.parsed = False
        if "unterminated quote" not in line.unsafe:
            line.unsafe.append("unterminated quote")
    current: list[str] = []
    pending_redirect: str | None = None
    for token in tokens:
        ops = _operators(token)
        if ops is None:
            if pending_redirect is not None:
                if pending_redirect in _HEREDOCS:
                    _note(line, "here-document")
                elif pending_redirect in _WRITES and not _harmless_target(pending_redirect, token):
                    _note(line, f"redirection {pending_redirect} {token}")
                pending_redirect = None
                continue
            current.append(token)
            if token in ("{", "}"):
                _note(line, "command group { …; }")
            continue
        for op in ops:
            if op in _SEPARATORS:
                if current:
                    line.commands.append(current)
                current = []
                if op in ("(", ")"):
                    _note(line, "subshell, group or glob qualifier (…)")
            else:
                pending_redirect = op
    if pending_redirect is not None:
        _note(line, f"redirection {pending_redirect} without a target")
    if current:
        line.commands.append(current)
    return line


def _note(line: ShellLine, reason: str) -> None:
    if reason not in line.unsafe:
        line.unsafe.append(reason)


def _harmless_target(op: str, target: str) -> bool:
    if target == "/dev/null":
        return True
    return op == ">&" and (target.isdigit() or target == "-")


def is_dynamic(word: str) -> bool:
    """A word whose value is only known when the shell runs it (a variable, a glob, a substitution)."""
    return bool(_DYNAMIC.search(word))


def strip_assignments(words: list[str]) -> tuple[list[str], list[str]]:
    """(`NAME=value` words in front, the rest)."""
    i = 0
    while i < len(words) and _ASSIGNMENT.match(words[i]):
        i += 1
    return words[:i], words[i:]


def rule_words(pattern: str) -> list[str]:
    """A rule's command pattern as shell words (`git status` → ["git", "status"])."""
    try:
        return shlex.split(pattern)
    except ValueError:
        return pattern.split()


def same_program(word: str, rule_word: str) -> bool:
    """Deny-side name match: `/bin/rm` and `rm` are the same program."""
    return word == rule_word or posixpath.basename(word) == posixpath.basename(rule_word)


def join(words: list[str]) -> str:
    return shlex.join(words)
