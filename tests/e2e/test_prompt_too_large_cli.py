"""`-p` and `--continue` with a prompt larger than the window, against the strict fake Claude (issue 40: one
such prompt made every later `--continue` fail "prompt is too long: 378,128 tokens > 200,000", 3 of 3)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import cli_env
from tests.fakes.fake_anthropic import FakeAnthropic, error_reply, text
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.paths import sessions_dir

LIMIT = 30_000
HUGE = "START of the pasted file\n" + "x = compute(a, b)  # a line of the file\n" * 9_000 + "what is wrong here?"


def cli(args: list[str], cwd: Path, fake: FakeAnthropic, tmp_path: Path, stdin: str = "",
        window: int = LIMIT) -> subprocess.CompletedProcess:
    env = cli_env(tmp_path, fake, CONTEXT_WINDOW_TOKENS=str(window), ANTHROPIC_MODEL="claude-sonnet-4-5")
    return subprocess.run([sys.executable, "-m", "tui_agent", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=90, input=stdin)


def test_p_refuses_a_prompt_larger_than_the_window_before_sending_it(tmp_path: Path) -> None:
    fake = FakeAnthropic(token_limit=LIMIT)
    with fake:
        out = cli(["-p", "-"], tmp_path, fake, tmp_path, stdin=HUGE)
    assert out.returncode == 2, out.stderr  # bad input, nothing ran
    assert "error: Not sent: this prompt is" in out.stderr and "Shorten it by at least" in out.stderr
    assert fake.message_requests == [] and fake.violations == []


def test_continue_goes_on_after_a_journal_holding_a_prompt_over_the_window(tmp_path: Path) -> None:
    fake = FakeAnthropic(token_limit=LIMIT)
    with fake:
        fake.replies.append(text("Hello."))
        assert cli(["-p", "hello"], tmp_path, fake, tmp_path).returncode == 0
        # what an older version left: the prompt joined the history and its turn failed (a 1M window claimed,
        # so that this version's check lets it through; the server's refusal scripted, so nothing is learned)
        fake.token_limit = None
        fake.replies.append(error_reply(400, "invalid_request_error", "refused for the test"))
        failed = cli(["--continue", "-p", "-"], tmp_path, fake, tmp_path, stdin=HUGE, window=1_000_000)
        assert failed.returncode == 1 and "refused for the test" in failed.stderr
        fake.token_limit = LIMIT
        journal = sorted(sessions_dir(cli_env(tmp_path)).glob("*.jsonl"))[0]
        assert read_journal(journal).history[-1]["content"][0]["text"] == HUGE.strip()
        fake.model = lambda body: text("Going on.")
        for prompt in ("and now?", "and once more?"):
            out = cli(["--continue", "-p", prompt], tmp_path, fake, tmp_path)
            assert out.returncode == 0 and "Going on." in out.stdout, out.stderr
    assert fake.violations == [] and fake.rejected == []
    last, before = (r["body"]["messages"] for r in fake.message_requests[-1:-3:-1])
    clipped = [b["text"] for m in last for b in m["content"] if b.get("text", "").startswith("START")]
    assert len(clipped) == 1 and "characters are not sent here" in clipped[0]
    assert clipped[0].endswith("what is wrong here?")
    assert [b for m in before for b in m["content"] if b.get("text", "").startswith("START")][0]["text"] == clipped[0]
    assert read_journal(journal).history[2]["content"][0]["text"] == HUGE.strip()  # kept whole
