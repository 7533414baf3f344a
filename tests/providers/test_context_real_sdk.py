"""The Context tool and the "tokens left" notice through the real anthropic SDK against the fake Claude.

A scripted model reads files until compaction drops the oldest reads, then recalls one with the Context
tool and gets its original content back. The notice and the recall both sit after the last cache
breakpoint: the prefix each request cached (up to its last breakpoint, byte for byte) is the prefix of
the next request, so the next call reads it from the cache.
"""

from __future__ import annotations

from tests.fakes.fake_anthropic import FakeAnthropic, cache_segments, text, tool_use
from tests.providers.conftest import ended, run
from tests.providers.test_compaction_real_sdk import make_files, session_on
from tui_agent.core import events as ev
from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.agent.context_notice import NOTICE_MARK
from tui_agent.core.messages import protocol_errors

RECALL_ID = "toolu_ctx_1"


def reader_then_recall(names: list[str], target: str):
    """Read every file, one per call (finding its place from the request), then recall `target`, then answer."""

    def respond(body):
        ids = [b["id"] for m in body["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])
               if b.get("type") == "tool_use"]
        if RECALL_ID in ids:
            return text("Recalled it.")
        done = max((int(i.rsplit("_", 1)[1]) for i in ids if i.startswith("toolu_read_")), default=-1) + 1
        if done < len(names):
            return tool_use("Read", {"file_path": names[done]}, f"toolu_read_{done}")
        return tool_use("Context", {"action": "recall", "search": target}, RECALL_ID)

    return respond


def prefix(body) -> list[str]:
    """The body's cache segments up to and including its last breakpoint (what this request cached)."""
    segments = cache_segments(body)
    last = max(i for i, (_, mark) in enumerate(segments) if mark)
    return [segment for segment, _ in segments[: last + 1]]


async def test_a_recall_and_the_notice_leave_the_cached_prefix_as_it_was(tmp_path):
    # under the cut size: only events change a prefix; 21 reads put the recall's request between two events
    # (with 24, issue 17's masks, an event every 6 reads, and the wire client's bodies as the fake counts them,
    # the recall's own request was an event: its prefix changed for the high mark, not for the recall; with 22
    # and the low mark above the base, ADR 0014, the request after a notice was the next event)
    names = make_files(tmp_path, 21, 3_000)
    fake = FakeAnthropic(model=reader_then_recall(names, names[1]))
    with fake:
        session = session_on(fake, tmp_path, 30_000, 40,
                             compact_policy=CompactPolicy(high_water=0.6, low_water=0.1))  # compaction 4's marks
        events = await run(session, "Read the modules, then recall the second one.")
        await session.aclose()
    assert ended(events).reason == "completed" and fake.violations == []
    assert protocol_errors(session.history) == []
    bodies = [r["body"] for r in fake.message_requests]
    plans = [e.plan for e in events if isinstance(e, ev.CompactionReported)]
    assert len(bodies) == len(plans)

    # The recall came back with the original content of the read that left the request (masked since issue
    # 17, which masks re-runnable results before anything is dropped; dropped before it).
    recall = next(e for e in events if isinstance(e, ev.ToolFinished) and e.name == "Context")
    head = recall.content.split("\n", 1)[0]
    assert not recall.is_error and ("masked in your context" in head or "dropped" in head)
    assert "[result of Read(m_01.py)]" in recall.content and "# module 01 0123456789" in recall.content
    after_recall = next(k for k, body in enumerate(bodies) if RECALL_ID in str(body["messages"][-1]))
    sent = bodies[after_recall]["messages"][-1]["content"]
    assert any(b.get("tool_use_id") == RECALL_ID and "# module 01" in str(b.get("content")) for b in sent)

    # The notice closes the request, after its last breakpoint, and never enters the history.
    noticed = [k for k, body in enumerate(bodies) if NOTICE_MARK in str(body["messages"][-1]["content"][-1])]
    assert noticed, "an event told the model what it has left"
    for k in noticed:
        last_message = bodies[k]["messages"][-1]["content"]
        assert last_message[-1]["type"] == "text" and "cache_control" not in last_message[-1]
        assert "tokens left of" in last_message[-1]["text"]
        assert any("cache_control" in block for block in last_message[:-1]), "the breakpoint stands before it"
    assert NOTICE_MARK not in str(session.history)

    # Every request without an event starts with what the request before it cached, byte for byte:
    # the request after a notice and the one carrying the recall's result included.
    checked = []
    for k in range(len(bodies) - 1):
        if plans[k + 1].event is None:
            before = prefix(bodies[k])
            assert [s for s, _ in cache_segments(bodies[k + 1])][: len(before)] == before, f"request {k + 1}"
            assert fake.usages[k + 1]["cache_read_input_tokens"] > fake.usages[k]["cache_read_input_tokens"]
            checked.append(k)
    assert set(noticed) <= set(checked) and after_recall - 1 in checked
