"""ripgrep driven for Grep: its command line from the tool's input, and its run as a killable subprocess.

Its own concept because it speaks rg, not the model: no user config, hidden files in, `.git` out, the
user's globs before the read-deny exclusions (the last matching glob wins, so a user glob never brings a
denied file back), a rare field separator after the path, and a run that stops reading once the page is
in and is killed when the turn is cancelled. What the model asks and reads (the schema, the modes, paging,
the notes) is `grep.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any, Sequence

MAX_COLUMNS = 500
FIELD = "\x1f"  # marks the end of the path (and of the line number) in content lines


def build_args(rg: str, tool_input: dict[str, Any], mode: str, target: str, excludes: Sequence[str] = ()) -> list[str]:
    """The rg command line: no user config, hidden files in, `.git` out, one path per line.

    `excludes` (`!pattern` globs from read-deny rules) come after the user's globs: in ripgrep the last
    matching glob wins, so a user glob can never bring a denied file back."""
    args = [
        rg, "--no-config", "--color=never", "--no-messages", "--hidden", "--no-require-git",
        "--glob", "!.git", "--with-filename", "--no-heading",
    ]  # fmt: skip
    if tool_input.get("-i"):
        args.append("--ignore-case")
    if tool_input.get("multiline"):
        args += ["--multiline", "--multiline-dotall"]
    if tool_input.get("type"):
        args += ["--type", str(tool_input["type"])]
    for glob in split_globs(str(tool_input.get("glob") or "")):
        args += ["--glob", glob]
    for glob in excludes:
        args += ["--glob", glob]
    if mode == "files_with_matches":
        args.append("--files-with-matches")
    elif mode == "count":
        args.append("--count")
    else:
        args += ["--sort=path", "--max-columns", str(MAX_COLUMNS), "--max-columns-preview",
                 f"--field-match-separator={FIELD}:", f"--field-context-separator={FIELD}-"]
        args.append("--line-number" if tool_input.get("-n", True) else "--no-line-number")
        if tool_input.get("-C") is not None:
            args += ["--context", str(int(tool_input["-C"]))]
        else:
            if tool_input.get("-B") is not None:
                args += ["--before-context", str(int(tool_input["-B"]))]
            if tool_input.get("-A") is not None:
                args += ["--after-context", str(int(tool_input["-A"]))]
    args += ["--regexp", str(tool_input["pattern"]), "--", target]
    return args


def split_globs(text: str) -> list[str]:
    """`"*.ts *.tsx"` or `"*.ts,*.tsx"` → two globs; a brace glob (`*.{ts,tsx}`) stays whole."""
    globs: list[str] = []
    for part in text.split():
        if "{" in part and "}" in part:
            globs.append(part)
        else:
            globs.extend(p for p in part.split(",") if p)
    return globs


async def run_rg(
    args: list[str], cwd: Path, stop_after: int | None, skip: int = 0, cap_chars: int = 30_000
) -> tuple[list[str], str, int | None]:
    """Run rg; (stdout lines, stderr, exit code or None when we stopped it early). Killed if cancelled.

    With `stop_after` (content mode, sorted output) reading stops once that many lines, or more than
    `cap_chars` (the output cap) after the first `skip` lines, have arrived: the rest would be cut anyway.
    """
    process = await asyncio.create_subprocess_exec(
        *args,
        cwd=str(cwd),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=1 << 22,
    )
    assert process.stdout is not None and process.stderr is not None
    stderr_task = asyncio.ensure_future(process.stderr.read())  # small: --no-messages
    lines: list[str] = []
    chars = 0
    try:
        while True:
            raw = await process.stdout.readline()
            if not raw:
                break
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            lines.append(line)
            if len(lines) > skip:
                chars += len(line) - line.count(FIELD) + 1  # as shown, without the separators
            if stop_after is not None and (len(lines) >= stop_after or chars > cap_chars):
                return lines, "", None
        code = await process.wait()
        stderr = (await stderr_task).decode("utf-8", errors="replace")
        return lines, stderr, code
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            with contextlib.suppress(Exception):
                await process.wait()
        if not stderr_task.done():
            stderr_task.cancel()
