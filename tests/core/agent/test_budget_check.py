"""An impossible budget is said plainly, in the TUI's chat and on headless stderr, never silently over budget."""

from __future__ import annotations

import asyncio

from tui_agent.core.agent.budget_check import budget_warning
from tui_agent.core.agent.factory import build_session
from tests.faces.test_demo_and_headless import cli, make_repo


def test_each_clash_gets_its_own_sentence_with_the_fix():
    assert budget_warning(200_000, 8_000, 3_000, 2_000) is None
    window = budget_warning(100, 4096, 150, 2400)
    assert window and "Impossible" in window and "100 tokens" in window and "--context-window" in window
    base = budget_warning(6000, 4096, 169, 2467)
    assert base and "Impossible" in base and "≈2,636" in base and "over budget" in base
    tight = budget_warning(7000, 4096, 169, 2467)
    assert tight and tight.startswith("Tight budget") and "≈268 tokens" in tight


def test_the_factory_checks_after_start_up_including_the_base(tmp_path):
    repo = make_repo(tmp_path)

    async def notices(**flags):
        session, _ = build_session(repo, model="demo", headless=True, **flags)
        found = await session.start_background()
        await session.aclose()
        return [n for n in found if "budget" in n.text]

    assert asyncio.run(notices()) == []
    [warning] = asyncio.run(notices(context_window=6000))
    assert warning.level == "warning" and "base of every call" in warning.text
    # The demo model honours --max-output-tokens too, so the suggested fix works without a key.
    assert asyncio.run(notices(context_window=6000, max_output_tokens=500)) == []


def test_an_impossible_window_is_a_usage_error_in_one_line(tmp_path):
    """Issue 18: `--context-window 100` used to warn and run with exit 0; no request can fit, so nothing runs."""
    repo = make_repo(tmp_path)
    for args in (["-p", "hello", "--context-window", "100"], ["-p", "hello", "--context-window", "6000"],
                 ["--print-outbound", "--context-window", "100"]):
        out = cli([*args, "--model", "demo"], repo, {"TUI_AGENT_DATA_DIR": str(tmp_path / "data")})
        assert out.returncode == 2, (args, out.stderr)
        lines = out.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: Impossible budget"), out.stderr
        assert "--context-window" in lines[0] and out.stdout == ""
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").rglob("*.jsonl")), "nothing was saved"
