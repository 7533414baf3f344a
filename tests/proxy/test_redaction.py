"""Keys and auth never written: whatever header carries them, in any case of its name or scheme word, however
they come back (in the body's prose, a dict key, an upstream's error, the `--json` line). The keys here have no
known shape (no `sk-`), so only what the proxy learns from the request's headers can hide them."""

from __future__ import annotations

import base64
import http.client
import json

import pytest

from tests.fakes.fake_anthropic import message_events, text
from tests.fakes.http import Reply
from tests.proxy.test_forwarding import Upstream
from tests.waiting import wait_until_sync
from tui_agent.faces.proxy import ProxyThread, json_printer
from tui_agent.proxy.recorder import Recorder, auth_values, new_recording

OPAQUE = "opaque7Token0fNoKnownShape42"
PASSWORD = "hunter2-correct-horse"
BASIC = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()

HEADERS = {
    "bearer, lower case": [("Authorization", f"bearer {OPAQUE}")],
    "BEARER, upper case": [("AUTHORIZATION", f"BEARER {OPAQUE}")],
    "X-Api-Key": [("X-Api-Key", OPAQUE)],
    "api-key (Azure)": [("Api-Key", OPAQUE)],
    "x-goog-api-key": [("X-Goog-Api-Key", OPAQUE)],
    "Basic": [("Authorization", f"Basic {BASIC}")],
    "repeated": [("Authorization", f"Bearer {OPAQUE}"), ("Authorization", "Bearer other-token-123456")],
}


def _secrets(name: str) -> list[str]:
    return [BASIC, PASSWORD, f"alice:{PASSWORD}"] if name == "Basic" else [OPAQUE]


@pytest.mark.parametrize("name", list(HEADERS))
def test_a_key_in_any_auth_header_is_never_written(tmp_path, capsys, name):
    secret = _secrets(name)[-1]
    upstream = Upstream([Reply(chunks=message_events(text(f"echo {secret}"))),
                         Reply(status=401, json_body={"type": "error", "error": {
                             "type": "authentication_error", "message": f"invalid x-api-key {secret}"}})]).start()
    path = new_recording(tmp_path / "rec")
    recorder = Recorder(path, on_record=json_printer())
    runner = ProxyThread(recorder, "127.0.0.1", 0, upstream.origin)
    port = runner.start()
    body = json.dumps({"model": "claude-x", "max_tokens": 5, "stream": True, "metadata": {"user_id": secret},
                       "messages": [{"role": "user", "content": [
                           {"type": "text", "text": f"Basic auth is set up; the key is {secret}, use it"},
                           {"type": "tool_result", "tool_use_id": "t", "content": json.dumps({secret: "env"})}]}],
                       "tools": [{"name": "Read", "input_schema": {"type": "object", "properties": {secret: {}}}}]})
    try:
        for _ in range(2):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
            connection.putrequest("POST", "/v1/messages")
            for key, value in [("content-type", "application/json"), ("anthropic-version", "2023-06-01"),
                               ("content-length", str(len(body)))] + HEADERS[name]:
                connection.putheader(key, value)
            connection.endheaders(body.encode())
            connection.getresponse().read()
        wait_until_sync(lambda: len(path.read_text().splitlines()) == 3, what="both exchanges recorded")
    finally:
        runner.stop()
        recorder.close()
        upstream.stop()
    assert all(secret in json.dumps(r["body"]) for r in upstream.requests)  # the upstream got it as sent
    written = path.read_text()
    printed = capsys.readouterr().out
    assert len(printed.splitlines()) == 2
    for hidden in _secrets(name):
        assert hidden not in written and hidden not in printed
    assert written.count("[redacted]") >= 4
    assert "Basic auth is set up" in written  # prose is kept, only the key goes


def test_auth_values_read_every_scheme_and_the_basic_pair():
    assert set(auth_values({"Authorization": f"Basic {BASIC}"})) == {f"Basic {BASIC}", BASIC, f"alice:{PASSWORD}",
                                                                     PASSWORD}
    assert auth_values({"authorization": "Basic not-base64!"}) == ["Basic not-base64!", "not-base64!"]
    assert auth_values({"Content-Type": "application/json"}) == []


def test_basic_and_bearer_in_prose_are_kept_and_their_tokens_are_not():
    from tui_agent.core.journal.redact import redact_text

    prose = ('"quick" for basic exploration, "medium" for more; Bearer Authentication and BASIC authentication '
             "are explained below")
    assert redact_text(prose) == prose  # opencode's own system prompt says "basic exploration"
    for token in (BASIC, "eyJhbGciOiJIUzI1NiJ9.e30.abc", "abcdefgh1234", "tok_live-abcdefgh"):
        for scheme in ("Bearer", "bearer", "BEARER", "Basic", "basic"):
            assert token not in redact_text(f"Authorization: {scheme} {token}"), (scheme, token)
