"""core.follow: whole lines once each from a file still being written, truncation and replacement
noticed, unreadable lines counted, no busy waiting, memory bounded."""

from __future__ import annotations

import os
import tracemalloc

from tui_agent.core.recordings.follow import Follower


def _append(path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def test_half_written_line_is_waited_for_and_read_once(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"")
    with Follower(path) as follower:
        assert follower.poll().lines == []
        _append(path, b'{"a": 1}\n{"b": ')
        assert follower.poll().lines == ['{"a": 1}']
        assert follower.pending_bytes == len(b'{"b": ')
        assert follower.poll().lines == []  # still half-written: not parsed, not skipped
        _append(path, b'2}\n')
        assert follower.poll().lines == ['{"b": 2}']
        assert follower.poll().lines == []


def test_every_cut_gives_the_same_lines(tmp_path):
    data = "".join(f'{{"n": {i}, "text": "é{"x" * i}"}}\n' for i in range(40)).encode()
    expected = data.decode().splitlines()
    for step in (1, 3, 7, 64):
        path = tmp_path / f"log{step}.jsonl"
        path.write_bytes(b"")
        got = []
        with Follower(path) as follower:
            for at in range(0, len(data), step):  # cuts inside lines and inside the two-byte é
                _append(path, data[at:at + step])
                batch = follower.poll()
                assert not batch.reset and not batch.unreadable
                got += batch.lines
        assert got == expected


def test_truncated_file_is_reopened(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"one\ntwo\nthree\n")
    with Follower(path) as follower:
        assert follower.poll().lines == ["one", "two", "three"]
        path.write_bytes(b"new\n")  # shorter than what was read
        batch = follower.poll()
        assert batch.reset and batch.lines == ["new"]


def test_file_rewritten_in_place_longer_is_reopened(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"first\n")
    with Follower(path) as follower:
        assert follower.poll().lines == ["first"]
        path.write_bytes(b"other line, longer than before\n")  # same inode, larger, new first bytes
        batch = follower.poll()
        assert batch.reset and batch.lines == ["other line, longer than before"]


def test_replaced_file_is_reopened(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"old 1\nold 2\n")
    with Follower(path) as follower:
        assert follower.poll().lines == ["old 1", "old 2"]
        fresh = tmp_path / "fresh.jsonl"
        fresh.write_bytes(b"old 1\nold 2\nnew 3\n")  # even with the same first bytes: another inode
        os.replace(fresh, path)
        batch = follower.poll()
        assert batch.reset and batch.lines == ["old 1", "old 2", "new 3"]
        assert follower.resets == 1


def test_missing_file_is_waited_for(tmp_path):
    path = tmp_path / "later.jsonl"
    with Follower(path) as follower:
        assert follower.poll().missing
        path.write_bytes(b"here\n")
        assert follower.poll().lines == ["here"]


def test_unreadable_lines_are_counted_not_fatal(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"good 1\n\xff\xfe not utf-8\n" + b"y" * 100 + b"\ngood 2\n")
    with Follower(path, max_line_bytes=50) as follower:
        batch = follower.poll()
        assert batch.lines == ["good 1", "good 2"]
        assert batch.unreadable == 2 and follower.unreadable == 2


def test_a_line_too_long_is_skipped_across_reads_without_being_held(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"")
    with Follower(path, max_line_bytes=50) as follower:
        for _ in range(10):
            _append(path, b"z" * 40)  # one line growing past the cap, read in pieces
            follower.poll()
            assert follower.pending_bytes <= 50
        _append(path, b"\nafter\n")
        assert follower.poll().lines == ["after"]
        assert follower.unreadable == 1


def test_wait_backs_off_while_nothing_is_written(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"")
    sleeps: list[float] = []
    with Follower(path, min_wait=0.01, max_wait=0.4, sleep=sleeps.append) as follower:
        batch = follower.wait(stop=lambda: len(sleeps) >= 12)
    assert not batch.lines
    assert sleeps[0] == 0.01 and sleeps == sorted(sleeps) and max(sleeps) == 0.4  # doubling, then capped
    assert sum(sleeps) > 12 * 0.1  # an idle minute is a few hundred polls at most, not a busy loop


def test_wait_returns_when_a_line_is_finished(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"par")
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 3:
            _append(path, b"tial\n")

    with Follower(path, sleep=sleep) as follower:
        assert follower.wait().lines == ["partial"]
    assert len(sleeps) == 3


def test_memory_stays_bounded_over_ten_thousand_calls(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"")
    line = b'{"type": "assistant", "message": {"usage": {"input_tokens": 1234}, "content": "' + b"w" * 400 + b'"}}\n'
    with Follower(path) as follower:
        tracemalloc.start()
        try:
            for i in range(10_000):
                _append(path, line[:100])
                follower.poll()
                _append(path, line[100:])
                assert len(follower.poll().lines) == 1
                if i == 100:
                    base = tracemalloc.get_traced_memory()[0]
            grown = tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()
    assert grown < 64 * 1024, grown  # nothing kept per line: ~4.5 MB went through
