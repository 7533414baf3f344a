"""Shell command lines as the permission rules see them: simple commands of `shlex` words, plus the
constructs a word matcher cannot vouch for.

Bash always runs `/bin/bash -c` (see tools/bash.py), so this module only has to understand bash. It
does not interpret the language; it answers two narrower questions:

- for **allow** rules: is the line a plain list of simple commands (`git status && pytest -q`) whose
  words say everything that will run? Anything else (command or process substitution, `=(…)`,
  subshells and `{ …; }` groups, here-documents, `${…}` expansions, redirections that write, an
  unterminated quote) is reported in `ShellLine.unsafe`, and the caller asks instead of allowing;
- for **deny** rules: which commands could this line run? `effective_commands` looks through the usual
  respellings (`/bin/rm`, `\\rm`, `'rm'`, `x=1 rm`, `command rm`, `env rm`, `sudo rm`, `xargs rm`,
  `find -exec rm`, `(rm …)`, `$(rm …)`, `sh -c 'rm …'`, `eval 'rm …'`) and says when a command name is
  only known at run time (`$cmd`, `/bin/r?`), so the caller can ask rather than guess.

What it cannot see (documented as advisory in the README): code run by an allowed or not-denied program
itself (`python -c`, `make`, a script, `git -c alias…`), and options placed between a command and the
words a rule names (`git -C dir push` against `Bash(git push:*)`).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field

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
_DYNAMIC = re.compile(r"[$`*?\[]")
# Words that may precede the command itself in a simple command.
_LEADING_KEYWORDS = {"{", "}", "!", "if", "then", "else", "elif", "while", "until", "do", "done", "fi"}
_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash"}


@dataclass
class ShellLine:
    """A parsed command line: its simple commands (words, no redirections) and what makes it unsafe."""

    commands: list[list[str]] = field(default_factory=list)
    unsafe: list[str] = field(default_factory=list)  # human-readable reasons, e.g. "command substitution"
    inner: list[str] = field(default_factory=list)  # bodies of $(…), `…`, <(…): command lines themselves
    parsed: bool = True  # False: unbalanced quotes or parentheses; `commands` is a best effort

    @property
    def plain(self) -> bool:
        """Only simple commands whose words are all there is to know (what allow rules may cover)."""
        return self.parsed and not self.unsafe and bool(self.commands)


def _close(text: str, start: int, opener: str, closer: str) -> int:
    """Index just past the `closer` matching an `opener` before `start`, honouring quotes and nesting;
    -1 when it never closes."""
    depth, i, n = 1, start, len(text)
    quote: str | None = None
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

    def note(reason: str) -> None:
        if reason not in line.unsafe:
            line.unsafe.append(reason)

    def substitution(body_start: int, opener: str, closer: str, reason: str, skip: int) -> int:
        end = _close(text, body_start, opener, closer)
        note(reason)
        if end < 0:
            line.parsed = False
            line.inner.append(text[body_start:])
            return n
        line.inner.append(text[body_start:end - skip])
        out.append(PLACEHOLDER)
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
            i = substitution(i + 3, "(", ")", "arithmetic expansion", 1)
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
        if char == "#" and (i == 0 or text[i - 1] in " \t\n;&|()<>"):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if char == "\n":
            out.append(" ; ")
            i += 1
            continue
        if char in "()":
            note("subshell, group or glob qualifier (…)")
        out.append(char)
        i += 1
    if quote is not None:
        line.parsed = False
        note("unterminated quote")
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


# -- what a line may run (deny side) ---------------------------------------------------------------

# Options that take a value, per wrapper, so `sudo -u root rm` finds `rm`, not `root`.
_WRAPPER_ARG_OPTIONS: dict[str, set[str]] = {
    "command": set(), "builtin": set(), "exec": {"-a"}, "nohup": set(), "setsid": set(), "time": set(),
    "nice": {"-n", "--adjustment"}, "ionice": {"-c", "-n", "-p", "--class", "--classdata"},
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group", "--chdir"},
    "doas": {"-u", "-C"}, "stdbuf": {"-i", "-o", "-e"}, "chrt": {"-p"}, "taskset": {"-p"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"}, "unbuffer": set(), "caffeinate": {"-t", "-w"},
    "xargs": {"-a", "-d", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "-P", "-s", "--arg-file", "--delimiter",
              "--max-args", "--max-procs", "--max-lines", "--replace", "--max-chars", "--eof"},
    "flock": {"-w", "-E", "--timeout", "--conflict-exit-code"}, "watch": {"-n", "-d", "--interval"},
    "strace": {"-e", "-o", "-p", "-s", "-u", "-E"}, "ltrace": {"-e", "-o", "-p", "-s", "-u"},
    "busybox": set(), "env": {"-u", "-C", "--unset", "--chdir"}, "chroot": {"--userspec", "--groups"},
}
# Wrappers that take one positional argument before the command (`timeout 5 rm`, `flock f rm`).
_POSITIONAL_BEFORE = {"timeout": 1, "flock": 1, "chrt": 1, "taskset": 1, "chroot": 1}
MAX_DEPTH = 8  # nested sh -c / eval / $(…) levels looked through before giving up (and asking)


@dataclass
class Effective:
    """The commands a line may run, and whether some command name is only known at run time."""

    commands: list[list[str]] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)  # why some command could not be named


def effective_commands(command: str, depth: int = 0) -> Effective:
    """Every command `command` may run, looking through wrappers, shells, eval and substitutions."""
    result = Effective()
    if depth > MAX_DEPTH:
        result.opaque.append("too deeply nested")
        return result
    line = parse(command)
    if not line.parsed:
        result.opaque.append("the command line does not parse")
    for body in line.inner:
        _merge(result, effective_commands(body, depth + 1))
    for words in line.commands:
        _expand(words, result, depth)
    return result


def _merge(into: Effective, other: Effective) -> None:
    into.commands.extend(other.commands)
    into.opaque.extend(other.opaque)


def _expand(words: list[str], result: Effective, depth: int) -> None:
    """Add `words` (one simple command) and whatever it runs in turn."""
    while True:
        _, words = strip_assignments(words)
        while words and words[0] in _LEADING_KEYWORDS:
            words = words[1:]
        if not words:
            return
        name = words[0]
        if is_dynamic(name):
            result.opaque.append(f"the command name {name!r} is only known at run time")
            return
        result.commands.append(words)
        base = posixpath.basename(name)
        args = words[1:]
        if base in _SHELLS:
            script = _shell_script(args)
            if script is not None:
                _merge(result, effective_commands(script, depth + 1))
            return
        if base == "eval":
            _merge(result, effective_commands(" ".join(args), depth + 1))
            return
        if base == "find":
            _find_exec(args, result, depth)
            return
        if base == "command" and args and args[0] in ("-v", "-V"):
            return
        if base == "env":
            split = _env_split_string(args)
            if split is not None:
                _merge(result, effective_commands(split, depth + 1))
                return
        if base == "watch":
            rest = _skip_options(args, _WRAPPER_ARG_OPTIONS["watch"])
            if rest:
                _merge(result, effective_commands(" ".join(rest), depth + 1))
            return
        if base not in _WRAPPER_ARG_OPTIONS:
            return
        rest = _skip_options(args, _WRAPPER_ARG_OPTIONS[base])
        if base == "env":
            _, rest = strip_assignments(rest)
        rest = rest[_POSITIONAL_BEFORE.get(base, 0):]
        if base == "busybox" and rest and rest[0] in ("sh", "ash"):
            rest = ["sh", *rest[1:]]
        words = rest


def _skip_options(args: list[str], with_value: set[str]) -> list[str]:
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return args[i + 1:]
        if not arg.startswith("-") or arg == "-":
            break
        if arg in with_value:
            i += 2
            continue
        i += 1
    return args[i:]


def _shell_script(args: list[str]) -> str | None:
    """The script of `sh -c SCRIPT` (also `-ec`, `-lc`, `-o opt -c`); None when the shell reads a file."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-o", "+o", "-O", "+O") and i + 1 < len(args):
            i += 2
            continue
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            return args[i + 1] if i + 1 < len(args) else ""
        if not arg.startswith(("-", "+")):
            return None
        i += 1
    return None


def _env_split_string(args: list[str]) -> str | None:
    """`env -S 'rm -rf x'` / `--split-string=…`: the string env splits into a command."""
    for i, arg in enumerate(args):
        if arg in ("-S", "--split-string") and i + 1 < len(args):
            return " ".join(args[i + 1:])
        if arg.startswith("--split-string="):
            return " ".join([arg.split("=", 1)[1], *args[i + 1:]])
        if arg.startswith("-S") and len(arg) > 2:
            return " ".join([arg[2:], *args[i + 1:]])
        if not arg.startswith("-"):
            return None
    return None


def _find_exec(args: list[str], result: Effective, depth: int) -> None:
    """`find … -exec rm {} \\;` runs rm: add the command after each -exec/-execdir/-ok/-okdir."""
    for i, arg in enumerate(args):
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            inner = []
            for word in args[i + 1:]:
                if word in (";", "+"):
                    break
                inner.append(word)
            if inner:
                _expand(inner, result, depth + 1)


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
