"""The permission prompt: a tool wants to change something; the user allows once, for the session, or denies.

Keyboard first (y / a / n, Esc denies), and it shows what will happen, not just the tool's name: a
unified diff for Edit, the path and a preview for Write, the command for Bash. All of it is plain
text, since file contents and commands are untrusted (pitfall P6).
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
from textual.widgets import Button, Static

from tui_agent.core.permissions import PermissionDecision

WRITE_PREVIEW_LINES = 20


def permission_body(tool_name: str, tool_input: dict[str, Any], preview: str = "") -> Content:
    """What the call will do, as styled plain text."""
    path = str(tool_input.get("file_path") or tool_input.get("path") or "")
    if isinstance(tool_input.get("old_string"), str) and isinstance(tool_input.get("new_string"), str):
        old, new = tool_input["old_string"], tool_input["new_string"]
        diff = difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{path}", f"b/{path}", lineterm="")
        lines = []
        for line in diff:
            style = ("$text-success" if line.startswith("+") else "$text-error" if line.startswith("-")
                     else "$text-accent" if line.startswith("@@") else "")
            if line.startswith(("+++", "---")):
                style = "bold"
            lines.append(Content.styled(line, style) if style else Content(line))
        if tool_input.get("replace_all"):
            lines.append(Content.styled("(every occurrence)", "$text-muted"))
        return Content("\n").join(lines or [Content("(no change)")])
    if isinstance(tool_input.get("content"), str):
        content = tool_input["content"].splitlines()
        shown = content[:WRITE_PREVIEW_LINES]
        parts = [Content.styled(f"{path}  ({len(content)} lines)", "bold")]
        parts += [Content(line) for line in shown]
        if len(content) > WRITE_PREVIEW_LINES:
            parts.append(Content.styled(f"… {len(content) - WRITE_PREVIEW_LINES} more lines", "$text-muted"))
        return Content("\n").join(parts)
    if isinstance(tool_input.get("command"), str):
        parts = [Content.assemble(("$ ", "$text-muted"), (tool_input["command"], "bold"))]
        if isinstance(tool_input.get("description"), str):
            parts.append(Content.styled(tool_input["description"], "$text-muted"))
        return Content("\n").join(parts)
    if preview:
        return Content(preview)
    return Content(json.dumps(tool_input, indent=2, ensure_ascii=False))


class PermissionScreen(ModalScreen[PermissionDecision]):
    """Returns ALLOW_ONCE, ALLOW_SESSION or DENY to the turn worker awaiting it."""

    CSS_PATH = Path(__file__).parent / "permission.tcss"
    BINDINGS = [
        Binding("y", "decide('allow_once')", "Allow once"),
        Binding("a", "decide('allow_session')", "Allow for session"),
        Binding("n,escape", "decide('deny')", "Deny"),
    ]

    def __init__(self, tool_name: str, tool_input: dict[str, Any], summary: str = "", preview: str = "") -> None:
        super().__init__()
        self.tool_name = tool_name
        self.tool_input = tool_input
        self.summary = summary
        self.preview = preview

    def compose(self) -> ComposeResult:
        with VerticalGroup(id="perm-dialog"):
            yield Static(Content.assemble(("Allow ", ""), (self.tool_name, "bold $text-warning"), "?"), id="perm-title")
            if self.summary:
                yield Static(self.summary, id="perm-summary", markup=False)
            with VerticalScroll(id="perm-body"):
                yield Static(permission_body(self.tool_name, self.tool_input, self.preview))
            with HorizontalGroup(id="perm-buttons"):
                yield Button(Content("y  Allow once"), id="allow_once", variant="success")
                yield Button(Content("a  Allow for this session"), id="allow_session", variant="primary")
                yield Button(Content("n  Deny"), id="deny", variant="error")

    def on_mount(self) -> None:
        self.query_one("#allow_once", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id:
            self.action_decide(event.button.id)

    def action_decide(self, choice: str) -> None:
        self.dismiss(PermissionDecision(choice))
