"""Every bundled theme keeps the budget panel's text readable: WCAG AA, 4.5:1, measured on the screen.

The contrast is computed from the colours Textual actually paints (the compositor's strips), not from
the TOML values alone: a component style such as `$text-muted` is "auto 60%", resolved against a
background that is not the row's, and that is how agent-light ended up with white row numbers on pale
blue (≈1.2:1). Every text cell in the panel counts: row numbers, roles, token figures, dropped (grey)
rows, ✂ marks, the cursor row, the meter, the legend, the cost and the exact count. Bars, the sparkline
and borders are graphics, not text, and are left out.
"""

from __future__ import annotations

import pytest
from rich.color import Color as RichColor

from tui_agent.core.compaction import CompactOptions
from tui_agent.core.providers.scripted import text_reply
from tui_agent.ui.widgets.budget_panel import BudgetPanel

from .support import demo_session, make_app, make_repo, scripted_session, send

THEMES = ["agent-dark", "agent-light", "agent-high-contrast"]
AA = 4.5
GRAPHICS = set(" ▁▂▃▄▅▆▇█▏▎▍▌▋▊▉░▒▓│■▔▁─━")  # bars, sparkline, meter segments, borders


def luminance(rgb: tuple[int, int, int]) -> float:
    """WCAG 2.x relative luminance of an sRGB colour."""
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_contrast_formula_matches_wcag_examples() -> None:
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast((0x76, 0x76, 0x76), (255, 255, 255)) == pytest.approx(4.54, abs=0.01)
    assert contrast((255, 255, 255), (0xdd, 0xe7, 0xf7)) < 1.3  # the trial's white-on-pale-blue rows


def panel_cells(app) -> list[tuple[str, float, str, str]]:
    """(text, contrast, fg, bg) for every text segment the compositor paints inside the panel."""
    panel = app.screen.query_one(BudgetPanel)
    strips = app.screen._compositor.render_strips()
    region = panel.region
    found = []
    for y in range(region.y, region.bottom):
        for segment in strips[y].crop(region.x, region.right):
            text, style = segment.text, segment.style
            if not text.strip() or all(ch in GRAPHICS for ch in text):
                continue
            assert style is not None and style.color is not None and style.bgcolor is not None, repr(text)
            fg, bg = style.color, style.bgcolor
            if style.reverse:
                fg, bg = bg, fg
            fg_rgb, bg_rgb = RichColor.get_truecolor(fg), RichColor.get_truecolor(bg)
            found.append((text.strip(), contrast(tuple(fg_rgb), tuple(bg_rgb)), fg_rgb.hex, bg_rgb.hex))
    return found


def failures(cells: list[tuple[str, float, str, str]]) -> list[str]:
    worst: dict[tuple[str, str], tuple[float, str]] = {}
    for text, ratio, fg, bg in cells:
        if ratio < AA and ratio < worst.get((fg, bg), (AA, ""))[0]:
            worst[(fg, bg)] = (ratio, text)
    return [f"{ratio:.2f}:1 {fg} on {bg}: {text[:30]!r}" for (fg, bg), (ratio, text) in sorted(worst.items())]


@pytest.mark.parametrize("theme", THEMES)
async def test_panel_text_reaches_aa_with_cost_usage_and_exact_count(tmp_path, theme: str) -> None:
    from tests.ui.test_panel_usage import MODEL, USAGE, CountingProvider

    provider = CountingProvider(model=MODEL, usage=USAGE, reports_usage=True)
    app = make_app(scripted_session(make_repo(tmp_path), [text_reply("Hello."), text_reply("Sure.")],
                                    provider=provider))
    app.theme = theme
    async with app.run_test(size=(120, 36)) as pilot:
        for line in ("hello", "tell me more", "/context"):
            await send(pilot, line)
        cells = panel_cells(app)
        texts = " ".join(text for text, *_ in cells)
        assert "exact" in texts and "cached" in texts and "$" in texts
        assert not failures(cells), f"{theme}: " + "; ".join(failures(cells))


def screen_cells(app, region=None) -> list[tuple[str, float, str, str]]:
    """(text, contrast, fg, bg) for every text segment painted in `region` (default: the whole screen,
    header, chat, tool cards, prompt and footer included)."""
    strips = app.screen._compositor.render_strips()
    region = region or app.screen.region
    found = []
    for y in range(region.y, region.bottom):
        for segment in strips[y].crop(region.x, region.right):
            text, style = segment.text, segment.style
            if not text.strip() or all(ch in GRAPHICS for ch in text) or style is None:
                continue
            if style.color is None or style.bgcolor is None:
                continue
            fg, bg = (style.bgcolor, style.color) if style.reverse else (style.color, style.bgcolor)
            fg_rgb, bg_rgb = RichColor.get_truecolor(fg), RichColor.get_truecolor(bg)
            found.append((text.strip(), contrast(tuple(fg_rgb), tuple(bg_rgb)), fg_rgb.hex, bg_rgb.hex))
    return found


@pytest.mark.parametrize("theme", THEMES)
async def test_every_text_cell_of_the_screen_the_panel_rows_and_a_modal_reach_aa(tmp_path, theme: str) -> None:
    """The whole main screen (chat, cards, prompt, footer with the panel's keys), the panel with dropped and
    cut rows and the cursor on each of them, and the message view: one session per theme (each of these
    used to build its own two-prompt demo session)."""
    from tui_agent.ui.screens.message_view import MessageScreen
    from tui_agent.ui.widgets.history_rows import HistoryRows
    from tui_agent.ui.widgets.prompt_area import PromptArea

    app = make_app(demo_session(make_repo(tmp_path), compact=CompactOptions(max_messages=16)))
    app.theme = theme
    async with app.run_test(size=(140, 44)) as pilot:
        for prompt in ("what does the handler do?", "explain the models"):
            await send(pilot, prompt)
        cells = screen_cells(app)  # the prompt focused, its placeholder shown
        from tui_agent.ui.widgets.queued_prompts import QueuedPrompts

        queued = app.screen.query_one(QueuedPrompts)
        queued.add("a prompt typed while a turn ran")  # the queued strip above the prompt
        await pilot.pause()
        cells += screen_cells(app, queued.region)
        queued.take_all()
        await pilot.pause()
        app.screen.query_one(PromptArea).focus()
        await pilot.press("tab", "tab")  # the rows by Tab: the footer lists the alt keys
        cells += screen_cells(app)
        await pilot.press("f4")  # entered: the footer lists the plain keys
        cells += screen_cells(app)
        rows = app.screen.query_one(HistoryRows)
        view = rows.view
        assert view is not None and view.first_kept > 0 and view.truncated  # dropped and ✂ rows exist
        panel_only = panel_cells(app)
        for target in (max(view.truncated), view.first_kept - 1):  # the cursor on a ✂ row, then a dropped row
            rows.cursor = target
            await pilot.pause()
            panel_only += panel_cells(app)
        assert len(panel_only) > 100
        assert not failures(panel_only), f"{theme} (panel): " + "; ".join(failures(panel_only))
        rows.cursor = max(rows.view.truncated)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MessageScreen)
        frame = app.screen.query_one("#frame").region
        footer = app.screen.query_one("Footer").region
        cells += screen_cells(app, frame) + screen_cells(app, footer)
        texts = " ".join(text for text, *_ in cells)
        assert "Pin" in texts and "Budget panel" in texts and "Ask about" in texts and "queued:" in texts
        assert not failures(cells), f"{theme}: " + "; ".join(failures(cells))


def eight_bit(hex_colour: str) -> tuple[int, int, int]:
    """What a 256-colour terminal shows for a truecolor cell (Rich's downgrade, as Textual's output)."""
    from rich.color import ColorSystem

    return tuple(RichColor.parse(hex_colour).downgrade(ColorSystem.EIGHT_BIT).get_truecolor())


@pytest.mark.parametrize("theme", THEMES)
async def test_in_256_colours_the_panel_and_prompt_are_not_navy_and_stay_readable(tmp_path, theme: str) -> None:
    """tmux without RGB (COLORTERM unset): agent-dark's panel and prompt came out saturated navy #00005f."""
    from tui_agent.ui.widgets.prompt_area import PromptArea

    app = make_app(demo_session(make_repo(tmp_path), compact=CompactOptions(max_messages=16)))
    app.theme = theme
    async with app.run_test(size=(140, 44)) as pilot:
        await send(pilot, "what does the handler do?")
        await pilot.press("f4")  # the rows entered: the cursor row drawn too
        panel, prompt = app.screen.query_one(BudgetPanel), app.screen.query_one(PromptArea)
        cells = screen_cells(app, panel.region) + screen_cells(app, prompt.region)
        assert len(cells) > 100
        navy = sorted({bg for *_, bg in cells if (lambda r, g, b: r == g == 0 and b > 0)(*eight_bit(bg))})
        assert not navy, f"{theme}: backgrounds shown as navy in 256 colours: {navy}"
        unreadable = sorted({f"{text[:20]!r} {fg} on {bg}" for text, _, fg, bg in cells
                             if contrast(eight_bit(fg), eight_bit(bg)) < AA})
        assert not unreadable, f"{theme}: under 4.5:1 in 256 colours: {unreadable[:8]}"
