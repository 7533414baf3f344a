"""Secrets in the journal (issue 19 item 8): of 11 planted secrets, none is stored. Secret-named
variables' values (also a cut copy), key shapes typed in a prompt or read from a file, `env` output,
`Authorization: Bearer`, private key blocks. What the model is sent keeps them (the journal is the
only thing redacted), and every redacted line is still valid JSON."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tui_agent.core.journal.redact import REDACTED, Secrets, redact_record, redact_text, secret_values
from tui_agent.core.journal.writer import start_journal
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply

from .helpers import run, session_on

ENV = {
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "OPENAI_KEY": "oai-9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "GITHUB_TOKEN": "tok-0123456789abcdef0123456789abcdef01234567",
    "DB_PASSWORD": "correct-horse-battery-staple-42",
    "MAX_TOKENS": "100000000",  # a number under a secret-looking name: not a secret to hunt for
    "HOME": "/home/someone",
}
PLANTED = {
    "anthropic": "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe",
    "openai": "sk-proj-AbCdEf0123456789GhIjKlMnOpQrStUv",
    "aws_id": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_1234567890abcdefghijABCDEFGHIJ123456",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "dotenv": "sup3r-s3cret-stripe-value",
}
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq98mz5Gr1xYwz3p5Yk\nQ2Vm8H0z1Lw==\n"
       "-----END RSA PRIVATE KEY-----")


def stored(path: Path) -> str:
    text = path.read_text()
    for line in text.splitlines():
        json.loads(line)  # redaction never breaks a record
    return text


async def test_none_of_the_planted_secrets_is_stored(tmp_path: Path, monkeypatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    (tmp_path / ".env").write_text(f"STRIPE_SECRET_KEY={PLANTED['dotenv']}\nDEBUG=1\n")
    (tmp_path / "id_rsa").write_text(PEM + "\n")
    env_output = "\n".join(f"{k}={v}" for k, v in ENV.items())
    cut = ENV["GITHUB_TOKEN"][:20]  # what a truncated output leaves of a token
    session = session_on(tmp_path, ScriptedProvider(replies=[
        tool_reply("Read", {"file_path": ".env"}, "t1"), tool_reply("Read", {"file_path": "id_rsa"}, "t2"),
        tool_reply("Echo", {"message": env_output + f"\n(cut) {cut}"}, "t3"),
        text_reply(f"Your keys: {PLANTED['anthropic']} and {PLANTED['aws_id']}.")]))
    journal = start_journal(session)
    prompt = (f"keys {PLANTED['anthropic']} {PLANTED['openai']} {PLANTED['aws_id']} {PLANTED['github']}\n"
              f"curl -H 'Authorization: Bearer {PLANTED['bearer']}' https://api.example.com")
    await run(session, prompt)
    text = stored(journal.path)
    for secret in [*PLANTED.values(), *(ENV[k] for k in ("AWS_SECRET_ACCESS_KEY", "OPENAI_KEY", "GITHUB_TOKEN",
                                                         "DB_PASSWORD")), cut, "MIIEpAIBAAKCAQEA7bq98mz5"]:
        assert secret not in text, secret
    assert text.count(REDACTED) >= 11
    assert "Authorization: Bearer [redacted]" in text and "DEBUG=1" in text and "/home/someone" in text
    assert "100000000" in text  # a number is not redacted for its variable's name
    # the model was sent the real text: only the journal is redacted
    assert PLANTED["anthropic"] in json.dumps(session.history)


def test_ordinary_text_is_left_alone() -> None:
    text = ("task-runner-configuration-file: disk-usage-report-generator, max_tokens=4096, "
            "api_key=os.environ['KEY'], see sk-learn docs, MAX_TOKENS=100000000")
    assert redact_text(text, Secrets.of(secret_values({"MAX_TOKENS": "100000000", "PATH": "/usr/bin"}))) == text


def test_a_private_key_cut_before_its_end_line_is_redacted_from_begin_on() -> None:
    assert redact_text("before\n" + PEM[:60]) == "before\n[redacted]"
    assert redact_text(f"a {PEM} b") == "a [redacted] b"


def test_a_cut_copy_of_a_secret_is_redacted_with_the_rest_of_its_word() -> None:
    secret = ENV["GITHUB_TOKEN"]
    secrets = Secrets.of(secret_values(ENV))
    assert redact_text(f"x={secret[:15]}… and …{secret[-14:]} end", secrets) == "x=[redacted] and [redacted] end"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=40), st.sampled_from([*PLANTED.values(), PEM, PEM[:50], "\\", '"',
                                                                  "Bearer ", "API_KEY=", "\n", "sk-"])), max_size=8))
def test_redaction_keeps_the_record_and_never_changes_the_original(parts: list[str]) -> None:
    text = "".join(parts)
    record = {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}, "n": 1}
    original = json.loads(json.dumps(record))
    out = redact_record(record, Secrets.of(secret_values({"X_TOKEN": PLANTED["bearer"], "Y_SECRET": 'quo"te-long-value'})))
    assert record == original  # the history's own dicts are never changed
    assert out.keys() == record.keys() and out["n"] == 1 and isinstance(out["message"]["content"][0]["text"], str)
    json.loads(json.dumps(out, ensure_ascii=False))
    for secret in (PLANTED["bearer"], PLANTED["anthropic"]):  # (by value; by its distinctive shape)
        assert secret not in out["message"]["content"][0]["text"]
