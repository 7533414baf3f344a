"""The request card: the exact request of the call shown, as the proxy recorded it (`tui-agent proxy`).

The replay card and the panel show the history the agent has sent so far; this card shows what one call
actually carried: its system prompt block by block, its tools, its messages (the last `MESSAGES_SHOWN`), and
where its cache breakpoints are, each marked where it sits; then the side calls so far (titles, quota checks,
subagents), which are not steps. `r` opens the whole request (`RequestView` modal). Drawn from
`core.recordings.proxy_index` only; untrusted text never becomes markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

from tui_agent.core.sanitize import strip_controls
from tui_agent.ui.themes import MUTED

if TYPE_CHECKING:
    from tui_agent.core.recordings.proxy_index import Part, RequestView
    from tui_agent.core.recordings.side_calls import SideCall

MESSAGES_SHOWN = 8
TOOLS_SHOWN = 6
SIDE_SHOWN = 4


def _row(part: Part, width: int = 16, summary: int = 44) -> Content:
    """One line per part (cut to fit the card's column): label, size, what it holds, its breakpoint."""
    text = strip_controls(part.summary)
    text = text if len(text) <= summary else text[: summary - 1] + "…"
    mark = (f" ▸cache {part.cache}", "bold $text-warning") if part.cache else ("", "")
    return Content.assemble(("  " + part.label[:width].ljust(width), MUTED), f" {part.chars:>7,} ch  ", text, mark)


def _section(title: str, parts: tuple[Part, ...], shown: int, from_end: bool) -> list[Content]:
    total = sum(p.chars for p in parts)
    marks = sum(1 for p in parts if p.cache)
    head = Content.assemble((title.ljust(10), "bold"), f"{len(parts)} · {total:,} chars",
                            (f" · {marks} breakpoint{'s' * (marks != 1)}", "$text-warning") if marks else "")
    if len(parts) <= shown:
        return [head] + [_row(p) for p in parts]
    kept = parts[-shown:] if from_end else parts[:shown]
    # a breakpoint outside what is listed is still listed: it is what this card is for
    extra = [p for p in (parts[:-shown] if from_end else parts[shown:]) if p.cache]
    more = Content.styled(f"  … {len(parts) - shown} more" + (" (earlier)" if from_end else ""), MUTED)
    rows = [_row(p) for p in (extra + list(kept) if from_end else list(kept) + extra)]
    return [head, more] + rows if from_end else [head] + rows + [more]


def request_content(view: RequestView | None, side: list[SideCall], step: int) -> Content:
    if view is None:
        return Content.styled(f"request   call {step + 1}: its recorded request is not readable", MUTED)
    lines = [Content.assemble(("request   ", "bold"), f"proxy call {view.call} · {view.api} · {view.model} · "
                              f"{view.chars:,} chars sent", ("  (r: the whole request)", MUTED))]
    lines += _section("system", view.system, 4, False)
    lines += _section("tools", view.tools, TOOLS_SHOWN, False)
    lines += _section("messages", view.messages, MESSAGES_SHOWN, True)
    if view.breakpoints:
        lines.append(Content.assemble(("cache     ", "bold $text-warning"), f"{len(view.breakpoints)} breakpoints: ",
                                      ", ".join(view.breakpoints)))
    else:
        lines.append(Content.assemble(("cache     ", "bold"), view.cache_note or "no breakpoint in this request"))
    if side:
        lines.append(Content.assemble(("side      ", "bold"), f"{len(side)} side call{'s' * (len(side) != 1)} "
                                      "so far (not steps)"))
        for call in side[-SIDE_SHOWN:]:
            tokens = sum(call.usage.get(k, 0) for k in ("input_tokens", "cache_read_input_tokens",
                                                          "cache_creation_input_tokens"))
            lines.append(Content.styled(f"  call {call.call} · {strip_controls(str(call.model))} · {call.why} · "
                                        f"{tokens:,} tokens in", MUTED))
    return Content("\n").join(lines)


class RequestCard(Static):
    DEFAULT_CSS = """
    RequestCard { padding: 0 1; height: auto; border-top: solid $panel-lighten-2; }
    """

    def show(self, view: RequestView | None, side: list[SideCall], step: int) -> None:
        self.update(request_content(view, side, step))
