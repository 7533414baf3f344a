"""A recording stores each request as what it adds to a recent one (`proxy_delta`), and reads back whole:
every request equal to what was sent, cache marks that moved included; a recording of whole requests (the
first form) reads the same; a 200-call session through the proxy is at most twice its last request plus its
answers; the face's index makes a delta's request whole from its bases' lines."""

from __future__ import annotations

import copy
import http.client
import json
import lzma
from pathlib import Path

from tests.agents.proxy_run import exchanges_of
from tests.fakes.fake_anthropic import message_events, tool_use
from tests.fakes.http import FakeServer, Reply
from tests.waiting import wait_until_sync
from tui_agent.core.recordings.proxy_delta import DeltaWriter, RequestChain
from tui_agent.core.recordings.proxy_index import RequestIndex
from tui_agent.core.recordings.replay import open_replay
from tui_agent.faces.proxy import ProxyThread
from tui_agent.proxy.recorder import Recorder, new_recording

RECORDED = Path(__file__).resolve().parents[1] / "data" / "proxy-claude-code.jsonl.xz"


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in lzma.decompress(path.read_bytes()).decode().splitlines()]


def _reencoded(records: list[dict]) -> list[dict]:
    writer = DeltaWriter()
    return [writer.encode(r) if r.get("type") == "exchange" else dict(r, version=2) for r in records]


def test_claude_codes_requests_read_back_whole_from_their_deltas():
    records = _records(RECORDED)
    written = _reencoded(records)
    deltas = [r for r in written if r.get("request_delta")]
    assert len(deltas) >= 3  # its main calls extend each other
    chain = RequestChain()
    read = [chain.request(copy.deepcopy(r)) for r in written if r.get("type") == "exchange"]
    assert read == [r["request"] for r in records if r.get("type") == "exchange"]
    assert sum(len(json.dumps(r)) for r in written) < 0.6 * sum(len(json.dumps(r)) for r in records)


def test_moved_cache_marks_are_stored_as_marks_and_come_back():
    first = {"model": "m", "system": "s", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "a" * 500, "cache_control": {"type": "ephemeral"}}]}]}
    second = {"model": "m", "system": "s", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "a" * 500}]},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": [{"type": "text", "text": "c", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
         "cache_control": {"type": "ephemeral"}}], "max_tokens": 9}
    writer, chain = DeltaWriter(), RequestChain()
    lines = [writer.encode({"type": "exchange", "api": "anthropic-messages", "request": body})
             for body in (first, second)]
    delta = lines[1]["request_delta"]
    assert delta["keep"] == 1 and delta["marks"] == {"0": []} and len(delta["add"]) == 2
    assert delta["set"] == {"max_tokens": 9} and "a" * 500 not in json.dumps(lines[1])
    assert [chain.request(json.loads(json.dumps(line))) for line in lines] == [first, second]


def test_a_recording_of_whole_requests_replays_as_its_delta_form(tmp_path):
    records = _records(RECORDED)
    whole, deltas = tmp_path / "whole.jsonl", tmp_path / "deltas.jsonl"
    whole.write_text("".join(json.dumps(r) + "\n" for r in records))
    deltas.write_text("".join(json.dumps(r) + "\n" for r in _reencoded(records)))
    a, b = open_replay(whole, ("none", "v2")), open_replay(deltas, ("none", "v2"))
    assert a.calls == b.calls > 0 and a.recorded.history == b.recorded.history
    assert [a.step(k).real_tokens for k in range(a.calls)] == [b.step(k).real_tokens for k in range(b.calls)]
    index_a, index_b = RequestIndex(whole), RequestIndex(deltas)
    index_a.refresh(), index_b.refresh()
    assert index_a.steps == index_b.steps == a.calls
    for k in range(a.calls):  # the face's card reads each step's request whole, from the delta lines too
        assert index_b.request(k)["request"] == index_a.request(k)["request"]


class Agentlike(FakeServer):
    """Answers each call with a tool call and a 1 KB text, as an agent's model would."""

    def handle(self, path, headers, body, raw):  # noqa: ANN001, ANN201
        n = len(self.requests)
        events = message_events(tool_use("Read", {"file_path": f"f{n}.py"}, f"toolu_{n}", say="x" * 300),
                                usage={"input_tokens": len(raw) // 4})
        return Reply(chunks=[b"".join(events)])


def test_a_200_call_session_records_at_most_twice_its_last_request_and_answers(tmp_path):
    upstream = Agentlike()
    upstream.server.RequestHandlerClass.disable_nagle_algorithm = True  # (else each answer waits out a delayed ACK)
    upstream.start()
    path = new_recording(tmp_path / "rec")
    recorder = Recorder(path)
    runner = ProxyThread(recorder, "127.0.0.1", 0, upstream.origin)
    port = runner.start()
    messages: list[dict] = [{"role": "user", "content": "read the files"}]
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    answers = 0
    try:
        for n in range(200):
            body = json.dumps({"model": "claude-x", "max_tokens": 100, "stream": True, "system": "s" * 2000,
                               "messages": messages}).encode()
            connection.request("POST", "/v1/messages", body=body, headers={"content-type": "application/json"})
            answers += len(connection.getresponse().read())
            messages = messages + [
                {"role": "assistant", "content": [{"type": "text", "text": "x" * 300},
                                                  {"type": "tool_use", "id": f"toolu_{n}", "name": "Read",
                                                   "input": {"file_path": f"f{n}.py"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}",
                                              "content": f"line {n}\n" * 60}]}]
        wait_until_sync(lambda: len(exchanges_of(path)) == 200, what="200 exchanges recorded", timeout=60)
    finally:
        runner.stop()
        recorder.close()
        upstream.stop()
    last = len(body)
    size = path.stat().st_size
    assert size <= 2 * (last + answers), (size, last, answers)
    exchanges = exchanges_of(path)
    assert json.dumps(exchanges[-1]["request"]).encode() == json.dumps(json.loads(body)).encode()
    print(f"200 calls: recording {size:,} bytes; last request {last:,} + answers {answers:,}")
