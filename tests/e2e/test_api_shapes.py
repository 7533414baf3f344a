"""Content the API may send, end to end (issue 27): `tui-agent -p` against the fake Claude over real HTTP,
then `--continue`, whose request the fake validates as the API would. A block of a type the client does
not know is left out of history with a one-line notice (it was kept, and every later request got a 400);
a turn the server paused (`pause_turn`, a server tool's loop) is continued by sending the reply back, and
no server tool call is ever left in history without its result."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import cli_env
from tests.fakes.fake_anthropic import FakeAnthropic, _strip_cache, stream_reply, text

SEARCH = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "tui agents"}}
FOUND = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
    {"type": "web_search_result", "url": "https://example.invalid/a", "title": "A", "encrypted_content": "e1"}]}


def run_cli(args: list[str], cwd: Path, fake: FakeAnthropic, tmp_path: Path):
    return subprocess.run([sys.executable, "-m", "tui_agent", *args], cwd=cwd, env=cli_env(tmp_path, fake),
                          capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)


def workspace_in(tmp_path: Path) -> Path:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    return workspace


def assistant_messages(request: dict) -> list[dict]:
    return [m for m in request["body"]["messages"] if m["role"] == "assistant"]


def test_a_block_of_an_unknown_type_is_left_out_with_a_notice_and_the_session_goes_on(tmp_path, fake):
    workspace = workspace_in(tmp_path)
    fake.replies += [text("Hello there.") + [{"type": "hologram_block", "data": "???"}], text("Still here.")]
    first = run_cli(["-p", "hi"], workspace, fake, tmp_path)
    assert first.returncode == 0, first.stderr
    assert "Hello there." in first.stdout
    notices = [line for line in first.stderr.splitlines() if "hologram_block" in line]
    assert len(notices) == 1 and notices[0].startswith("[warning] Left 1 content block")
    second = run_cli(["-p", "again", "--continue"], workspace, fake, tmp_path)
    assert second.returncode == 0, second.stderr
    assert "Still here." in second.stdout
    sent = assistant_messages(fake.message_requests[-1])
    assert sent == [{"role": "assistant", "content": [{"type": "text", "text": "Hello there."}]}]


def test_a_paused_turn_is_continued_and_kept_as_one_answer(tmp_path, fake):
    workspace = workspace_in(tmp_path)
    fake.replies += [
        stream_reply(text("Searching the web.") + [SEARCH], stop_reason="pause_turn"),
        [FOUND] + text("Found one page about it."),
        text("Nothing more."),
    ]
    first = run_cli(["-p", "look it up"], workspace, fake, tmp_path)
    assert first.returncode == 0, first.stderr
    assert "Searching the web." in first.stdout and "Found one page about it." in first.stdout
    continuation = _strip_cache(fake.message_requests[1]["body"]["messages"])  # (its breakpoint aside)
    assert continuation[-1] == {"role": "assistant", "content": text("Searching the web.") + [SEARCH]}
    second = run_cli(["-p", "and then?", "--continue"], workspace, fake, tmp_path)
    assert second.returncode == 0, second.stderr
    sent = assistant_messages(fake.message_requests[-1])
    assert sent == [{"role": "assistant", "content": text("Searching the web.") + [SEARCH, FOUND]
                     + text("Found one page about it.")}]


def test_a_turn_paused_past_the_bound_keeps_its_text_and_no_lone_server_call(tmp_path, fake):
    workspace = workspace_in(tmp_path)
    def search(n: int) -> list[dict]:  # each part answers the call the part before it left waiting
        found = [{**FOUND, "tool_use_id": f"srvtoolu_{n - 1}"}] if n else []
        return found + text(f"Still searching ({n}).") + [{**SEARCH, "id": f"srvtoolu_{n}"}]

    fake.replies += [stream_reply(search(n), stop_reason="pause_turn") for n in range(6)] + [text("Done.")]
    first = run_cli(["-p", "look it up"], workspace, fake, tmp_path)
    assert first.returncode == 0, first.stderr
    assert len(fake.message_requests) == 6  # the call and five continuations: bounded
    assert "paused this answer 6 times" in first.stderr
    assert "[warning] Left 1 content block (server_tool_use)" in first.stderr  # the last call, left waiting
    second = run_cli(["-p", "and then?", "--continue"], workspace, fake, tmp_path)
    assert second.returncode == 0, second.stderr
    kinds = [b["type"] for b in assistant_messages(fake.message_requests[-1])[0]["content"]]
    assert kinds == ["text"] + ["server_tool_use", "web_search_tool_result", "text"] * 5
