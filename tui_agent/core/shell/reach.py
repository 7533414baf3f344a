"""What a shell line may run, as the deny rules see it (`Bash(rm:*)`).

`effective_commands` looks through the usual respellings (`/bin/rm`, `\\rm`, `'rm'`, `x=1 rm`,
`command rm`, `env rm`, `sudo rm`, `xargs rm`, `find -exec rm`, `find -delete`, `(rm …)`, `$(rm …)`,
`sh -c 'rm …'` with any option cluster, `eval`, `trap`, `alias`, `script -c`, `coproc`, functions) and
reports as *opaque* whatever it cannot name with certainty: a command name only known at run time (`$cmd`,
`/bin/r?`, `{rm,x}`), a shell reading its script from stdin or a device (`… | sh`, `bash <<< …`,
`source <(…)`), a command xargs supplies, and what the scanner itself doubts (shell_words.uncertain).
The gate asks for an opaque line (refuses it headless) instead of guessing.

What it does not see, by design (README, "Bash rules"): code an allowed program runs itself
(`python -c`, `perl -e`, `make`, a script file, git aliases).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from tui_agent.core.shell.words import is_dynamic, parse, strip_assignments

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
    # Launchers that run their arguments as a command (Linux tools commonly at hand).
    "prlimit": {"-p", "--pid"}, "setpriv": set(), "unshare": {"-S", "-G", "-R", "-w", "--setuid", "--setgid"},
    "nsenter": {"-t", "-S", "-G", "--target"}, "pkexec": {"--user"}, "fakeroot": {"-l", "-s", "-i", "--lib"},
    "systemd-run": {"-p", "-E", "-u", "-M", "-H", "--unit", "--property", "--setenv", "--uid", "--gid",
                    "--description", "--slice", "--working-directory"},
    "firejail": set(), "catchsegv": set(), "dbus-run-session": {"--config-file"}, "runcon": {"-u", "-r", "-t", "-l"},
}
# Wrappers that take one positional argument before the command (`timeout 5 rm`, `flock f rm`).
_POSITIONAL_BEFORE = {"timeout": 1, "flock": 1, "chrt": 1, "taskset": 1, "chroot": 1}


MAX_DEPTH = 8  # nested sh -c / eval / $(…) levels looked through before giving up (and asking)
_LEADING_KEYWORDS = {"{", "}", "!", "if", "then", "else", "elif", "while", "until", "do", "done", "fi",
                     "coproc"}
_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash"}
_SHELL_OPTIONS_WITH_VALUE = {"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}
# Programs that run a command line given as the value of `-c` / `--command` (`script -qc 'rm x'`).
_DASH_C_RUNNERS = {"script", "su", "runuser"}
_DEVICE_PREFIXES = ("/dev/", "/proc/")


@dataclass
class Effective:
    """The commands a line may run, and why some of what runs could not be named."""

    commands: list[list[str]] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)  # why some command could not be named


def effective_commands(command: str, depth: int = 0, substituted: bool = False) -> Effective:
    """Every command `command` may run, looking through wrappers, shells, eval and substitutions.

    `substituted`: `command` is the body of a `$(…)`; a `case` there is opaque, because the scanner
    closes the `$(` at the first `)` of a case pattern (`$(case x in x) rm …;; esac)`)."""
    result = Effective()
    if depth > MAX_DEPTH:
        result.opaque.append("too deeply nested")
        return result
    line = parse(command)
    if not line.parsed:
        result.opaque.append("the command line does not parse")
    result.opaque.extend(line.uncertain)
    if substituted and any(_strip_keywords(words)[:1] == ["case"] for words in line.commands):
        result.opaque.append("a case statement inside a substitution")
    for body in line.inner:
        _merge(result, effective_commands(body, depth + 1, substituted=True))
    for words in line.commands:
        _expand(words, result, depth)
    return result


def _merge(into: Effective, other: Effective) -> None:
    into.commands.extend(other.commands)
    into.opaque.extend(other.opaque)


def _strip_keywords(words: list[str]) -> list[str]:
    """Drop reserved words and function headers in front of the command (`function f {`, `coproc NAME {`)."""
    while words:
        if words[0] in _LEADING_KEYWORDS:
            if words[0] == "coproc" and len(words) > 2 and words[2] == "{":
                words = words[1:]  # `coproc NAME { …; }`: NAME is no command
            words = words[1:]
        elif words[0] == "function" and len(words) > 1:
            words = words[2:]
            if words[:1] == ["()"]:
                words = words[1:]
        else:
            return words
    return words


def _command_start(words: list[str]) -> list[str]:
    """`words` from the command name on: reserved words and `NAME=value` prefixes in any order
    (`{ x=1 rm …; }`, `! x=1 rm …`, `if x=1 rm …`)."""
    while True:
        _, rest = strip_assignments(words)
        rest = _strip_keywords(rest)
        if rest == words:
            return words
        words = rest


def _expand(words: list[str], result: Effective, depth: int) -> None:
    """Add `words` (one simple command) and whatever it runs in turn."""
    fed = False  # under xargs, which adds words of its input to the command
    while True:
        words = _command_start(words)
        if not words:
            if fed:
                result.opaque.append("xargs supplies the command it runs")
            return
        name = words[0]
        if is_dynamic(name):
            result.opaque.append(f"the command name {name!r} is only known at run time")
            return
        result.commands.append(words)
        base = posixpath.basename(name)
        args = words[1:]
        if base in _SHELLS:
            _shell(args, result, depth, fed)
            return
        if base in ("source", "."):
            rest = args[1:] if args[:1] == ["--"] else args
            if not rest or is_dynamic(rest[0]) or rest[0].startswith(_DEVICE_PREFIXES):
                result.opaque.append(f"{base} reads a script that is only known at run time")
            return
        if base in ("hash", "enable") and any(arg.startswith("-") and ("p" in arg or "f" in arg) for arg in args):
            result.opaque.append(f"{base} gives a command name another program")  # `hash -p /bin/rm x`
            return
        if base in ("eval", "trap", "alias") or base in _DASH_C_RUNNERS:
            _run_string(base, args, result, depth)
            return
        if base == "find":
            _find(args, result, depth)
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
        fed = fed or base == "xargs"
        words = rest


def _shell(args: list[str], result: Effective, depth: int, fed: bool) -> None:
    """`sh -c SCRIPT` (any option cluster holding `c`, `--`, `-o opt`): the script is the first word after
    the options. A shell that reads stdin, a device or a run-time file is opaque; a plain script file is
    the documented limit (like `python file.py`)."""
    with_c, from_stdin, i = False, False, 0
    while i < len(args):
        arg = args[i]
        if arg == "--" or arg == "-":
            i += 1
            break
        if arg in _SHELL_OPTIONS_WITH_VALUE:
            i += 2
            continue
        if not arg.startswith(("-", "+")):
            break
        if not arg.startswith("--"):
            with_c = with_c or "c" in arg[1:]
            from_stdin = from_stdin or "s" in arg[1:]
        i += 1
    rest = args[i:]
    if with_c:
        if not rest or fed:
            result.opaque.append("the shell's script is only known at run time")
        else:
            _merge(result, effective_commands(rest[0], depth + 1))
    elif from_stdin or not rest or fed:
        result.opaque.append("the shell reads its script from stdin")
    elif is_dynamic(rest[0]) or rest[0].startswith(_DEVICE_PREFIXES):
        result.opaque.append("the shell reads a script that is only known at run time")


def _run_string(base: str, args: list[str], result: Effective, depth: int) -> None:
    """Builtins and programs whose argument is itself a command line."""
    if base == "eval":
        _merge(result, effective_commands(" ".join(args[1:] if args[:1] == ["--"] else args), depth + 1))
        return
    if base == "alias":  # with expand_aliases on, the value runs wherever the name is used
        for arg in args:
            if "=" in arg:
                _merge(result, effective_commands(arg.split("=", 1)[1], depth + 1))
        return
    if base == "trap":
        rest = _skip_options(args, set())
        if rest:
            _merge(result, effective_commands(rest[0], depth + 1))
        return
    for i, arg in enumerate(args):  # script / su / runuser: -c CMD, -qc CMD, --command[=]CMD
        if arg.startswith("--command="):
            _merge(result, effective_commands(arg.split("=", 1)[1], depth + 1))
        elif arg == "--command" or (arg.startswith("-") and not arg.startswith("--") and "c" in arg):
            value = arg[arg.index("c") + 1:] if arg != "--command" else ""
            if not value and i + 1 < len(args):
                value = args[i + 1]
            _merge(result, effective_commands(value, depth + 1))


def _find(args: list[str], result: Effective, depth: int) -> None:
    """`find … -exec rm {} \\;` runs rm (the command after each -exec/-execdir/-ok/-okdir); `-delete`
    deletes as `rm` would, so a rule on rm covers it. A found file as the command (`-exec {} …`) is opaque."""
    for i, arg in enumerate(args):
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            inner = []
            for word in args[i + 1:]:
                if word in (";", "+"):
                    break
                inner.append(word)
            if inner and "{}" in inner[0]:
                result.opaque.append("find runs the files it finds")
            elif inner:
                _expand(inner, result, depth + 1)
        elif arg == "-delete":
            starts = [word for word in args if not word.startswith(("-", "(", ")", "!"))][:1]
            result.commands.append(["rm", *starts])


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
