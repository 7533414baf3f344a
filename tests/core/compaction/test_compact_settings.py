"""Compaction settings from flags and variables, and what the trace says about each request."""

from __future__ import annotations

import re

import pytest

from tests.faces.test_demo_and_headless import cli, make_repo, second_prompt
from tui_agent.core.compaction import Compactor, SeedCompactor
from tui_agent.core.compaction.settings import CompactSettingsError, settings_from
from tui_agent.core.agent.factory import build_session


def test_flags_win_over_variables_and_bad_values_name_the_setting():
    env = {"COMPACT": "v1", "COMPACT_HIGH_WATER": "0.5", "COMPACT_SUMMARY": "1"}
    assert settings_from(env).mode == "v1"
    chosen = settings_from(env, mode="v2", high="100000", low="0.2")
    assert (chosen.mode, chosen.high_water, chosen.low_water, chosen.summary) == ("v2", 100_000, 0.2, True)
    assert settings_from({"COMPACT": "0"}).mode == "off"
    with pytest.raises(CompactSettingsError, match="COMPACT='fast'"):
        settings_from({"COMPACT": "fast"})
    with pytest.raises(CompactSettingsError, match="--compact-high"):
        settings_from({}, high="lots")
    with pytest.raises(CompactSettingsError, match="low-water mark"):
        settings_from({}, high="0.2", low="0.5").policy()


def test_the_session_gets_the_chosen_compactor(tmp_path):
    for mode, kind in (("v2", Compactor), ("v1", SeedCompactor), ("seed", SeedCompactor)):
        session, _ = build_session(tmp_path, model="demo", env={"COMPACT": mode})
        assert isinstance(session.compactor, kind)
    off, _ = build_session(tmp_path, model="demo", env={"COMPACT": "0"})
    assert isinstance(off.compactor, Compactor) and not off.compactor.enabled
    high, _ = build_session(tmp_path, model="demo", env={"COMPACT_HIGH_WATER": "5000"})
    assert high.compactor.policy.high_tokens == 5000


def test_cli_rejects_a_bad_mode_as_a_usage_error(tmp_path):
    out = cli(["-p", "hi", "--compact", "bogus"], tmp_path)
    assert out.returncode == 2 and "is not a compaction mode" in out.stderr and "Traceback" not in out.stderr


def test_trace_prints_compact_run_when_trimmed_and_one_line_per_event(tmp_path):
    repo = make_repo(tmp_path)
    out = second_prompt(repo, ["--compact-high", "3000", "--compact-low", "1500"], {"TRACE": "1"})
    assert out.returncode == 0, out.stderr
    runs = re.findall(r"\[trace\] compact\.run before=(\d+) after=(\d+) droppedMessages=(\d+) truncatedBlocks=(\d+)",
                      out.stderr)
    events = re.findall(r"\[trace\] compact\.event call=\d+ kinds=(\S+) reason=(.+?) tokens=", out.stderr)
    assert runs and events
    # issue 17: re-runnable results are masked before anything is dropped (the old rule expected a drop in
    # this one-prompt run; after the masks a drop would free less than its rewrite costs)
    assert any("mask" in kinds.split(",") and "high-water" in reason for kinds, reason in events)
    assert all(int(after) == int(before) - int(dropped) + (int(dropped) > 0) for before, after, dropped, _ in runs)
    assert "Older turns are no longer sent in full" in out.stderr  # the chat line, headless on stderr


@pytest.mark.parametrize("word", ["0", "off", "OFF", "false"])
def test_every_reader_of_compact_agrees_on_off(monkeypatch, word) -> None:
    """One reader of `COMPACT` (compaction/modes.py): the settings, a policy left to the environment and
    the seed's options all take `off` as `0` (the policy and the options used to know only `0`)."""
    from tui_agent.core.compaction import CompactOptions, CompactPolicy

    monkeypatch.setenv("COMPACT", word)
    assert settings_from({"COMPACT": word}).mode == "off"
    assert not CompactPolicy().is_enabled()
    assert not CompactOptions().is_enabled()
    monkeypatch.setenv("COMPACT", "v1")
    assert CompactPolicy().is_enabled() and CompactOptions().is_enabled()
