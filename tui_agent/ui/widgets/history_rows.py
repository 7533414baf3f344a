"""The budget panel's row list: one line per history message, drawn with the Line API.

A conversation can reach thousands of messages; a widget per row would make every append O(rows)
(pitfall P17). Here only visible lines are rendered, and each rendered line is cached as a `Strip`
keyed by everything that can change its look (state, cuts, cursor), so a model call re-renders only
the rows whose state actually changed and stays cheap at 10,000 rows. Textual's `LRUCache` keeps them
(as its `Log` keeps its lines): bounded, the least recently drawn go first, not every row at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui_agent.core.sanitize import strip_controls
from tui_agent.ui.budget_model import HistoryIndex, OutboundView, Row, fmt_k
from tui_agent.ui.widgets.type_through import OnPurpose

BAR_CELLS = 4
BAR_GLYPHS = " ▏▎▍▌▋▊▉█"
TOKENS_CELLS = 5  # fmt_k is at most five cells (12.4k, 124k, 1.2M)
# "tool_result Read 12.3k" / "tool_result Read +1 12.3k error": the size a ✂ mark restates, and the tag it keeps.
_RESULT_SIZE = re.compile(r"^(?P<head>tool_result .+?) (?P<size>\S+)(?P<error> error)?$")
MIN_SCALE = 4096  # a bar's full width stands for at least this many tokens: 6 tokens draw no half-cell
# The plan's operation → (mark, component style); a row in the cached prefix also gets "┃" on the left.
MARKS = {
    "kept": ("▌", "bar"),
    "cut": ("✂", "truncated"),
    "masked": ("▒", "masked"),
    "edited": ("✎", "truncated"),
    "dropped": ("·", ""),
    "summarised": ("Σ", "summarised"),
    "pinned": ("●", "pinned"),
    "excluded": ("⊘", "excluded"), "new": (" ", ""),
}
ALT_ACTIONS = {"alt+p": "pin", "alt+x": "exclude", "alt+e": "expand", "alt+v": "events"}
SENT_KINDS = frozenset({"kept", "cut", "masked", "edited", "pinned"})
NOT_SENT_KINDS = frozenset({"dropped", "summarised", "excluded"})
EXTRA = {"masked": (" ▒ placeholder", "masked"), "pinned": (" ● pinned", "pinned"),
         "excluded": (" ⊘ excluded", "excluded"), "summarised": (" Σ in summary", "summarised")}


class HistoryRows(OnPurpose, ScrollView, can_focus=True):
    """Rows of the full history; outbound rows highlighted, dropped rows greyed, cuts marked ✂.

    Reached by Tab, `/context` or a click, the rows only move (↑/↓): text goes to the prompt, and
    p / x / e / u / v / Enter act only in the steering mode, entered by F4 (the panel's title says so), or
    at once with alt (alt+p...). Esc, or a letter that is no action, leaves it. The footer shows
    whichever keys act now."""

    ARMED_KEYS = frozenset({"enter", "p", "x", "e", "u", "v", "c"})  # c: the panel's exact count

    COMPONENT_CLASSES = {
        "history-rows--sent",
        "history-rows--dropped",
        "history-rows--truncated",
        "history-rows--protected",
        "history-rows--cursor",
        "history-rows--bar",
        "history-rows--muted",
        "history-rows--cached",
        "history-rows--masked",
        "history-rows--pinned",
        "history-rows--excluded",
        "history-rows--summarised",
    }
    DEFAULT_CSS = """
    HistoryRows { height: 1fr; scrollbar-size-vertical: 1; overflow-x: hidden; background: $surface; }
    HistoryRows > .history-rows--sent { background: $budget-outbound; }
    HistoryRows > .history-rows--dropped { color: $budget-dropped; text-style: italic; }
    HistoryRows > .history-rows--truncated { color: $budget-truncated; text-style: bold; }
    HistoryRows > .history-rows--protected { color: $budget-protected; }
    HistoryRows > .history-rows--cursor { background: $budget-cursor; text-style: bold; }
    HistoryRows > .history-rows--bar { color: $budget-bar; }
    HistoryRows > .history-rows--muted { color: $foreground 78%; }
    HistoryRows > .history-rows--cached { color: $text-accent; text-style: bold; }
    HistoryRows > .history-rows--masked { color: $text-warning; text-style: bold; }
    HistoryRows > .history-rows--pinned { color: $text-success; text-style: bold; }
    HistoryRows > .history-rows--excluded { color: $text-error; text-style: bold; }
    HistoryRows > .history-rows--summarised { color: $text-secondary; text-style: bold; }
    """
    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "cursor(-10)", show=False),
        Binding("pagedown", "cursor(10)", show=False),
        Binding("home", "first", show=False),
        Binding("end", "last", show=False),
        Binding("enter", "open", "Show message"),
        Binding("p", "act('pin')", "Pin"),
        Binding("x", "act('exclude')", "Exclude"),
        Binding("e", "act('expand')", "Expand"),
        Binding("u", "undo", "Undo last"),
        Binding("v", "events", "Events"),
        # Before the steering mode: the same actions with alt, and F4 to steer with the plain keys.
        Binding("alt+p", "act('pin', 'alt')", "Pin"),
        Binding("alt+x", "act('exclude', 'alt')", "Exclude"),
        Binding("alt+e", "act('expand', 'alt')", "Expand"),
        Binding("alt+v", "events('alt')", "Events"),
        Binding("f4", "arm", "Steer (pin/exclude/expand)"),
    ]

    cursor: reactive[int | None] = reactive(None, repaint=False)
    read_only = False  # replay: nothing is sent, so p / x / e are not offered

    @dataclass
    class Opened(Message):
        """A row was chosen: show message `index` in full beside its outbound form."""

        index: int

    @dataclass
    class Acted(Message):
        """`p`, `x`, `e` on a row: pin / exclude / expand message `index` (toggled) in the next request;
        `u`: undo the last of them (action "undo")."""

        index: int
        action: str

    @dataclass
    class SteeringChanged(Message):
        """The steering mode began or ended (the panel's title says which keys act)."""

        steering: bool

    @dataclass
    class Moved(Message):
        """The cursor moved to row `index`: the panel shows the plan's reason for it."""

        index: int | None

    def __init__(self, index: HistoryIndex, **kwargs) -> None:
        super().__init__(**kwargs)
        self.index = index
        self.view: OutboundView | None = None
        self._cache: LRUCache[tuple, Strip] = LRUCache(4000)  # many screens of rows
        self._cache_width = -1
        self._scale = 1
        self._following = True  # stick to the newest rows until the user scrolls up or moves the cursor

    # -- updates ---------------------------------------------------------------------------------
    def rows_changed(self, reset: bool = False) -> None:
        """New rows were appended to the index (or it was reset): grow, and follow the end."""
        if reset:
            self._cache.clear()
            self.cursor = None
            self._following = True
        scale = _scale_for(self.index.max_tokens)
        if scale != self._scale:
            self._scale = scale
            self._cache.clear()
        count = len(self.index.rows)
        self.virtual_size = Size(0, count)
        if self._following:
            self.scroll_to(y=max(count - self.scrollable_content_region.height, 0), animate=False, immediate=True)
            self.call_after_refresh(self._stick_to_end)  # the panel's other lines may grow in the same update
        self.refresh()

    def on_resize(self) -> None:
        """A line above grew (the compaction note wrapped, an exact count appeared): the list got shorter,
        and the newest row must not slide out of sight beneath it."""
        if self._following:
            self.call_after_refresh(self._stick_to_end)

    def _stick_to_end(self) -> None:
        if self._following:
            self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._following = new >= self.max_scroll_y - 1

    def show_view(self, view: OutboundView | None) -> None:
        """A new outbound view (a model call, or the next-call preview)."""
        self.view = view
        self.refresh()

    def notify_style_update(self) -> None:
        self._cache.clear()  # a theme switch changes every component style
        super().notify_style_update()

    # -- drawing ---------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        i = y + self.scroll_offset.y
        rows = self.index.rows
        if i >= len(rows) or width <= 0:
            return Strip.blank(width, self.rich_style)
        if width != self._cache_width:
            self._cache.clear()
            self._cache_width = width
        view = self.view
        kind = view.kind(i) if view is not None else "new"
        cuts = view.truncated.get(i, ()) if view is not None else ()
        cached = view is not None and view.in_cache(i)
        protected = view is not None and kind == "kept" and i in view.protected
        sent = view.sent_tokens(i, rows[i].tokens) if view is not None else 0
        key = (i, kind, cuts, cached, protected, sent, self.cursor == i)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._draw(rows[i], width, kind, cuts, cached, protected, sent, self.cursor == i)
            self._cache.set(key, strip)
        return strip

    def _style(self, name: str):
        return self.get_component_rich_style(f"history-rows--{name}", partial=True)

    def _draw(self, row: Row, width: int, kind: str, cuts: tuple, cached: bool, protected: bool, sent: int,
              cursor: bool) -> Strip:
        base = self.rich_style
        is_sent = kind in SENT_KINDS
        if is_sent:
            base = base + self._style("sent")
        if cursor:
            base = base + self._style("cursor")
        text = base + self._style("dropped") if kind in NOT_SENT_KINDS else base
        muted = text if kind in NOT_SENT_KINDS else text + self._style("muted")
        mark, mark_name = MARKS.get(kind, (" ", ""))
        if protected:
            mark, mark_name = "◆", "protected"
        mark_style = base + self._style(mark_name) if mark_name else text
        cache_style = base + self._style("cached")
        digits = number_cells(len(self.index.rows))
        head = f"{row.index:>{digits}} {row.role:<4} "
        tail_width = TOKENS_CELLS * 2 + 2 + BAR_CELLS
        mem = fmt_k(row.tokens)
        # a five-cell mem figure fills its column: keep a space before it ("✂ 75.4k → 2.0k 15.5k")
        what_width = max(width - 2 - len(head) - tail_width - (len(mem) >= TOKENS_CELLS), 4)
        what = strip_controls(row.what)  # previews quote files and model text
        extra, extra_name = "", "truncated"
        if cuts and kind == "cut":
            original = sum(c.original_chars for c in cuts)
            kept = sum(c.kept_chars for c in cuts)
            if row.tool_label:
                what = _without_size(what)  # the ✂ mark gives the size; an error tag stays
            extra = f" ✂ {fmt_k(original)} → {fmt_k(kept)}"
        elif kind in EXTRA:
            extra, extra_name = EXTRA[kind]
        what, extra = _fit(what, extra, what_width)
        pad = " " * max(what_width - cell_len(what) - cell_len(extra), 0)  # cells: an emoji is two
        sent_text = fmt_k(sent) if is_sent else "–"
        tokens = f"{' ' * (len(mem) >= TOKENS_CELLS)}{mem:>{TOKENS_CELLS}} {sent_text:>{TOKENS_CELLS}} "
        bar_style = text if not is_sent else base + self._style("bar")
        segments = [
            Segment("┃" if cached else " ", cache_style),
            Segment(mark, mark_style),
            Segment(head, muted),
            Segment(what, text),
            Segment(extra, text + self._style(extra_name)),
            Segment(pad, text),
            Segment(tokens, muted),
            Segment(_bar(row.tokens, self._scale), bar_style),
        ]
        return Strip(segments).crop_extend(0, width, base)

    # -- interaction -----------------------------------------------------------------------------
    def watch_cursor(self, old: int | None, new: int | None) -> None:
        for line in (old, new):
            if line is not None:
                self.refresh_lines(line)
        if new is not None:
            self.scroll_to_region_line(new)
        self.post_message(self.Moved(new))

    def on_focus(self) -> None:
        """Focused, the panel always shows the row its keys act on: the newest one, to begin with."""
        if self.cursor is None and self.index.rows:
            self.cursor = len(self.index.rows) - 1

    def scroll_to_region_line(self, line: int) -> None:
        top = self.scroll_offset.y
        height = self.scrollable_content_region.height
        if line < top:
            self.scroll_to(y=line, animate=False)
        elif line >= top + height:
            self.scroll_to(y=line - height + 1, animate=False)

    def action_cursor(self, delta: int) -> None:
        count = len(self.index.rows)
        if not count:
            return
        start = self.cursor if self.cursor is not None else count
        self.cursor = min(max(start + delta, 0), count - 1)

    def action_first(self) -> None:
        self.action_cursor(-len(self.index.rows))

    def action_last(self) -> None:
        self.action_cursor(len(self.index.rows))

    class EventsWanted(Message):
        """`v`: the keyboard goes to the events list (it is off the Tab cycle, like the tool cards)."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Plain keys in the steering mode, alt+key and F4 before: the footer lists the keys that act now."""
        if action in ("act", "undo") and self.read_only:
            return False
        if action == "undo":
            return self.armed
        if action in ("act", "events", "open"):
            return ("alt" in parameters) != self.armed
        if action == "arm":
            return not self.armed  # armed, F4 falls through to the screen's (leave for the prompt)
        return True

    def on_key(self, event: events.Key) -> None:
        """(Textual then calls `OnPurpose.on_key` too, unless this one handled the key.)"""
        if self.armed and event.key in ALT_ACTIONS:
            event.stop()
            event.prevent_default()
            action = ALT_ACTIONS[event.key]
            self.action_events() if action == "events" else self.action_act(action)

    def action_arm(self) -> None:
        self.arm()  # F4: the steering mode

    def armed_changed(self, armed: bool) -> None:
        self.post_message(self.SteeringChanged(armed))

    def action_undo(self) -> None:
        self.post_message(self.Acted(-1, "undo"))

    def action_events(self, how: str = "") -> None:
        self.post_message(self.EventsWanted())

    def action_act(self, action: str, how: str = "") -> None:
        self.arm()  # alt+key is on purpose: the plain keys act from now on
        if self.cursor is not None:
            self.post_message(self.Acted(self.cursor, action))

    def action_open(self) -> None:
        if self.cursor is not None:
            self.post_message(self.Opened(self.cursor))

    def on_click(self, event: events.Click) -> None:
        """A click reads a row (its message opens); it is not steering: typed text still goes to the prompt."""
        line = event.y + self.scroll_offset.y
        if 0 <= line < len(self.index.rows):
            self.cursor = line
            self.post_message(self.Opened(line))


def number_cells(rows: int) -> int:
    """Cells of the row-number column: three, or one more than the longest number, so a three-digit
    (or longer) number keeps a space from the mark before it ("· 847", never "·847")."""
    longest = len(str(max(rows - 1, 0)))
    return 3 if longest < 3 else longest + 1


def _scale_for(max_tokens: int) -> int:
    """Bars scale to the next power of two above the largest row, so the scale (and cache) rarely moves;
    never below `MIN_SCALE`, so a tiny session's 6-token rows draw nothing rather than a half-cell."""
    scale = MIN_SCALE
    while scale < max_tokens:
        scale *= 2
    return scale


def _bar(tokens: int, scale: int) -> str:
    eighths = min(round(tokens * BAR_CELLS * 8 / scale), BAR_CELLS * 8)
    full, rest = divmod(eighths, 8)
    return ("█" * full + (BAR_GLYPHS[rest] if rest else "")).ljust(BAR_CELLS)


def _without_size(what: str) -> str:
    """"tool_result Read 12.3k error" → "tool_result Read error": the ✂ mark restates the size."""
    match = _RESULT_SIZE.match(what)
    return match.group("head") + (match.group("error") or "") if match else what


def _fit(what: str, cut: str, width: int) -> tuple[str, str]:
    """Shorten the description first, then the ✂ mark, so both fit `width` terminal cells (not
    characters: an emoji or a CJK character takes two, and would push the token column out)."""
    if cell_len(what) + cell_len(cut) <= width:
        return what, cut
    room = width - cell_len(cut)
    if room >= 6:
        return _crop(what, room - 1) + "…", cut
    cut = _crop(cut, max(width - 2, 0))
    left = width - cell_len(cut)
    return (_crop(what, left - 1) + "…" if left > 0 else ""), cut


def _crop(text: str, cells: int) -> str:
    """The first `cells` cells of `text` (a wide character cut in half becomes a space)."""
    return set_cell_size(text, max(cells, 0)) if cell_len(text) > cells else text


__all__ = ["HistoryRows"]
