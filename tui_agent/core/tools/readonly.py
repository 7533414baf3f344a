"""Which shell commands only look at things, so running them again gives their result back.

The compactor masks an old result only when the model can get it again by calling the tool again, and
its placeholder says so: a command that writes, deletes or runs code must never be called re-runnable,
or the placeholder would invite the model to run it again. So the check is conservative: one simple
command (no pipes, redirections, command substitution or chaining) whose program and options only read.
Our own Bash tool answers with it (`Bash.rerunnable`); transcripts, which have no tool objects, use it too.
"""

from __future__ import annotations

READ_ONLY_COMMANDS = frozenset({
    "ls", "cat", "head", "tail", "wc", "grep", "rg", "find", "pwd", "tree", "file", "stat", "du", "df",
    "which", "echo", "sort", "uniq", "diff", "cut", "jq", "printenv", "date",
})
READ_ONLY_GIT = frozenset({"status", "log", "diff", "show", "blame", "ls-files", "grep", "rev-parse"})
# options that make an otherwise read-only program write, delete or run something
WRITING_OPTIONS = {
    "find": ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"),
    "sort": ("-o", "--output"),
    "tree": ("-o",),
    "date": ("-s", "--set"),
}
SHELL_MARKS = (">", "<", ";", "&", "|", "`", "$(", "\n")


def is_read_only_command(command: object) -> bool:
    """A conservative check: one simple command whose program and options only look at things."""
    if not isinstance(command, str) or not command.strip():
        return False
    if any(mark in command for mark in SHELL_MARKS):
        return False
    words = command.split()
    program = words[0]
    if program == "git":
        if len(words) > 1 and words[1] == "branch":  # listing only: a name or -d/-m would change branches
            return all(w in ("-a", "-r", "-v", "-vv", "--list", "--all", "--remotes") for w in words[2:])
        return len(words) > 1 and words[1] in READ_ONLY_GIT
    if program not in READ_ONLY_COMMANDS:
        return False  # awk and sed scripts can write files or run commands (system(), w, e): never re-runnable
    if any(_writes(word, option) for word in words[1:] for option in WRITING_OPTIONS.get(program, ())):
        return False
    if program == "uniq" and len([w for w in words[1:] if not w.startswith("-")]) > 1:
        return False  # `uniq IN OUT` writes OUT
    return True


def _writes(word: str, option: str) -> bool:
    """`word` is `option` itself, `--option=VALUE`, or a short option glued to its value (`-oFILE`)."""
    if word == option or word.startswith(option + "="):
        return True
    return len(option) == 2 and option[1] != "-" and word.startswith(option) and not word.startswith("--")
