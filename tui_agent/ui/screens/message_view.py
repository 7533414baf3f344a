"""One history message in full, beside the form the selected call actually sent.

This is where a user sees what compaction did to a message: the whole tool result on the left, the
cut copy (or "dropped: not sent") on the right. The outbound form is the call's own request, as the
engine built it (the plan says where each message stands in it); nothing is compacted again here.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Callable

from rich.cells import cell_len, chop_cells

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from tui_agent.core.messages import Message, blocks, result_text
from tui_agent.core.sanitize import strip_controls
from tui_agent.core.tokens import message_chars
from tui_agent.ui.budget_model import counted, fmt_k
from tui_agent.ui.themes import MUTED
from tui_agent.ui.widgets.type_through import TypeThroughView

if TYPE_CHECKING:
    from tui_agent.ui.budget_model import OutboundView

SHOW_CHARS = 20_000
CONTINUATION = "↪ "
_NUMBERED = re.compile(r"^( *\d+)\t")  # Read's `{n:>6}\t{line}`


def hanging_wrap(text: str, width: int) -> str:
    """Wrap Read's numbered lines under their code, each continuation marked `↪` in the number's
    gutter: wrapped at the pane's edge, a long line's tail would otherwise start at column 0 with no
    number and read as a line of its own. Other lines are left to the widget's own word wrap.
    Widths are terminal cells (a CJK character or an emoji takes two)."""
    if width <= 0:
        return text
    out: list[str] = []
    for line in text.split("\n"):
        match = _NUMBERED.match(line)
        if match is None:
            out.append(line)
            continue
        number = match.group(1)
        gutter = f"{number}  "
        body = line[match.end():].expandtabs(4)
        room = width - cell_len(gutter)
        if room < 8 or cell_len(body) <= room:
            out.append(gutter + body)
            continue
        chunks = chop_cells(body, room)
        out.append(gutter + chunks[0])
        lead = " " * max(cell_len(gutter) - cell_len(CONTINUATION), 0) + CONTINUATION
        out += [lead + chunk for chunk in chunks[1:]]
    return "\n".join(out)


class WrappedText(Static):
    """Plain (never markup) text whose numbered code lines wrap with a marked hanging indent."""

    DEFAULT_CSS = "WrappedText { width: 1fr; }"

    def __init__(self, text: str, **kwargs) -> None:
        super().__init__(text, markup=False, **kwargs)
        self.raw = text
        self._wrapped_at = -1

    def on_resize(self) -> None:
        width = self.content_region.width
        if width != self._wrapped_at:
            self._wrapped_at = width
            self.update(hanging_wrap(self.raw, width))

    def set_text(self, text: str) -> None:
        """New text (p / x / e changed the outbound form), wrapped at the current width."""
        self.raw = text
        self._wrapped_at = self.content_region.width
        self.update(hanging_wrap(text, self._wrapped_at) if self._wrapped_at > 0 else text)


def format_message(message: Message) -> str:
    """A message as readable plain text, one labelled section per block."""
    parts: list[str] = []
    for block in blocks(message):
        kind = block.get("type")
        if kind == "text":
            parts.append(f"[text]\n{block.get('text', '')}")
        elif kind == "tool_use":
            body = json.dumps(block.get("input", {}), indent=2, ensure_ascii=False)
            parts.append(f"[tool_use {block.get('name')} · {block.get('id')}]\n{body}")
        elif kind == "tool_result":
            text = result_text(block)
            error = " · error" if block.get("is_error") else ""
            if len(text) > SHOW_CHARS:
                text = text[:SHOW_CHARS] + f"\n… ({fmt_k(len(text) - SHOW_CHARS)} more chars not shown here)"
            parts.append(f"[tool_result {block.get('tool_use_id')} · {fmt_k(len(result_text(block)))} chars{error}]\n{text}")
        else:
            parts.append(f"[{kind}]")
    return "\n\n".join(parts) or "(empty message)"


def outbound_form(history: list[Message], index: int, view: "OutboundView | None") -> tuple[str, str]:
    """(heading, body) for message `index` as the view's call sent it."""
    if view is None:
        return "not sent yet", "No model call has been made since this message was added."
    state = view.state(index)
    op = view.plan.op(index)
    if state == "dropped":
        body = f"Not sent: {op.reason}. It stays in the history (left) and on screen."
        recap = view.plan.recap
        if op.kind in ("dropped", "summarised") and recap is not None and view.plan.recap_position is not None:
            what = "summary" if recap.summary else "recap"
            body += f"\n\nSent in its place, the {what} for {view.plan.recap_span()}:\n\n{recap.text}"
        return f"{view.label}: {op.kind}", body
    if state == "new":
        return f"{view.label}: not sent yet", f"Appended after {view.label} went out; the next call sends it."
    sent = view.sent_message(index)
    if sent is None:
        return f"{view.label}", "The request of this call is not available."
    if op.kind == "masked":
        return f"{view.label} (masked)", f"{op.reason}.\n\n" + format_message(sent)
    cuts = view.truncated.get(index, ())
    if not cuts:
        return f"{view.label} (sent whole)", format_message(sent)
    original = sum(c.original_chars for c in cuts)  # the whole message's cut results, never one block's
    kept = sum(c.kept_chars for c in cuts)
    why = "Cut to fit the window" if any(c.hard for c in cuts) else "Already read"
    lead = (f"✂ {why}: {counted(len(cuts), 'tool result')} cut, {fmt_k(kept)} of {fmt_k(original)} chars sent "
            f"({fmt_k(original - kept)} chars not sent); each cut copy ends with a note.\n\n")
    return f"{view.label} (✂ cut)", lead + format_message(sent)


class MessageScreen(TypeThroughView, ModalScreen[None]):
    """Full message (left) beside its outbound form (right); Esc closes. Opened to read (a click), typed
    text closes it and goes to the prompt; opened from the steering mode, p / x / e act here too."""

    OWN_KEYS = frozenset({"p", "x", "e", "q"})

    BINDINGS = [Binding("escape,q", "dismiss", "Close"), Binding("p", "act('pin')", "Pin"),
                Binding("x", "act('exclude')", "Exclude"), Binding("e", "act('expand')", "Expand")]
    DEFAULT_CSS = """
    MessageScreen { align: center middle; background: $background 60%; }
    MessageScreen > #frame { width: 95%; height: 90%; background: $surface; border: thick $primary; }
    MessageScreen #frame-title { height: 1; padding: 0 1; background: $panel; text-style: bold; }
    MessageScreen .side { width: 1fr; }
    MessageScreen .side-title { height: 1; padding: 0 1; color: $text-muted; text-style: bold; }
    MessageScreen .side VerticalScroll { padding: 0 1; }
    MessageScreen #outbound-side { border-left: solid $panel; }
    """

    def __init__(self, history: list[Message], index: int, view: "OutboundView | None", what: str,
                 act: "Callable[[int, str], tuple[OutboundView | None, str]] | None" = None,
                 steering: bool = False) -> None:
        super().__init__()
        self.steering = steering
        self.history = history
        self.index = index
        self.view = view
        self.what = strip_controls(what)
        self.act = act  # pin / exclude / expand in the next request; returns the next call's view

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return action != "act" or (self.act is not None and self.steering)  # read-only (replay), or to read

    def action_act(self, action: str) -> None:
        """`p` / `x` / `e`: act on this message, then show how the next call sends it."""
        if self.act is None:
            return
        self.view, note = self.act(self.index, action)
        heading, outbound = outbound_form(self.history, self.index, self.view)
        self.query_one("#outbound-title", Static).update(f"outbound · {heading} · {note}")
        self.query_one("#outbound-text", WrappedText).set_text(strip_controls(outbound))

    def _keys_line(self) -> str:
        if self.act is None:
            return "   read-only · Esc closes"
        if self.steering:
            return "   steering: p pin · x exclude · e expand · Esc closes"
        return "   Esc closes · typing goes to the prompt · F4 in the panel steers"

    def compose(self) -> ComposeResult:
        message = self.history[self.index]
        heading, outbound = outbound_form(self.history, self.index, self.view)
        with Vertical(id="frame"):
            yield Static(Content.assemble(f"#{self.index} {message.get('role')}  ", (self.what, "$text-primary"),
                                          (self._keys_line(), MUTED)),
                         id="frame-title")
            with Horizontal():
                with Vertical(classes="side", id="history-side"):
                    yield Static(f"history (in memory) · message {fmt_k(message_chars(message))} chars",
                                 classes="side-title", markup=False)
                    with VerticalScroll():
                        yield WrappedText(strip_controls(format_message(message)), id="history-text")
                with Vertical(classes="side", id="outbound-side"):
                    yield Static(f"outbound · {heading}", classes="side-title", markup=False, id="outbound-title")
                    with VerticalScroll():
                        yield WrappedText(strip_controls(outbound), id="outbound-text")
        yield Footer()  # this view's own keys, not the main screen's under it
