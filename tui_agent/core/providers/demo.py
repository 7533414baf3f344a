"""The demo model: an offline, deterministic "model" that drives the agent like a real one.

It is the embedded default when no API key is configured, so a new user sees the app work at once.
A question about the code gets a look around (Glob), two files read at once, a search (Grep) and a few
reads of what it found, then an answer in Markdown naming what it read, streamed word by word. Prompts
that say what they want get just that: "what is in this repo?" (the listing and the README: three
calls), "grep for X and Y" (one search per term), named paths (read first; one that is not here is
looked for and said not to exist), "read the data files", "biggest" files (ranked by a Grep line
count), a greeting or "what did we do so far?" (from the conversation, no tools). Each answer counts
what the demo did (`demo_flows`, `demo_named`, `demo_data`; the prompt's wishes: `demo_prompts`).

It decides only from what it is sent (the compacted outbound copy, the system prompt and the tool list),
like a real model, and answers the newest prompt the user typed, never the recap compaction put in place
of older turns (`demo_turn`). The workspace path is used only to skip paths that are not readable files.

Its window and policy (`demo_policy`) are sized so that every compaction tier shows within a few prompts
on a real repository (cut, mask, a drop that keeps the head, the summary) while the prompt being worked
on always stays in the request.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

from tui_agent.core.compaction.marks import is_recap, recap_files
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.summary import extractive_summary, is_summary_request
from tui_agent.core.messages import Message, result_text, tool_results
from tui_agent.core.providers.base import ModelRequest, Provider, ProviderEvent, StreamDone, StreamText
from tui_agent.core.providers.demo_answers import GREETING, HEADLESS_WORDS, RECAP, TUI_WORDS, from_conversation, md_escape
from tui_agent.core.providers.demo_files import DemoFiles
from tui_agent.core.providers.demo_flows import biggest, data_flow, explore, grep_flow, overview
from tui_agent.core.providers.demo_named import named_paths, named_step
from tui_agent.core.providers.demo_prompts import (
    BIGGEST,
    OVERVIEW,
    already_read,
    files_read,
    grep_ask,
    skills,
    wants_data,
)
from tui_agent.core.providers.demo_recall import recall_step
from tui_agent.core.providers.demo_turn import CUT_MARK, Turn, current_turn, earlier_prompts, lost, still_held
from tui_agent.core.providers.scripted import words

__all__ = ["DemoProvider", "demo_policy", "md_escape", "DEMO_NOTICE", "CHOSEN_NOTICE"]

# Said once, in the first reply. It must agree with the start-up warning when a key is missing (which
# names the same variables): `--model claude-…` alone does not reach Claude without a key.
DEMO_NOTICE = (
    "*Demo model (offline): no real model is called. Set `ANTHROPIC_API_KEY` for Claude, or "
    "`OPENAI_API_KEY` for an OpenAI-compatible endpoint, and start again.*\n\n"
)
CHOSEN_NOTICE = "*Demo model (offline): chosen with `--model demo`, no real model is called.*\n\n"
DEMO_CONTEXT_WINDOW = 24_000  # small on purpose: the meter moves and every tier shows in a demo
DEMO_OUTPUT_TOKENS = 4_096
Step = tuple[str, list[tuple[str, dict[str, Any]]]]


def demo_policy() -> CompactPolicy:
    """The demo's marks, as fractions of its (small) window, so they scale with `--context-window`.

    The low mark sits well above the base (system prompt and tools, about 4.6k tokens here), so a drop
    keeps a head, a recap and the turn in progress; the masked results' protected tail (at most 4k, and
    at each event no more than half of what the drop keeps: `ranking.mask_protection`) leaves room for a
    turn's older results to be masked before its prompt would have to go; the summary tier is on (extractive,
    no model needed). Cut, mask, drop and summary all show by the third or fourth prompt here. The low mark
    is 0.1 of what the budget leaves above the base (`CompactPolicy.low_mark`: 6.1k over a 4.6k base, 9.2k
    over this repository's 8k one, where 0.4 of the whole budget was the base itself; at 0.25 the cuts alone
    reached it here: no mask, no drop); the rest is compaction 3's (compaction 4 keeps little but the agent's
    writes: a 20k window's tour would show no drop)."""
    return CompactPolicy(high_water=0.65, low_water=0.1, keep_head=0.06, mask_protect_tokens=4_000, summary=True,
                         keep_for_use_share=0.25, keep_recurring_share=0.0, cut_keep_chars=2000)


@dataclass
class DemoProvider(Provider):
    model: str = "demo"
    name: str = "demo"
    context_window: int = DEMO_CONTEXT_WINDOW
    max_output_tokens: int = DEMO_OUTPUT_TOKENS
    workspace: Path | None = None
    delay: float = 0.0  # seconds between streamed words (the TUI uses a little, tests none)
    chosen: bool = False  # picked with --model demo (rather than for want of a key): the notice says so
    headless: bool = False  # `-p`: answers point at flags and TRACE=1, not at the panel
    _calls: int = field(default=0, repr=False)
    _announced: bool = field(default=False, repr=False)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        # Continue the numbering of the ids already in the conversation: a resumed session (a new
        # process) must not repeat a tool_use id, which the API would reject.
        self._calls = max(self._calls, _highest_demo_call(request.messages)) + 1
        if is_summary_request(request.messages):  # compaction's summary tier: an extractive summary
            summary = extractive_summary(request.messages)
            yield StreamDone({"role": "assistant", "content": [{"type": "text", "text": summary}]}, "end_turn", None)
            return
        turn = still_held(current_turn(request.messages))  # a placeholder is not content: fetch it again
        available = {tool["name"] for tool in request.tools}
        text, uses = self._decide(turn, request, available)
        if not self._announced:
            self._announced = True
            text = (CHOSEN_NOTICE if self.chosen else DEMO_NOTICE) + text
        for chunk in words(text):
            await asyncio.sleep(self.delay)
            yield StreamText(chunk)
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for k, (name, tool_input) in enumerate(uses, start=1):
            content.append({"type": "tool_use", "id": f"toolu_demo_{self._calls:03d}_{k}", "name": name,
                            "input": tool_input})
        message: Message = {"role": "assistant", "content": content}
        yield StreamDone(message, "tool_use" if uses else "end_turn", None)

    # -- the "policy" ----------------------------------------------------------------------------
    @property
    def files(self) -> DemoFiles:
        return DemoFiles(self.workspace, self.context_window, self.max_output_tokens)

    def _decide(self, turn: Turn, request: ModelRequest, available: set[str]) -> Step:
        """The newest prompt's wish, in order: small talk and recaps, a search, named paths, the biggest
        files, an overview (with the data files when asked), the data files, else a look around."""
        hints = HEADLESS_WORDS if self.headless else TUI_WORDS
        if GREETING.match(turn.prompt) or RECAP.search(turn.prompt):  # no exploring: it is all in the talk
            recaps = [m for m in request.messages if is_recap(m)]
            read = list(dict.fromkeys([*(p for m in recaps for p in recap_files(m)), *files_read(request.messages)]))
            return from_conversation(turn.prompt, earlier_prompts(request.messages), read, hints,
                                     "dropped" if recaps else _trimmed(request.messages)), []
        terms, where = grep_ask(turn.prompt)
        if terms and "Grep" in available:
            return grep_flow(turn, terms, where, hints)
        named = named_paths(turn.prompt, self.files)
        if named.here and not named.missing and "Context" in available:
            recalled = recall_step(turn, named.here, request.messages)
            if recalled is not None:
                return recalled
        if (named.here and "Read" in available) or (named.missing and "Glob" in available):
            return named_step(turn, named, self.files, hints)
        if BIGGEST.search(turn.prompt) and {"Glob", "Grep", "Read"} <= available:
            return biggest(turn, self.files, hints)
        data = wants_data(turn.prompt) and {"Glob", "Read"} <= available
        if OVERVIEW.search(turn.prompt) and {"Glob", "Read"} <= available:
            return overview(turn, self.files, hints, request.system, available, data)
        if data:
            return data_flow(turn, hints)
        return self._look_around(turn, request, available, hints)

    def _look_around(self, turn: Turn, request: ModelRequest, available: set[str], hints: Any) -> Step:
        """A question about the code; `/<skill> args` loads the skill first, as the system prompt asks."""
        found = skills(request.system)
        step = turn.rounds
        invoked = re.match(r"^/([\w.-]+)\s*(.*)$", turn.prompt.strip(), flags=re.DOTALL)
        if invoked and invoked.group(1) in found and "Skill" in available:
            if step == 0:
                skill_input = {"skill": invoked.group(1)}
                if invoked.group(2).strip():
                    skill_input["args"] = invoked.group(2).strip()
                return f"Loading the `{invoked.group(1)}` skill first.", [("Skill", skill_input)]
            step, found = step - 1, []
        return explore(turn, step, self.files, hints, request.system, available, already_read(request.messages), found)


_DEMO_ID = re.compile(r"^toolu_demo_(\d+)_\d+$")


def _highest_demo_call(messages: list[Message]) -> int:
    highest = 0
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            match = _DEMO_ID.match(str(block.get("id", ""))) if isinstance(block, dict) else None
            if match:
                highest = max(highest, int(match.group(1)))
    return highest


def _trimmed(messages: list[Message]) -> str:
    """"trimmed" when a tool result in the request is a placeholder or cut short (compaction's mark)."""
    return "trimmed" if any(lost("Read", result_text(r)) or CUT_MARK in result_text(r)
                            for m in messages for r in tool_results(m)) else ""
