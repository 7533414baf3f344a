"""Issue 20 (robust following, O(growth)): a log read as it grows by one `TranscriptReader` says at every
`load()` exactly what `parse_transcript` of the lines so far says, and the messages that can no longer
change stay the very same objects from one load to the next (a replay's sticky compactors know them by
identity; a watch no longer parses the whole log again at each growth)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.shared import LOGS, SMALL_LOG
from tui_agent.core.messages import protocol_errors
from tui_agent.core.recordings.transcripts import FRESH_ID, TranscriptLoad, TranscriptReader, parse_transcript


def said(load: TranscriptLoad) -> tuple:
    """Everything a load says, comparable."""
    return (json.dumps(load.history, sort_keys=True), load.skipped_lines, load.compaction_summaries, load.usage,
            sorted(load.models), load.call_usage, load.compaction_boundaries, load.boundary_pre_tokens,
            load.message_models, load.call_times)


def kept_objects(before: TranscriptLoad, after: TranscriptLoad) -> int:
    same = 0
    while same < min(len(before.history), len(after.history)) and before.history[same] is after.history[same]:
        same += 1
    return same


def read_in_chunks(lines: list[str], cuts: list[int]) -> None:
    """Feed `lines` cut at `cuts`; after each chunk the load equals a parse of the lines so far, and all but
    the last few messages of the previous load are the same objects."""
    reader, at, previous, restarted = TranscriptReader(), 0, None, 0
    for cut in sorted(set(cuts)) + [len(lines)]:
        reader.feed(lines[at:cut])
        at = max(at, cut)
        load = reader.load()
        assert said(load) == said(parse_transcript(lines[:at])), f"after line {at}"
        assert not load.history or protocol_errors(load.history) == []
        # (a fresh id given earlier that a later line logs as its own: the repairs start again, by design)
        if previous is not None and reader.repairs_restarted == restarted:
            assert kept_objects(previous, load) >= len(previous.history) - 3, f"after line {at}"
        previous, restarted = load, reader.repairs_restarted


def test_the_real_logs_read_in_chunks_say_what_a_whole_parse_says():
    for path in LOGS:
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        step = max(1, len(lines) // 60)
        read_in_chunks(lines, list(range(1, len(lines), step)) + [2, 3, 5])


def test_a_growth_does_not_fold_the_lines_already_read_again(monkeypatch):
    lines = SMALL_LOG.read_text(encoding="utf-8").split("\n")
    import tui_agent.core.recordings.transcripts as module

    read = []
    real = module.read_record
    monkeypatch.setattr(module, "read_record", lambda line: read.append(line) or real(line))
    reader = TranscriptReader()
    for at in range(0, len(lines), 10):
        reader.feed(lines[at:at + 10])
        reader.load()
    assert len(read) == len(lines)  # each line once, however many loads


# -- hostile logs, cut anywhere ---------------------------------------------------------------------
def _use(tool_id):
    block = {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}
    if tool_id is not None:
        block["id"] = tool_id
    return block


_IDS = st.sampled_from([None, "", "a", "b", "a", FRESH_ID.format(0), FRESH_ID.format(1), 7])
_BLOCKS = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(["hi", " ", "This session is being continued from a previous conversation: x"])),
    st.builds(_use, _IDS),
    st.builds(lambda t: {"type": "tool_result", "tool_use_id": t, "content": "ok"}, _IDS),
    st.just({"type": "thinking", "thinking": "hmm", "signature": "s"}),
)


def _line(kind: str, blocks: list, n: int) -> str:
    if kind == "boundary":
        return json.dumps({"type": "system", "subtype": "compact_boundary", "compactMetadata": {"preTokens": n}})
    if kind == "junk":
        return "{not json" if n % 2 else "[1, 2]"
    message = {"role": kind, "content": blocks}
    record = {"type": kind, "message": message, "timestamp": f"2026-12-01T00:00:{n % 60:02d}Z"}
    if kind == "assistant":
        message.update(id=f"m{n // 2}", model="claude-sonnet-4-5", usage={"input_tokens": n + 1})
        record["requestId"] = f"r{n // 2}"
    if n % 7 == 3:
        record["isMeta"] = True
    if n % 11 == 5:
        record["isCompactSummary"] = True
    return json.dumps(record)


_LINES = st.lists(st.tuples(st.sampled_from(["user", "assistant", "assistant", "boundary", "junk"]),
                            st.lists(_BLOCKS, max_size=3)), max_size=24)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_LINES, st.lists(st.integers(0, 24), max_size=8))
def test_hostile_logs_cut_anywhere_say_what_a_whole_parse_says(records, cuts):
    lines = [_line(kind, blocks, n) for n, (kind, blocks) in enumerate(records)]
    read_in_chunks(lines, cuts)


def test_a_fresh_id_that_a_later_line_logs_as_its_own_makes_the_repairs_again():
    def result(tool_id):
        return {"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}

    records = [("user", [{"type": "text", "text": "hi"}]), ("assistant", [_use(None)]), ("user", [result(None)]),
               ("assistant", [{"type": "text", "text": "x"}]), ("user", [{"type": "text", "text": "go"}]),
               ("assistant", [_use(FRESH_ID.format(0))]), ("user", [result(FRESH_ID.format(0))])]
    lines = [_line(kind, blocks, n) for n, (kind, blocks) in enumerate(records)]
    reader = TranscriptReader().feed(lines[:5])
    assert reader.load().history[1]["content"][0]["id"] == FRESH_ID.format(0)  # given while no line logged it
    load = reader.feed(lines[5:]).load()
    assert reader.repairs_restarted == 1
    assert said(load) == said(parse_transcript(lines))
    assert load.history[1]["content"][0]["id"] == FRESH_ID.format(1)  # what the whole log's parse gives


def test_a_message_handed_out_is_never_edited_by_the_lines_after_it():
    lines = SMALL_LOG.read_text(encoding="utf-8").split("\n")
    reader, handed = TranscriptReader(), []
    for line in lines:
        history = reader.feed([line]).load().history
        handed += [(m, json.dumps(m)) for m in history[-3:]]
    assert all(json.dumps(m) == text for m, text in handed)


def test_a_growing_logs_recorded_calls_reuse_nothing_but_what_a_fresh_reading_gives():
    from tui_agent.core.recordings.recorded import recorded_transcript

    def figures(recorded):
        return (recorded.calls, recorded.real, recorded.segment_start, recorded.estimates, recorded.usage,
                recorded.times, recorded.summaries, recorded.boundaries, recorded.models, recorded.model)

    for path in LOGS:
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        reader, previous = TranscriptReader(), None
        for at in range(0, len(lines), max(1, len(lines) // 40)):
            load = reader.feed(lines[at:at + max(1, len(lines) // 40)]).load()
            grown = recorded_transcript(load, path.name, 8, previous)
            assert figures(grown) == figures(recorded_transcript(load, path.name, 8)), (path.name, at)
            previous = grown


def test_a_long_logs_messages_share_their_keys_instead_of_one_string_per_line():
    """`json.loads` makes new key strings for every line: a watch that keeps a long log's messages held its
    own "type", "tool_use_id", "input", "file_path" (and the usage's keys) per block. The loader interns
    them: the distinct key and kind objects are a handful however long the log, and the history says the
    same (equal strings)."""
    from tests.replay.jsonl import Log, rounds

    log = rounds(Log().user("Read every file, please."), 300, size=200)
    load = TranscriptReader().feed(log.lines).load()
    blocks = [b for m in load.history for b in m["content"]]
    inner = [item for b in blocks if isinstance(b.get("content"), list) for item in b["content"]]
    keys = {id(k) for b in [*blocks, *inner] for k in b} | {id(b["type"]) for b in blocks}
    keys |= {id(k) for b in blocks if b["type"] == "tool_use" for k in b["input"]} | {id(k) for u in load.usage for k in u}
    assert len(blocks) > 900 and len(keys) < 30, len(keys)
    assert said(load) == said(parse_transcript(log.lines))
