"""Impossible compaction marks are usage errors (exit 2, one line), and `--help` states the real defaults
and every subcommand."""

from __future__ import annotations

import pytest

from tests.faces.test_demo_and_headless import cli
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.providers.demo import demo_policy
from tui_agent.core.models import DEFAULT_ANTHROPIC_MODEL


@pytest.mark.parametrize("flags, words", [
    (["--compact-high", "2.0"], "at most 1"),
    (["--compact-high", "1.5"], "at most 1"),
    (["--compact-high", "2"], "too small"),
    (["--compact-high", "-0.5"], "positive"),
    (["--compact-low", "-3"], "positive"),
    (["--compact-high", "0.2", "--compact-low", "0.5"], "above the high-water mark"),
    (["--compact-high", "nan"], "not a number"),
])
def test_impossible_marks_are_usage_errors(tmp_path, flags, words):
    out = cli(["-p", "hello", "--model", "demo", *flags], tmp_path)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], out.stderr
    assert out.stdout == ""


def test_possible_marks_still_run(tmp_path):
    out = cli(["-p", "hello", "--model", "demo", "--compact-high", "0.7", "--compact-low", "0.2"], tmp_path)
    assert out.returncode == 0, out.stderr
    out = cli(["-p", "hello", "--model", "demo", "--compact-high", "12000", "--compact-low", "6000"], tmp_path)
    assert out.returncode == 0, out.stderr


def test_help_states_the_real_defaults_and_every_subcommand(tmp_path):
    out = cli(["--help"], tmp_path)
    assert out.returncode == 0
    text = " ".join(out.stdout.split())
    assert f"default {CompactPolicy().high_water:g}" in text and "default 0.6)" not in text
    assert f"default {CompactPolicy().low_water:g}, {demo_policy().low_water:g} for the demo model" in text
    assert f"default: {DEFAULT_ANTHROPIC_MODEL} with ANTHROPIC_API_KEY" in text
    from tui_agent.faces.table import SUBCOMMANDS

    for command in ("serve", *SUBCOMMANDS):  # every command the dispatcher knows (watch was missing)
        assert f"\n    {command} " in out.stdout, command


def test_a_subcommand_after_a_flag_says_to_put_it_first(tmp_path):
    out = cli(["--model", "demo", "sessions"], tmp_path)
    assert out.returncode == 2 and "put `sessions` first" in out.stderr
