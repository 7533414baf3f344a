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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator

from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.messages import Message
from tui_agent.core.providers.base import ModelRequest, Provider, ProviderEvent, StreamDone, StreamText

if TYPE_CHECKING:
    from tui_agent.core.providers.demo_files import DemoFiles

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
        # What it answers and how (`demo_decide`) loads with its first answer, not with the TUI's first frame.
        from tui_agent.core.providers import demo_decide as mind

        # Continue the numbering of the ids already in the conversation: a resumed session (a new
        # process) must not repeat a tool_use id, which the API would reject.
        self._calls = max(self._calls, mind.highest_demo_call(request.messages)) + 1
        if mind.is_summary_request(request.messages):  # compaction's summary tier: an extractive summary
            summary = mind.extractive_summary(request.messages)
            yield StreamDone({"role": "assistant", "content": [{"type": "text", "text": summary}]}, "end_turn", None)
            return
        turn = mind.still_held(mind.current_turn(request.messages))  # a placeholder is not content: fetch it again
        available = {tool["name"] for tool in request.tools}
        text, uses = mind.decide(turn, request, available, self.files, self.headless)
        if not self._announced:
            self._announced = True
            text = (CHOSEN_NOTICE if self.chosen else DEMO_NOTICE) + text
        for chunk in mind.words(text):
            await asyncio.sleep(self.delay)
            yield StreamText(chunk)
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for k, (name, tool_input) in enumerate(uses, start=1):
            content.append({"type": "tool_use", "id": f"toolu_demo_{self._calls:03d}_{k}", "name": name,
                            "input": tool_input})
        message: Message = {"role": "assistant", "content": content}
        yield StreamDone(message, "tool_use" if uses else "end_turn", None)

    def preload(self) -> None:
        """The demo's mind (`demo_decide`: its answers, flows and prompt readers), after the TUI's first frame."""
        import tui_agent.core.providers.demo_decide  # noqa: F401

    # -- the "policy" ----------------------------------------------------------------------------
    @property
    def files(self) -> DemoFiles:
        from tui_agent.core.providers.demo_files import DemoFiles

        return DemoFiles(self.workspace, self.context_window, self.max_output_tokens)


def __getattr__(name: str) -> Any:
    """`md_escape` (`demo_answers`), named here as before without importing the demo's answers at start-up."""
    if name == "md_escape":
        from tui_agent.core.providers.demo_answers import md_escape

        return md_escape
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
