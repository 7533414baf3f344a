"""Keys typed where nothing takes text belong to the prompt, and a Tab never arms an action key.

A tool card, the budget rows and the events list take the focus on Tab, by a stray click of the
keyboard, as much as on purpose. Their one-letter keys (p pin, x exclude, e expand, Enter, Space) used
to act at once: "explain this" typed two Tabs away from the prompt expanded, excluded and pinned a row
and changed the next request, and a card ate the spaces and the Enter of a question. As in Claude Code
and Codex, text typed there goes to the prompt instead (the first key moves the focus and is inserted,
not dropped). The widget's own keys work only once the user entered it on purpose, which
`enter_on_purpose()` records, or with a modifier (alt+p...). For the budget rows that is the steering
mode, entered only by F4 (looking at the panel by `/context` or a click is not steering).
A letter that is no action, or leaving the widget, ends it. A view over the chat (a message, an event)
opened only to read hands typed text to the prompt too (`TypeThroughView`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar

from textual import events
from textual.message import Message


@dataclass
class TypedToPrompt(Message):
    """A key meant as text reached a widget that does not take text: the screen hands it to the prompt
    (`text` is inserted; `enter` presses Enter there, which sends the draft as typed)."""

    text: str
    enter: bool = False


def typed_text(event: events.Key) -> str | None:
    """What `event` would type into a text box: a printable character, a space or Enter ("\\n");
    None for navigation keys and anything with ctrl/alt (those stay shortcuts)."""
    if event.key == "enter":
        return "\n"
    if event.key == "space":
        return " "
    if "+" in event.key or not event.is_printable:  # alt+p, ctrl+x: shortcuts ("plus" is the + key)
        return None
    return event.character


class OnPurpose:
    """Mixin (first in the bases) for a focusable widget without text input: text goes to the prompt;
    `ARMED_KEYS` act only once the widget was entered on purpose (`armed`). A plain class, so it adds
    no CSS type name; Textual finds its handlers through the MRO like any base's."""

    ARMED_KEYS: ClassVar[frozenset[str]] = frozenset()
    armed: bool = False

    focus: Callable[..., object]
    refresh_bindings: Callable[[], None]
    post_message: Callable[[Message], bool]

    def enter_on_purpose(self) -> None:
        """Focus here and let the widget's own keys act (F4, Enter from the chat...)."""
        self.arm()
        self.focus()

    def arm(self) -> None:
        """Already focused: the user now means to use the widget's keys."""
        self._set_armed(True)

    def disarm(self) -> None:
        """The widget's keys are text again (Esc, a letter that is no action, leaving it)."""
        self._set_armed(False)

    def _set_armed(self, armed: bool) -> None:
        changed = armed != self.armed
        self.armed = armed
        self.refresh_bindings()
        if changed:
            self.armed_changed(armed)

    def armed_changed(self, armed: bool) -> None:
        """Hook: the mode changed (the budget rows show it on the panel's title)."""

    forwarding: bool = False

    def on_focus(self) -> None:
        self.forwarding = False

    def on_blur(self) -> None:
        self.disarm()

    def on_key(self, event: events.Key) -> None:
        text = typed_text(event)
        if event.key in self.ARMED_KEYS and self.armed and not self.forwarding:
            return  # the widget's own binding acts
        if text is None:
            return
        event.stop()
        event.prevent_default()
        forward(self, text)


class TypeThroughView:
    """Mixin (first in the bases) for a modal view opened to read (a message, an event): a key that types
    text closes the view and goes to the prompt, whole and in order, as if the view had not been there.
    `steering`: opened from the steering mode, so the view's own keys act instead (text still closes it).
    `OWN_KEYS`: the keys that then act."""

    OWN_KEYS: ClassVar[frozenset[str]] = frozenset()
    steering: bool = False
    _typed_away: bool = False

    app: object
    dismiss: Callable[..., object]

    def on_key(self, event: events.Key) -> None:
        text = typed_text(event)
        if text is None or text == "\n" or (self.steering and event.key in self.OWN_KEYS and not self._typed_away):
            return
        event.stop()
        event.prevent_default()
        below = self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else None  # type: ignore[attr-defined]
        if not self._typed_away:
            self._typed_away = True
            self.dismiss()
        type_into = getattr(below, "type_into_prompt", None)
        if type_into is not None:
            type_into(text)


def forward(widget: object, text: str) -> None:
    """Hand `text` ("\n": Enter) to the prompt. Keys typed fast all reach the widget before the focus has
    moved (tmux delivers "explain this⏎" in one read); from the first one on, `forwarding` sends every
    key after it, in order, the widget's own keys too: "ap" must not pin."""
    widget.forwarding = True  # type: ignore[attr-defined]
    to_prompt(widget.screen, text)  # type: ignore[attr-defined]


def to_prompt(screen: object, text: str) -> None:
    """Post `text` to the screen for its prompt, counted in the screen's `typed_pending` until the screen
    takes it (`taken_by_prompt`): while any is on its way, the prompt sends the keys it gets itself the same
    way (`typed_first`), so they land after it. Keys reaching the prompt directly once the focus had moved
    overtook the ones still on their way: "explain the pin rule" arrived as "explaie pin rulen th", and an
    Enter sent the prompt before its words were in it."""
    screen.typed_pending = getattr(screen, "typed_pending", 0) + 1  # type: ignore[attr-defined]
    screen.post_message(TypedToPrompt("" if text == "\n" else text, enter=text == "\n"))  # type: ignore[attr-defined]


def taken_by_prompt(screen: object) -> None:
    """The screen took one `TypedToPrompt` (see `to_prompt`)."""
    screen.typed_pending = max(getattr(screen, "typed_pending", 0) - 1, 0)  # type: ignore[attr-defined]


def typed_first(screen: object, event: events.Key) -> bool:
    """A key the prompt got while typed text is still on its way to it: sent after that text (True), or
    False when nothing is on its way (or the key types nothing: it acts at once)."""
    text = typed_text(event)
    if not getattr(screen, "typed_pending", 0) or text is None:
        return False
    event.stop()
    event.prevent_default()
    to_prompt(screen, text)
    return True


__all__ = ["OnPurpose", "TypeThroughView", "TypedToPrompt", "forward", "taken_by_prompt", "to_prompt", "typed_first",
           "typed_text"]
