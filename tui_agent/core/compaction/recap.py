"""Tier 4's trace: the recap message that stands where dropped messages were.

Built deterministically from the dropped span (the same span always gives the same bytes, so the
request after an event is stable until the next one). It keeps what must never vanish silently: the
user's own prompts verbatim (newest first, within a character budget, as Codex keeps them), every file
path the agent read, wrote or edited, the commands it ran with their outcome, and the count of what left.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from tui_agent.core import tokens as tk
from tui_agent.core.compaction.names.found_in import found_in
from tui_agent.core.compaction.marks import RECAP_MARK, RECAP_PROMPTS_HEADING
from tui_agent.core.compaction.plan import Recap, fmt_tokens
from tui_agent.core.compaction.names.recap_tally import tally
from tui_agent.core.messages import Message, blocks, is_user_text, text_of, tool_results, tool_uses

PATH_KEYS = ("file_path", "path", "notebook_path")  # the inputs that name a touched path (recaps, checks, forgot)
WRITE_TOOLS = {"Write": "written", "Edit": "edited", "MultiEdit": "edited", "NotebookEdit": "edited"}
MAX_COMMANDS = 40
COMMAND_CHARS = 160


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


LONG_PROMPT_HEAD = 500  # a prompt over the verbatim limit (a pasted log, a summary) is kept as its head
LONG_PROMPTS_BUDGET = 20_000


def choose_prompts(prompts: list[tuple[int, str]], budget_chars: int, max_chars: int) -> list[tuple[int, str]]:
    """The user's prompts up to `max_chars` verbatim, newest first while they fit `budget_chars`; longer
    ones as their head, within a budget of their own (so a pasted log never pushes a typed prompt out)."""
    chosen: list[tuple[int, str]] = []
    used = long_used = 0
    full = False
    for index, text in reversed(prompts):
        if len(text) <= max_chars:
            if full or used + len(text) > budget_chars:
                full = True
                continue
            chosen.append((index, text))
            used += len(text)
        elif long_used < LONG_PROMPTS_BUDGET:
            head = text[:LONG_PROMPT_HEAD] + f"… [{fmt_tokens(len(text))} chars in all]"
            chosen.append((index, head))
            long_used += len(head)
    chosen.sort()
    return chosen


@dataclass(frozen=True)
class MessageFacts:
    """What the recap and the loss report need of one message, taken once (history is append-only)."""

    prompt: str | None = None
    paths: tuple[tuple[str, str], ...] = ()
    commands: tuple[tuple[str, str], ...] = ()  # (command, tool_use id)
    tools: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()  # tool_use ids answered with an error
    chars: int = 0


def facts_of(message: Message, chars: int | None = None) -> MessageFacts:
    """`chars`: the message's `tk.message_chars`, when the caller measured it already."""
    prompt = None
    if is_user_text(message):
        text = text_of(message)
        prompt = text if text.strip() else None
    uses = tool_uses(message)
    commands = tuple(
        (" ".join(use["input"]["command"].split()), use.get("id", ""))
        for use in uses
        if use.get("name") == "Bash" and isinstance(use.get("input"), dict)
        and isinstance(use["input"].get("command"), str)
    )
    failed = tuple(b.get("tool_use_id", "") for b in tool_results(message) if b.get("is_error"))
    facts = MessageFacts(prompt, tuple(touched_paths(message)), commands, tuple(u.get("name", "?") for u in uses),
                         failed, tk.message_chars(message) if chars is None else chars)
    return facts if facts != MessageFacts(chars=facts.chars) else MessageFacts(chars=facts.chars)


def build_recap(
    facts: Sequence[MessageFacts],
    until: int,
    kept: frozenset[int],
    *,
    prompt_chars: int,
    prompt_max_chars: int,
    call: int,
    summary: str | None = None,
    start: int = 0,
    excluded: frozenset[int] | set[int] = frozenset(),
    mark: str = RECAP_MARK,
) -> tuple[Recap, Message]:
    """The recap for messages [start, until) less the `kept` (pinned) ones, from their facts."""
    sums = tally(facts, start, until, kept | excluded)  # the span's sums, extended from a shorter span's
    prompts = choose_prompts(sums.prompts, prompt_chars, prompt_max_chars)
    files, commands, tools, failed, chars = sums.files, sums.commands, sums.tools, sums.failed, sums.chars
    lines = [f"{RECAP_MARK} {sums.dropped} "
             f"{'earlier messages' if not start else f'messages after the first {start}'} ({fmt_tokens(chars)} chars) "
             "of this conversation are no longer sent in full. This is what they held; the full history is kept "
             "by the app.]"]
    if prompts:
        lines.append("")
        lines.append(RECAP_PROMPTS_HEADING)
        lines.extend(f"- {text}" for _, text in prompts)  # verbatim: a prompt of several lines too
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
        for command, tool_id in shown:
            text = command if len(command) <= COMMAND_CHARS else command[: COMMAND_CHARS - 1] + "…"
            lines.append(f"- `{text}` ({'failed' if tool_id in failed else 'ok'})")
    if tools:
        lines.append("")
        lines.append("Tool calls in that part: " + ", ".join(f"{name} ×{n}" for name, n in sorted(
            tools.items(), key=lambda item: (-item[1], item[0]))))
    if summary:
        lines.append("")
        lines.append("Summary of that part:")
        lines.append(summary.strip())
    if mark != RECAP_MARK:  # `CompactState.recap_mark`: a state saved before the rename keeps its old words
        lines[0] = mark + lines[0][len(RECAP_MARK):]
    text = "\n".join(lines)
    message: Message = {"role": "user", "content": [{"type": "text", "text": text}]}
    recap = Recap(
        covers=until, start=start, text=text, prompts=tuple(t for _, t in prompts), files=tuple(files),
        commands=len(commands), tokens=tk.message_tokens(message), summary=summary, call=call,
    )
    return recap, message


def missing_from(request: Callable[[], str], facts: Sequence[MessageFacts], indices: Iterable[int], prompt_max_chars: int,
                 recap: Recap | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Prompts (≤ `prompt_max_chars`) and touched paths of `indices` that appear nowhere in the request.

    What the recap lists is in the request by construction; only the rest is searched for."""
    in_recap_prompts = set(recap.prompts) if recap else set()
    in_recap_files = set(recap.files) if recap else set()
    prompts: dict[str, None] = {}
    paths: dict[str, None] = {}
    for i in indices:
        fact = facts[i]
        if fact.prompt and len(fact.prompt) <= prompt_max_chars and fact.prompt not in in_recap_prompts:
            prompts[fact.prompt] = None
        for path, _ in fact.paths:
            if path not in in_recap_files:
                paths[path] = None
    if not prompts and not paths:
        return (), ()
    found = found_in(request(), [*prompts, *paths])  # the text is built only when something is not in the recap
    return tuple(p for p in prompts if p not in found), tuple(p for p in paths if p not in found)


def request_text(messages: Iterable[Message], text_of_message: Callable[[Message], str | None] | None = None) -> str:
    """Every text the model is sent, joined (what the loss report searches for prompts and paths).
    `text_of_message` stands in for `message_text` (a replay passes one that remembers each message's)."""
    texts = ((text_of_message or message_text)(m) for m in messages)
    return "\n".join(t for t in texts if t is not None)


def message_text(message: Message) -> str | None:
    """The texts of one message joined as `request_text` joins them (None: it has no text part at all)."""
    parts: list[str] = []
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
    return "\n".join(parts) if parts else None


def _input_text(value: Any) -> str:
    if isinstance(value, dict):
        return "\n".join(_input_text(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_input_text(v) for v in value)
    return value if isinstance(value, str) else ""
