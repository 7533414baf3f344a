"""Tier 4's trace: the ledger message that stands where dropped messages were.

Built deterministically from the dropped span (the same span always gives the same bytes, so the
request after an event is stable until the next one). It keeps what must never vanish silently: the
user's own prompts verbatim (newest first, within a character budget, as Codex keeps them), every file
path the agent read, wrote or edited, the commands it ran with their outcome, and the count of what left.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Sequence

from tui_agent.core import tokens as tk
from tui_agent.core.compaction.plan import Ledger, fmt_tokens
from tui_agent.core.messages import Message, blocks, is_user_text, text_of, tool_results, tool_uses

PATH_KEYS = ("file_path", "path", "notebook_path")
WRITE_TOOLS = {"Write": "written", "Edit": "edited", "MultiEdit": "edited", "NotebookEdit": "edited"}
MAX_COMMANDS = 40
COMMAND_CHARS = 160


def user_prompts(history: Sequence[Message], indices: Iterable[int]) -> list[tuple[int, str]]:
    """(index, text) of the user's own text messages among `indices` (tool results are not prompts)."""
    out = []
    for i in indices:
        message = history[i]
        if is_user_text(message):
            text = text_of(message)
            if text.strip():
                out.append((i, text))
    return out


def touched_paths(message: Message) -> list[tuple[str, str]]:
    """(path, how) for every path-like input of the message's tool calls."""
    out = []
    for use in tool_uses(message):
        tool_input = use.get("input")
        if not isinstance(tool_input, dict):
            continue
        name = use.get("name", "")
        for key in PATH_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                how = WRITE_TOOLS.get(name, "read" if name in ("Read", "NotebookRead") else "searched")
                out.append((value, how))
    return out


def choose_prompts(prompts: list[tuple[int, str]], budget_chars: int, max_chars: int) -> list[tuple[int, str]]:
    """Newest first while they fit the budget; a prompt over `max_chars` is kept as its head."""
    chosen: list[tuple[int, str]] = []
    used = 0
    for index, text in reversed(prompts):
        if len(text) > max_chars:
            text = text[:max_chars] + f"… [{fmt_tokens(len(text))} chars in all]"
        if used + len(text) > budget_chars:
            break
        chosen.append((index, text))
        used += len(text)
    chosen.reverse()
    return chosen


def build_ledger(
    history: Sequence[Message],
    until: int,
    kept: frozenset[int],
    *,
    prompt_chars: int,
    prompt_max_chars: int,
    call: int,
    summary: str | None = None,
    start: int = 0,
) -> tuple[Ledger, Message]:
    """The ledger for history[start:until] less the `kept` (pinned) messages, and the user message carrying it."""
    dropped = [i for i in range(start, until) if i not in kept]
    prompts = choose_prompts(user_prompts(history, dropped), prompt_chars, prompt_max_chars)
    files: dict[str, str] = {}
    commands: list[tuple[str, bool]] = []
    tools: Counter[str] = Counter()
    results_by_id: dict[str, bool] = {}
    chars = 0
    for i in dropped:
        message = history[i]
        chars += tk.message_chars(message)
        for block in tool_results(message):
            results_by_id[block.get("tool_use_id", "")] = bool(block.get("is_error"))
    for i in dropped:
        message = history[i]
        for path, how in touched_paths(message):
            # a write or edit outranks a read of the same file
            if files.get(path) not in ("written", "edited") or how in ("written", "edited"):
                files.pop(path, None)
                files[path] = how
        for use in tool_uses(message):
            tools[use.get("name", "?")] += 1
            command = use.get("input", {}).get("command") if isinstance(use.get("input"), dict) else None
            if use.get("name") == "Bash" and isinstance(command, str):
                failed = results_by_id.get(use.get("id", ""), False)
                commands.append((" ".join(command.split()), failed))
    where = "earlier messages" if not start else f"messages after the first {start}"
    lines = [f"[Context ledger: {len(dropped)} {where} ({fmt_tokens(chars)} chars) of this conversation "
             "are no longer sent in full. This is what they held; the full history is kept by the app.]"]
    if prompts:
        lines.append("")
        lines.append("The user's prompts in that part, oldest first (verbatim):")
        lines.extend(f"- {text}" for _, text in prompts)
    groups: dict[str, list[str]] = {}
    for path, how in files.items():
        groups.setdefault(how, []).append(path)
    for how in ("read", "written", "edited", "searched"):
        if groups.get(how):
            lines.append("")
            lines.append(f"Files {how if how != 'searched' else 'and folders searched'}: " + ", ".join(groups[how]))
    if commands:
        shown = commands[-MAX_COMMANDS:]
        lines.append("")
        head = f"Commands run (last {len(shown)} of {len(commands)})" if len(commands) > len(shown) else "Commands run"
        lines.append(head + ":")
        for command, failed in shown:
            text = command if len(command) <= COMMAND_CHARS else command[: COMMAND_CHARS - 1] + "…"
            lines.append(f"- `{text}` ({'failed' if failed else 'ok'})")
    if tools:
        lines.append("")
        lines.append("Tool calls in that part: " + ", ".join(f"{name} ×{n}" for name, n in sorted(
            tools.items(), key=lambda item: (-item[1], item[0]))))
    if summary:
        lines.append("")
        lines.append("Summary of that part:")
        lines.append(summary.strip())
    text = "\n".join(lines)
    message: Message = {"role": "user", "content": [{"type": "text", "text": text}]}
    ledger = Ledger(
        covers=until, start=start, text=text, prompts=tuple(t for _, t in prompts), files=tuple(files),
        commands=len(commands), tokens=tk.message_tokens(message), summary=summary, call=call,
    )
    return ledger, message


def missing_from(request_text: str, history: Sequence[Message], indices: Iterable[int],
                 prompt_max_chars: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Prompts (≤ `prompt_max_chars`) and touched paths of `indices` that appear nowhere in the request."""
    prompts: list[str] = []
    paths: list[str] = []
    for i in indices:
        message = history[i]
        for _, text in user_prompts(history, [i]):
            if len(text) <= prompt_max_chars and text not in request_text:
                prompts.append(text)
        for path, _ in touched_paths(message):
            if path not in request_text and path not in paths:
                paths.append(path)
    return tuple(prompts), tuple(paths)


def request_text(messages: Iterable[Message]) -> str:
    """Every text the model is sent, joined (what the loss report searches for prompts and paths)."""
    parts: list[str] = []
    for message in messages:
        for block in blocks(message):
            kind = block.get("type")
            if kind == "text":
                parts.append(block.get("text", ""))
            elif kind == "tool_use":
                parts.append(_input_text(block.get("input")))
            elif kind == "tool_result":
                content = block.get("content")
                if isinstance(content, str):
                    parts.append(content)
                elif isinstance(content, list):
                    parts.extend(b.get("text", "") for b in content if isinstance(b, dict))
    return "\n".join(parts)


def _input_text(value: Any) -> str:
    if isinstance(value, dict):
        return "\n".join(_input_text(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_input_text(v) for v in value)
    return value if isinstance(value, str) else ""
