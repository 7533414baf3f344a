"""Every number about one session agrees wherever it is shown (issue 40's done-when): the title, the meter,
the panel (its events list and spark line), the tool cards, the folded line, /context, ACP's usage update,
the journal and the export, read for one session (real SDK against the strict fake API, two turns, an event,
an undone event, a /compact) and compared."""

from __future__ import annotations

import re

from textual.widgets import Static

from tests.fakes.fake_anthropic import FakeAnthropic, reader_model
from tests.providers.test_compaction_real_sdk import make_files, session_on
from tui_agent.core.agent.context_report import status_text
from tui_agent.core.agent.compaction_control import undo_compaction
from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.formats import fmt_tokens, fmt_usd
from tui_agent.core.journal.export import markdown_of
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.writer import journal_of, start_journal
from tui_agent.core.messages import result_text
from tui_agent.faces.acp.updates import usage_update
from tui_agent.ui.widgets.budget_panel import BudgetPanel
from tui_agent.ui.widgets.events_list import EventsList
from tui_agent.ui.widgets.tool_card import ToolCard

from .support import make_app, send


async def test_the_numbers_of_one_session_agree_everywhere(tmp_path) -> None:
    names = make_files(tmp_path, 12, 9_000)
    fake = FakeAnthropic(model=reader_model(names[:6]))
    with fake:
        session = session_on(fake, tmp_path, 200_000, 30, compact_policy=CompactPolicy(budget_tokens=24_000, high_water=0.6, low_water=0.1))
        session.provider.model = "claude-sonnet-4-5"  # priced: the cost is shown
        session.ledger.configure(session.provider.model, session.provider.context_window,
                                 session.provider.max_output_tokens)
        start_journal(session)
        app = make_app(session)
        async with app.run_test(size=(160, 50)) as pilot:
            await send(pilot, "Read the modules.")
            fake.model = reader_model(names[6:])
            await send(pilot, "Read the others.")
            assert undo_compaction(session).startswith("Took back")  # the event a call made: listed, not counted
            await pilot.pause()
            said = await session.compact_now()
            await session.wait_summary()  # (the summary call's price: the title's at once)
            assert said.startswith("Compacted now"), said
            await pilot.pause()
            assert fmt_usd(session.ledger.cost) in app.screen.sub_title  # the summary call's price is in the title
            fake.model = reader_model([])  # an answer at once: the call that sends /compact's event
            await send(pilot, "Thanks.")
            panel = app.screen.query_one(BudgetPanel)
            ledger = session.ledger
            title = app.screen.sub_title
            events_shown = [str(o.prompt) for o in (app.screen.query_one(EventsList).get_option_at_index(i)
                                                    for i in range(app.screen.query_one(EventsList).option_count))]
            spark = str(panel.query_one("#budget-spark", Static).render())
            cards = {card.tool_use_id: card.chars for card in app.screen.query(ToolCard)}
            figures = ledger.current
            meter_text = str(panel.meter.render())
            context = status_text(session.context_view())
            acp = usage_update(ledger)
        journal_of(session).close()
        await session.aclose()
    assert fake.violations == []
    load = read_journal(journal_of(session).path)
    exported = markdown_of(load)

    # the cost: title = panel = ledger = the journal's calls (and the summary call) = the export's
    journal_cost = sum(c.cost_usd or 0 for c in load.calls)  # the calls of the conversation
    assert fmt_usd(ledger.cost) in title and panel.cost_text == fmt_usd(ledger.cost)
    exported_cost = sum(float(x) for x in re.findall(r"· \$(\d+\.\d+)", exported))
    assert abs(exported_cost - journal_cost) < 1e-3

    # the events: the ledger's count = the spark line's = the journal's (undone apart) = the export's
    counted = ledger.event_count
    made = [c for c in load.calls if c.event]
    assert counted == len([c for c in made if not c.undone]) and any(c.undone for c in made)
    assert any("you asked" in (c.event or "") for c in made)  # /compact's event, in the journal's event field
    assert f"**compaction events:** {counted}" in exported
    assert sum(line.endswith("· undone") for line in events_shown) == 1
    assert f"{counted} compaction event" in spark, spark

    # the size: the meter's headline = the ledger's = /context's denominator = ACP's budget and percentage
    assert f"{figures.shown_total:,}" in meter_text and f"({figures.percent}%)" in meter_text
    assert f"/ {fmt_tokens(figures.room)} tok budget ({figures.percent}%)" in meter_text
    assert f"of the {fmt_tokens(figures.room)} budget" in context
    meta = acp.field_meta["tuiAgent"]
    assert acp.used == figures.shown_total and meta["budget"] == figures.room and meta["budgetPercent"] == figures.percent
    assert f"ctx {'' if figures.exact_total is not None else '≈'}{figures.percent}% of {fmt_tokens(figures.room)}" \
        in ledger.context_line()
    last = max(c.call for c in load.calls if c.usage is not None)
    exact = next(c for c in load.calls if c.call == last).usage.context_tokens
    assert ledger.calls[last] == exact and f"real {exact:,} in" in exported

    # the cards: what each tool card says it returned is what the history holds for that call
    results = {b["tool_use_id"]: len(result_text(b)) for m in load.history if isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"}
    assert cards and all(results[tool_id] == chars for tool_id, chars in cards.items())
