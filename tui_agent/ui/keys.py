"""The keys of the main screen, described once: its bindings, and the help that `/help`, the README and
the manual show for them.

Why one module: the README said F2 shows or hides the budget panel while F2 entered the steering mode
("explain" typed after it once became "lain", the e, x and p pinned and excluded rows). Each key a
user presses on purpose is a `Binding` here whose `tooltip` is its help; the prompt's own keys (Enter,
↑/↓, Tab), handled in `PromptArea._on_key`, are described beside them. `key_rows()` is the one list:
`/help` prints it, and a test holds the README's and the manual's key tables to it.

F2 means one thing everywhere: the panel is shown or hidden and the keyboard stays where it is. The
steering mode, whose plain letters pin, exclude and expand rows, is its own key (F4), said on the panel's
title while it lasts. An approval that waits (`/approve`) is answered by keys no question can type
(Alt+Y, Alt+L, F4) or by `/approve yes|edit|later`: letters typed meanwhile go to the prompt.
"""

from __future__ import annotations

from textual.app import App
from textual.binding import Binding

PROMPT_KEYS: list[tuple[str, str]] = [
    ("Enter", "send (Shift+Enter or Ctrl+J: new line); while a turn runs, the prompt is queued (`»` above the "
              "prompt) and sent when the turn ends"),
    ("↑ / ↓", "prompt history (↑ on an empty prompt first takes a queued prompt back to edit)"),
    ("Tab", "complete a slash command; otherwise move between the prompt, the chat and the panel (text typed "
            "there still goes to the prompt)"),
]

APPROVE_KEY = "alt+y"
LATER_KEY = "alt+l"
STEER_KEY = "f4"

SCREEN_BINDINGS = [
    Binding("escape", "close_hints", "Close hints"),  # first: while the hints show, Esc only closes them
    Binding("escape", "cancel_turn", "Cancel turn",
            tooltip="close the completion hints; else cancel the running turn (the history stays valid; the chat "
                    "says so; queued prompts go back into the prompt, unsent); in the panel: back to the prompt"),
    Binding("f2", "toggle_panel", "Budget panel",
            tooltip="show or hide the budget panel (under 100 columns it folds away, and F2 opens it over the "
                    "chat); the keyboard stays in the prompt"),
    Binding(STEER_KEY, "steer", "Steer",
            tooltip="the steering mode: the keyboard in the panel's rows, where ↑/↓ move, Enter opens a row, "
                    "p pins, x excludes, e expands, u undoes, v lists the events, c counts exactly; any other "
                    "letter, Esc or F4 leaves it for the prompt (in rows reached by Tab or /context, Alt+P, Alt+X, "
                    "Alt+E act without it)"),
    Binding(APPROVE_KEY, "answer_approval('yes')", "Approve", priority=True,  # before the prompt types a "y"
            tooltip="a compaction waits for your approval (`/approve`): compact now (`/approve yes`)"),
    Binding(LATER_KEY, "answer_approval('later')", "Later", priority=True,
            tooltip="a compaction waits for your approval: send this call whole, ask again at the next "
                    "(`/approve later`; F4 or `/approve edit` pins and excludes first)"),
    Binding("f3", "focus_prompt", "Prompt", show=False),
    # Tab moves the focus before the next key is handed out: as a plain binding it acted only once the
    # focused prompt had processed it, and letters typed right after it (tmux delivers them in one read)
    # still reached the prompt, then the Enter reached the chat and opened its cards instead of sending.
    Binding("tab", "move_focus(1)", "Next", show=False, priority=True),
    Binding("shift+tab", "move_focus(-1)", "Previous", show=False, priority=True),
]

APP_BINDINGS = [
    Binding("ctrl+c", "ctrl_c", "Quit (twice)", priority=True, show=False,
            tooltip="clear a non-empty draft; twice: quit"),
]


def key_label(key: str) -> str:
    """"f2" → "F2", "alt+y" → "Alt+Y", "escape" → "Esc"."""
    names = {"escape": "Esc", "alt": "Alt", "ctrl": "Ctrl", "shift": "Shift"}
    return "+".join(names.get(part, part.upper() if len(part) <= 3 else part.capitalize()) for part in key.split("+"))


# Textual binds the command palette itself (`App.COMMAND_PALETTE_BINDING`): the help names the key it binds.
PALETTE_KEY = (key_label(App.COMMAND_PALETTE_BINDING), "command palette")


def key_rows() -> list[tuple[str, str]]:
    """(key, what it does) for every key the help names, in the order a new user meets them."""
    described = [(key_label(b.key), b.tooltip) for b in [*SCREEN_BINDINGS, *APP_BINDINGS] if b.tooltip]
    palette = [PALETTE_KEY]
    return PROMPT_KEYS + described[:-1] + palette + described[-1:]


def keys_markdown() -> str:
    """The key table of the README and the manual, exactly (a test compares them)."""
    return "\n".join(["| key | action |", "| --- | --- |", *(f"| {k} | {v} |" for k, v in key_rows())])


__all__ = ["APPROVE_KEY", "APP_BINDINGS", "LATER_KEY", "PROMPT_KEYS", "SCREEN_BINDINGS", "STEER_KEY", "key_label",
           "key_rows", "keys_markdown"]
