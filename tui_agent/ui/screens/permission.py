"""The permission prompt: a tool wants to change something; the user allows once, for the session, or denies.

Keyboard first (y / a / n, Esc denies; ↑/↓ and PgUp/PgDn scroll a long preview), and it shows what will
happen, not just the tool's name. The tool's own `permission_preview` (a unified diff against the file
on disk for Edit and for Write over an existing file, the new content for Write, the command and where
it runs for Bash) is the body when there is one; the diff part is coloured. Any other tool (an MCP tool,
say) shows its input as `key: value` lines, multi-line strings unescaped, so the user can read what
they allow. It also says which rule "allow for this session" will add, since that rule may cover more
than this one call (`pytest:*`). All of it is plain text: file contents and commands are untrusted
(pitfall P6).
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import HorizontalGroup, VerticalGroup, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Static

from tui_agent.core.access.gate import PermissionDecision
from tui_agent.core.sanitize import strip_controls
from tui_agent.ui.themes import MUTED
from tui_agent.core.formats import plural

WRITE_PREVIEW_LINES = 20
INLINE_JSON = 60  # a non-string value shorter than this stays on its key's line


def styled_preview(preview: str) -> Content:
    """A tool's preview text, styled: headline bold, warnings loud, notes muted, the diff coloured.

    Diff colouring starts only at a `--- `/`+++ ` header pair, so a Write preview of a Markdown list
    (`- item`) is not painted as removed lines.
    """
    lines = preview.split("\n")
    out: list[Content] = []
    in_diff = False
    headline_done = command = False
    for i, line in enumerate(lines):
        following = lines[i + 1] if i + 1 < len(lines) else ""
        style = ""
        if line.startswith("--- ") and following.startswith("+++ "):
            in_diff, style = True, "bold"
        elif in_diff and line.startswith("+++ "):
            style = "bold"
        elif in_diff and line.startswith("@@"):
            style = "$text-accent"
        elif in_diff and line.startswith("+"):
            style = "$text-success"
        elif in_diff and line.startswith("-"):
            style = "$text-error"
        elif line.startswith("Warning:"):
            style = "bold $text-warning"
        elif line.startswith("$ ") and not headline_done:
            out.append(Content.assemble(("$ ", MUTED), (line[2:], "bold")))
            headline_done = command = True
            continue
        elif not headline_done and line.strip():
            style, headline_done = "bold", True
        elif line.startswith("(") and line.endswith(")") or line.startswith("… ") or command and line.startswith("# "):
            style = MUTED  # notes, "… N more lines", a Bash call's description
        out.append(Content.styled(line, style) if style else Content(line))
    return Content("\n").join(out)


def input_lines(tool_input: dict[str, Any]) -> Content:
    """Any tool's input as `key: value` lines: strings as they are (newlines kept), the rest as JSON."""
    parts: list[Content] = []
    for key, value in tool_input.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if not isinstance(value, str) and len(text) > INLINE_JSON:
            text = json.dumps(value, indent=2, ensure_ascii=False)
        if "\n" in text:
            parts.append(Content.styled(f"{key}:", "bold"))
            parts += [Content("  " + line) for line in text.split("\n")]
        else:
            parts.append(Content.assemble((f"{key}: ", "bold"), text))
    return Content("\n").join(parts or [Content.styled("(no input)", MUTED)])


def _clean(value: Any) -> Any:
    """The tool input with control characters stripped from every string, for display only."""
    if isinstance(value, str):
        return strip_controls(value)
    if isinstance(value, dict):
        return {strip_controls(str(k)): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def permission_body(tool_name: str, tool_input: dict[str, Any], preview: str = "") -> Content:
    """What the call will do, as styled plain text: the tool's preview, else a view of its input."""
    preview, tool_input = strip_controls(preview), _clean(tool_input)
    if preview.strip():
        return styled_preview(preview)
    path = str(tool_input.get("file_path") or tool_input.get("path") or "")
    if isinstance(tool_input.get("old_string"), str) and isinstance(tool_input.get("new_string"), str):
        old, new = tool_input["old_string"], tool_input["new_string"]
        diff = "\n".join(difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{path}", f"b/{path}",
                                             lineterm=""))
        body = styled_preview(diff) if diff else Content("(no change)")
        if tool_input.get("replace_all"):
            body = Content("\n").join([body, Content.styled("(every occurrence)", MUTED)])
        return body
    if tool_name == "Write" and isinstance(tool_input.get("content"), str):
        content = tool_input["content"].splitlines()
        parts = [Content.styled(f"{path}  ({plural(len(content), 'line')})", "bold")]
        parts += [Content(line) for line in content[:WRITE_PREVIEW_LINES]]
        if len(content) > WRITE_PREVIEW_LINES:
            parts.append(Content.styled(f"… {plural(len(content) - WRITE_PREVIEW_LINES, 'more line')}", MUTED))
        return Content("\n").join(parts)
    if tool_name == "Bash" and isinstance(tool_input.get("command"), str):
        parts = [Content.assemble(("$ ", MUTED), (tool_input["command"], "bold"))]
        if isinstance(tool_input.get("description"), str):
            parts.append(Content.styled(tool_input["description"], MUTED))
        return Content("\n").join(parts)
    return input_lines(tool_input)


class PermissionScreen(ModalScreen[PermissionDecision]):
    """Returns ALLOW_ONCE, ALLOW_SESSION or DENY to the turn worker awaiting it."""

    CSS_PATH = Path(__file__).parent / "permission.tcss"
    BINDINGS = [
        Binding("y", "decide('allow_once')", "Allow once"),
        Binding("a", "decide('allow_session')", "Allow for session"),
        Binding("n,escape", "decide('deny')", "Deny"),
        Binding("down", "scroll_body('down')", "Scroll", show=False),
        Binding("up", "scroll_body('up')", "Scroll", show=False),
        Binding("pagedown", "scroll_body('page_down')", "Scroll", show=False),
        Binding("pageup", "scroll_body('page_up')", "Scroll", show=False),
    ]

    def __init__(self, tool_name: str, tool_input: dict[str, Any], summary: str = "", preview: str = "",
                 session_rule: str = "") -> None:
        super().__init__()
        self.tool_name = strip_controls(tool_name)
        self.tool_input = tool_input
        self.summary = strip_controls(summary)
        self.preview = preview
        self.session_rule = session_rule

    def compose(self) -> ComposeResult:
        with VerticalGroup(id="perm-dialog"):
            yield Static(Content.assemble("Allow ", (self.tool_name, "bold $text-warning"), "?"), id="perm-title")
            if self.summary and not self.preview.strip():  # the preview already names the file or command
                yield Static(self.summary, id="perm-summary", markup=False)
            with VerticalScroll(id="perm-body"):
                yield Static(permission_body(self.tool_name, self.tool_input, self.preview))
            with HorizontalGroup(id="perm-buttons"):
                yield Button(Content("y  Allow once"), id="allow_once", variant="success")
                yield Button(Content("a  Allow for this session"), id="allow_session", variant="primary")
                yield Button(Content("n  Deny"), id="deny", variant="error")
            if self.session_rule:
                note = Content.assemble(("a", "bold"), " adds the rule ", (self.session_rule, "bold"),
                                        " until you quit (/permissions lists rules)")
                yield Static(note, id="perm-rule")
        yield Footer()  # this modal's own keys, not the main screen's under it

    def on_mount(self) -> None:
        self.query_one("#allow_once", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id:
            self.action_decide(event.button.id)

    def action_decide(self, choice: str) -> None:
        self.dismiss(PermissionDecision(choice))

    def action_scroll_body(self, how: str) -> None:
        body = self.query_one("#perm-body", VerticalScroll)
        getattr(body, f"scroll_{how}")(animate=False)
