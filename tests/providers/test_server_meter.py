"""The server strategies' numbers are the server's (issue 40) and server-side compaction sends only what the
API still reads (issue 41), against the fake API with the server's own context management (its usage is what
the server read: after its clearing, from the newest compaction block on).

`--compact server-clear` once showed "≈52,493 / 40.0k (131 %)" while the API counted 15.7k, and listed each
call's clearing as a new compaction (10 entries in one turn); `server-compact` sent 150.7k-token bodies with a
100k window, everything before the compaction block included."""

from __future__ import annotations

import json

from tests.fakes.fake_anthropic import reader_model
from tests.fakes.fake_context import FakeContextAnthropic
from tests.providers.conftest import ended, run
from tests.providers.test_compaction_real_sdk import make_files, session_on
from tui_agent.core import events as ev
from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.compaction.marks import CONTINUES


def next_call(session):
    planned = session.plan_call()
    return session.ledger.preview(planned.result, planned.system_tokens + planned.tools_tokens), planned


async def test_server_clear_shows_what_the_server_kept_and_lists_one_clearing(tmp_path):
    names = make_files(tmp_path, 14, 12_000)
    fake = FakeContextAnthropic(model=reader_model(names))
    with fake:
        session = session_on(fake, tmp_path, 100_000, 40, compact_mode="server-clear",
                             compact_policy=CompactPolicy(budget_tokens=40_000))
        events = await run(session, "Read the modules.")
        figures, planned = next_call(session)
        await session.aclose()
    assert ended(events).reason == "completed" and fake.violations == []
    usages = {e.call: e.context_tokens for e in events if isinstance(e, ev.Usage)}
    planned_at = {e.call: e.plan.estimated_tokens for e in events if isinstance(e, ev.CompactionReported)}
    edited = [e for e in events if isinstance(e, ev.ServerEdited)]
    first = edited[0].call
    assert len(edited) >= 5  # the server cleared at every call from `first` on
    whole = planned.plan.baseline_tokens + planned.plan.message_tokens_after  # what is sent: the history whole
    last = usages[max(usages)]
    assert whole > 2.5 * last  # the server read far less than the history
    assert abs(figures.shown_total - last) < 0.1 * last, (figures.shown_total, last)  # the next call: its count
    for call in range(first + 1, max(usages) + 1):  # each call planned at what the server keeps, plus the new
        assert abs(planned_at[call] - usages[call]) < 0.3 * usages[call], (call, planned_at[call], usages[call])
    lines = [e for e in session.ledger.timeline() if isinstance(e, ev.ServerEdited)]
    assert len(lines) == 1 and lines[0].line().startswith(f"calls {first}–{max(usages)} · server cleared")
    assert [e.continued for e in edited] == [False] + [True] * (len(edited) - 1)


async def test_server_compact_sends_only_from_the_newest_compaction_block(tmp_path):
    names = make_files(tmp_path, 30, 9_000)
    fake = FakeContextAnthropic(model=reader_model(names))
    with fake:
        session = session_on(fake, tmp_path, 200_000, 24, compact_mode="server-compact")
        session.compactor.trigger_tokens = 50_000
        events = await run(session, "Read the modules.")
        figures, planned = next_call(session)
        await session.aclose()
    assert fake.violations == [] and fake.compactions >= 1
    compacted = next(e for e in events if isinstance(e, ev.ServerEdited) and e.compacted)
    after = [r["body"] for r in fake.message_requests[compacted.call:]]
    assert after  # calls after the compaction
    for body in after:
        assert body["messages"][0]["content"][0]["text"] == CONTINUES
        assert body["messages"][1]["content"][0]["type"] == "compaction"
        assert len(json.dumps(body)) // 4 < 50_000  # the bodies no longer grow past the trigger
    usages = [e.context_tokens for e in events if isinstance(e, ev.Usage)]
    assert abs(figures.shown_total - usages[-1]) < 0.1 * usages[-1]  # what is sent is what is read
