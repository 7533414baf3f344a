"""One compaction event explained: its loss report, what the recap kept, and the request diff.

Opened from the panel's events list. Everything comes from the plan the engine reported for that call
(`CompactEvent.loss`, `plan.recap`) and the two requests it changed (`core.compaction.request_diff`), so
what the user reads here is what was sent, not a reconstruction.
"""

from __future__ import annotations

from typing import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from tui_agent.core.agent.budget import EventEntry, request_diff
from tui_agent.core.sanitize import strip_controls
from tui_agent.ui.budget_model import counted, fmt_k
from tui_agent.ui.themes import MUTED
from tui_agent.core.formats import plural
from tui_agent.ui.widgets.type_through import TypeThroughView

LIST_AT_MOST = 40


def _rows(indices, describe: Callable[[int], str]) -> list[str]:
    shown = [f"  #{i} {describe(i)}" for i in list(indices)[:LIST_AT_MOST]]
    if len(indices) > LIST_AT_MOST:
        shown.append(f"  … and {len(indices) - LIST_AT_MOST} more")
    return shown


def loss_report_text(entry: EventEntry, describe: Callable[[int], str]) -> str:
    """The event in plain text: what left, what was masked, what is missing, what the recap kept, the diff."""
    event, plan = entry.event, entry.plan
    loss = event.loss
    lines = [event.line(), ""]
    lines.append(f"Left the request ({counted(len(loss.left_request), 'message')}):")
    lines += _rows(loss.left_request, describe) or ["  nothing"]
    lines.append(f"Masked (a placeholder is sent instead, {counted(len(loss.masked), 'message')}):")
    lines += _rows(loss.masked, describe) or ["  nothing"]
    kept, used = loss.in_use
    if used:
        lines.append(f"In use: {kept * 100 // used} % kept ({kept} of the {counted(used, 'identifier')} the last "
                     "replies used from earlier messages are still in the request)")
    if loss.at_risk:
        lines.append(f"At risk (identifiers no longer in the request, most recently used first, "
                     f"{counted(len(loss.at_risk), 'identifier')}):")
        lines.append("  " + ", ".join(loss.at_risk))
    else:
        lines.append("At risk: no identifier left the request.")
    if loss.clean:
        lines.append("Lost: nothing — every prompt and file path is still in the request or the recap.")
    else:
        lines.append("Lost (in neither the request nor the recap):")
        lines += [f"  prompt “{p}”" for p in loss.missing_prompts[:LIST_AT_MOST]]
        lines += [f"  path {p}" for p in loss.missing_paths[:LIST_AT_MOST]]
    lines.append("")
    recap = plan.recap
    if recap is not None and plan.drop_until > plan.drop_from:
        what = "summary" if recap.summary else "recap"
        lines.append(f"The {what} kept ({fmt_k(recap.tokens)} tok, covers {plan.recap_span()}: "
                     f"{counted(len(recap.prompts), 'prompt')}, {counted(len(recap.files), 'file')}, "
                     f"{counted(recap.commands, 'command')}):")
        lines += ["  " + line for line in recap.text.splitlines()]
    else:
        lines.append("No recap: nothing was dropped at this event.")
    lines.append("")
    changes = request_diff(entry)
    if entry.previous_plan is None:
        lines.append("Request diff: no earlier call to compare with.")
    else:
        lines.append(f"Request diff against call {entry.previous_plan.call} ({plural(len(changes), 'message')}):")
        for change in changes[:LIST_AT_MOST * 2]:
            who = f"#{change.index} {describe(change.index)}" if change.index is not None else "the recap"
            lines.append(f"  {change.kind:<8} {who} · {fmt_k(change.before_tokens)} → {fmt_k(change.after_tokens)} tok")
        if len(changes) > LIST_AT_MOST * 2:
            lines.append(f"  … and {len(changes) - LIST_AT_MOST * 2} more")
    return "\n".join(lines)


class EventScreen(TypeThroughView, ModalScreen[None]):
    """The loss report of one event; Esc closes (typed text closes it too, and goes to the prompt)."""

    BINDINGS = [Binding("escape,q", "dismiss", "Close")]
    DEFAULT_CSS = """
    EventScreen { align: center middle; background: $background 60%; }
    EventScreen > #event-frame { width: 95%; height: 90%; background: $surface; border: thick $primary; }
    EventScreen #event-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
    EventScreen VerticalScroll { padding: 0 1; }
    """

    def __init__(self, entry: EventEntry, describe: Callable[[int], str]) -> None:
        super().__init__()
        self.entry = entry
        self.describe = describe

    def compose(self) -> ComposeResult:
        with Vertical(id="event-frame"):
            yield Static(Content.assemble(f"Compaction event at call {self.entry.event.call}",
                                          ("   Esc closes", MUTED)), id="event-title")
            with VerticalScroll():
                # prompts and paths in the recap are the user's and the model's text: never escape codes
                yield Static(strip_controls(loss_report_text(self.entry, self.describe)), markup=False,
                             id="event-text")
        yield Footer()  # this view's own keys, not the main screen's under it
