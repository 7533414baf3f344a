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
from dataclasses import dataclass, field

from tui_agent.core.shell.heredoc import Heredoc, heredoc_word, skip_bodies

PLACEHOLDER = "$__tui_agent_subst__"  # stands in for `$(…)`, backticks and `<(…)`: a run-time value

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
_SIMPLE_PARAM = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$|^[0-9#?$!@*-]$")
# A variable, a glob, or brace expansion (`{rm,-rf,x}` is `rm -rf x`).
_DYNAMIC = re.compile(r"[$`*?\[]|\{[^}]*(,|\.\.)[^}]*\}")
# Words that may precede the command itself in a simple command.


@dataclass
class ShellLine:
    """A parsed command line: its simple commands (words, no redirections) and what makes it unsafe."""

    commands: list[list[str]] = field(default_factory=list)
    unsafe: list[str] = field(default_factory=list)  # human-readable reasons, e.g. "command substitution"
    inner: list[str] = field(default_factory=list)  # bodies of $(…), `…`, <(…): command lines themselves
    parsed: bool = True  # False: unbalanced quotes or parentheses; `commands` is a best effort
    # Why the commands found may not be all that runs (a deny rule then asks): what the scanner cannot
    # follow with certainty, e.g. a `case` inside `$(…)` or `$(…)` in an unquoted here-document.
    uncertain: list[str] = field(default_factory=list)

    @property
    def plain(self) -> bool:
        """Only simple commands whose words are all there is to know (what allow rules may cover)."""
        return self.parsed and not self.unsafe and bool(self.commands)


def _close(text: str, start: int, opener: str, closer: str, heredocs: bool = True) -> int:
    """Index just past the `closer` matching an `opener` before `start`, honouring quotes, comments,
    here-document bodies (data: an apostrophe there opens no quote) and nesting; -1 when it never closes."""
    depth, i, n = 1, start, len(text)
    quote: str | None = None
    pending: list[Heredoc] = []
    while i < n:
        char = text[i]
        if quote == "'":
            if char == "'":
                quote = None
        elif char == "\\":
            i += 1
        elif quote == '"':
            if char == '"':
                quote = None
            elif text.startswith("$(", i):
                end = _close(text, i + 2, "(", ")")
                if end < 0:
                    return -1
                i = end
                continue
        elif char in "'\"":
            quote = char
        elif opener == "(" and text.startswith("((", i):  # arithmetic: `1 << 2` is no here-document
            end = _close(text, i + 1, "(", ")", heredocs=False)
            if end < 0:
                return -1
            i = end
            continue
        elif heredocs and opener == "(" and text.startswith("<<", i) and not text.startswith("<<<", i):
            doc = heredoc_word(text, i)
            if doc is None:
                return -1
            pending.append(doc)
            i = doc.end
            continue
        elif char == "\n" and pending:
            i = skip_bodies(text, i + 1, pending, None)
            continue
        elif char == "#" and (i == 0 or text[i - 1] in " \t\n;&|()<>"):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif char == opener:
            depth += 1
        elif char == closer:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def _scan(text: str, line: ShellLine) -> str:
    """The line with substitutions replaced by PLACEHOLDER, comments dropped, newlines turned into `;`.

    Their bodies go to `line.inner`; every construct that an allow rule cannot vouch for is noted."""
    out: list[str] = []
    i, n = 0, len(text)
    quote: str | None = None

    pending: list[Heredoc] = []

    def note(reason: str) -> None:
        if reason not in line.unsafe:
            line.unsafe.append(reason)

    def doubt(reason: str) -> None:
        note(reason)
        if reason not in line.uncertain:
            line.uncertain.append(reason)

    def substitution(body_start: int, opener: str, closer: str, reason: str, skip: int,
                     arithmetic: bool = False, placeholder: str = PLACEHOLDER) -> int:
        end = _close(text, body_start, opener, closer, heredocs=not arithmetic)
        note(reason)
        if end < 0:
            line.parsed = False
            line.inner.append(text[body_start:])
            return n
        body = text[body_start:end - skip]
        if arithmetic:
            body = body.replace("<<", "  ")  # a shift, not a here-document; `$(…)` in it still runs
        line.inner.append(body)
        out.append(placeholder)
        return end

    while i < n:
        char = text[i]
        if quote == "'":
            out.append(char)
            if char == "'":
                quote = None
            i += 1
            continue
        if char == "\\" and i + 1 < n:
            if text[i + 1] == "\n":  # a line continuation joins the lines
                i += 2
                continue
            out.append(text[i:i + 2])
            i += 2
            continue
        if text.startswith("$((", i):
            i = substitution(i + 3, "(", ")", "arithmetic expansion", 1, arithmetic=True)
            if i < n and text[i] == ")":
                i += 1
            continue
        if text.startswith("$(", i):
            i = substitution(i + 2, "(", ")", "command substitution", 1)
            continue
        if char == "`":
            end = i + 1
            while end < n and text[end] != "`":
                end += 2 if text[end] == "\\" else 1
            note("command substitution")
            if end >= n:
                line.parsed = False
                line.inner.append(text[i + 1:])
                break
            line.inner.append(text[i + 1:end].replace("\\`", "`"))
            out.append(PLACEHOLDER)
            i = end + 1
            continue
        if text.startswith("${", i):
            end = _close(text, i + 2, "{", "}")
            if end < 0:
                line.parsed = False
                note("parameter expansion")
                break
            body = text[i + 2:end - 1]
            if not _SIMPLE_PARAM.match(body):
                note("parameter expansion")
                inner = ShellLine()
                _scan(body, inner)  # `${x:-$(rm …)}` still runs rm
                line.inner.extend(inner.inner)
            out.append("$__tui_agent_param__")
            i = end
            continue
        if quote == '"':
            out.append(char)
            if char == '"':
                quote = None
            i += 1
            continue
        # Unquoted from here on.
        if text.startswith("$'", i):  # ANSI-C quoting: `$'\x72m'` is `rm`
            note("ANSI-C quoting")
            end = i + 2
            while end < n and text[end] != "'":
                end += 2 if text[end] == "\\" else 1
            out.append("$__tui_agent_ansi__")
            i = end + 1
            continue
        if char in "'\"":
            quote = char
            out.append(char)
            i += 1
            continue
        if text.startswith(("<(", ">("), i):
            i = substitution(i + 2, "(", ")", "process substitution", 1)
            continue
        if text.startswith("=(", i):
            i = substitution(i + 2, "(", ")", "zsh process substitution =(…)", 1)
            continue
        if text.startswith("((", i):  # an arithmetic command; `:` stands in for it
            i = substitution(i + 2, "(", ")", "arithmetic expansion", 1, arithmetic=True, placeholder=" : ")
            if i < n and text[i] == ")":
                i += 1
            continue
        if text.startswith("<<", i) and not text.startswith("<<<", i):
            doc = heredoc_word(text, i)
            if doc is None:
                line.parsed = False
                note("here-document without a delimiter")
                out.append(text[i:])
                break
            pending.append(doc)
            out.append(text[i:doc.end])
            i = doc.end
            continue
        if char == "#" and (i == 0 or text[i - 1] in " \t\n;&|()<>"):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if char == "\n":
            out.append(" ; ")
            i = skip_bodies(text, i + 1, pending, doubt) if pending else i + 1
            continue
        if char in "()":
            note("subshell, group or glob qualifier (…)")
        out.append(char)
        i += 1
    if quote is not None:
        line.parsed = False
        note("unterminated quote")
    if pending:
        doubt("here-document without its body")
    return "".join(out)


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
    outer = _scan(command, line)
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
