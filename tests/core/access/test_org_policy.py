"""The organisation's policy file: it sets the working budget, the idle policy and the ping spend cap, which
the user's and the repository's settings, `COMPACT_BUDGET`, `--budget` and `/budget` may narrow but never
widen (a wider one is refused in one line and the policy's value stands); the budget line names it; a bad
policy file is one line, never a stop; the report's idle policy defaults to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui_agent.core.access.effective_settings import effective_settings, telemetry_env
from tui_agent.core.agent.factory import build_session
from tui_agent.core.compaction.settings import CompactSettingsError, settings_from
from tui_agent.core.compaction.working_budget import describe, set_budget


@pytest.fixture
def policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Write the organisation policy (a dict) where `TUI_AGENT_POLICY_FILE` points; returns its path."""
    path = tmp_path / "etc" / "policy.json"
    path.parent.mkdir()
    monkeypatch.setenv("TUI_AGENT_POLICY_FILE", str(path))

    def write(data: dict) -> Path:
        path.write_text(json.dumps(data))
        return path

    return write


def _user_settings(data: dict) -> None:
    import os

    folder = Path(os.environ["TUI_AGENT_CONFIG_DIR"])
    (folder / "settings.json").write_text(json.dumps(data))


def test_the_policy_sets_the_budget_and_the_budget_line_names_it(policy, tmp_path):
    path = policy({"budget": "120k", "idle": "compact", "pingSpendCapUsd": 0.5})
    session, notices = build_session(tmp_path, model="demo", env={}, context_window=400_000)
    assert not [n for n in notices if "policy" in n.text]
    compact = session.compactor.policy
    assert compact.budget_tokens == 120_000 and compact.budget_cap == 120_000
    assert describe(compact).startswith(f"budget 120k (organisation policy {path})")
    settings = effective_settings(tmp_path, {})
    assert (settings.idle, settings.ping_cap_usd, settings.policy_file) == ("compact", 0.5, path)


def test_a_user_setting_that_widens_the_policy_is_refused_in_one_line(policy, tmp_path):
    path = policy({"budget": 120_000, "idle": "auto", "pingSpendCapUsd": 0.5})
    _user_settings({"budget": "300k", "idle": "ping", "pingSpendCapUsd": 2})
    session, notices = build_session(tmp_path, model="demo", env={}, context_window=400_000)
    refused = [n.text for n in notices if "refused" in n.text]
    assert len(refused) == 3 and all("\n" not in line for line in refused)
    assert any(line.startswith("settings ") and "budget 300,000 tokens refused" in line
               and f"organisation policy {path} sets at most 120,000" in line for line in refused)
    assert session.compactor.policy.budget_tokens == 120_000  # the policy's stands
    settings = effective_settings(tmp_path, {})
    assert settings.idle == "auto" and settings.ping_cap_usd == 0.5


def test_narrower_settings_are_taken_and_named(policy, tmp_path):
    policy({"budget": "120k", "idle": "auto", "pingSpendCapUsd": 0.5})
    (tmp_path / ".tui-agent").mkdir()
    (tmp_path / ".tui-agent" / "settings.json").write_text(json.dumps({"budget": "90k", "idle": "cold"}))
    _user_settings({"pingSpendCapUsd": 0.1})
    session, notices = build_session(tmp_path, model="demo", env={}, context_window=400_000)
    assert not [n for n in notices if "refused" in n.text]
    assert describe(session.compactor.policy).startswith("budget 90.0k (project settings ")
    settings = effective_settings(tmp_path, {})
    assert settings.idle == "cold" and settings.idle_source.startswith("project settings")
    assert settings.ping_cap_usd == 0.1 and settings.ping_cap_source.startswith("settings ")


def test_a_flag_or_variable_that_widens_it_is_refused_and_a_narrower_one_taken(policy, tmp_path):
    policy({"budget": "120k"})
    wide = settings_from({}, budget="300k")
    session, notices = build_session(tmp_path, model="demo", env={}, context_window=400_000, compact=wide)
    assert [n.text for n in notices if "refused" in n.text] == [
        f"flag --budget: budget 300,000 tokens refused: the organisation policy {tmp_path / 'etc' / 'policy.json'} "
        "sets at most 120,000 (a setting may narrow the organisation's policy, never widen it)."]
    assert session.compactor.policy.budget_tokens == 120_000
    narrow, _ = build_session(tmp_path, model="demo", env={}, context_window=400_000, compact=settings_from({"COMPACT_BUDGET": "60k"}))
    assert describe(narrow.compactor.policy).startswith("budget 60.0k (env COMPACT_BUDGET)")


def test_budget_in_a_session_may_narrow_the_policy_never_widen_it(policy, tmp_path):
    policy({"budget": "120k"})
    session, _ = build_session(tmp_path, model="demo", env={}, context_window=400_000)
    with pytest.raises(CompactSettingsError, match="/budget 200,000 refused: the organisation policy .* sets at most 120,000"):
        set_budget(session.compactor.policy, "200k")
    assert set_budget(session.compactor.policy, "80k").budget_tokens == 80_000


def test_without_a_policy_the_settings_files_set_the_defaults_freely(tmp_path):
    _user_settings({"budget": "300k", "idle": "ping", "pingSpendCapUsd": 3})
    settings = effective_settings(tmp_path, {})
    assert (settings.budget, settings.idle, settings.ping_cap_usd, settings.budget_cap) == (300_000, "ping", 3.0, None)
    assert settings.notices == ()


@pytest.mark.parametrize("text, words", [
    ("{not json", "is not valid JSON"), ("[1, 2]", "must contain a JSON object"),
    (json.dumps({"idle": "warm"}), "\"idle\" must be one of auto, ping, compact, cold"),
    (json.dumps({"budget": "lots"}), "\"budget\" must be whole tokens"),
    (json.dumps({"pingSpendCapUsd": -1}), "\"pingSpendCapUsd\" must be a number"),
    (json.dumps({"telemetry": {"endpoint": 3}}), "\"telemetry\" must be an object with an \"endpoint\""),
])
def test_a_bad_policy_file_is_one_line_and_the_session_starts(policy, tmp_path, text, words):
    path = policy({})
    path.write_text(text)
    session, notices = build_session(tmp_path, model="demo", env={}, context_window=400_000)
    told = [n.text for n in notices if str(path) in n.text]
    assert len(told) == 1 and words in told[0] and session is not None


def test_telemetry_is_the_policys_and_its_attributes_win(policy, tmp_path):
    policy({"telemetry": {"endpoint": "http://collector:4318", "resourceAttributes": {"team": "payments"}}})
    _user_settings({"telemetry": {"endpoint": "http://mine"}})
    settings = effective_settings(tmp_path, {})
    assert any("\"telemetry\" is the organisation policy's to set" in line for line in settings.notices)
    env = telemetry_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://elsewhere", "OTEL_SDK_DISABLED": "true",
                         "OTEL_RESOURCE_ATTRIBUTES": "team=mine,user=ada"}, settings)
    assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://collector:4318" and "OTEL_SDK_DISABLED" not in env
    assert env["OTEL_RESOURCE_ATTRIBUTES"] == "user=ada,team=payments"


def test_the_reports_idle_policy_defaults_to_the_policys(policy, tmp_path, monkeypatch):
    from tui_agent.faces import report

    policy({"idle": "cold"})
    monkeypatch.chdir(tmp_path)
    assert report._idle_default() == "cold"


def test_the_door_exposes_the_idle_policy_and_the_ping_cap_within_the_policy(policy, tmp_path):
    from tui_agent.core.agent.door import SessionOptions, SessionRefused, open_session

    policy({"idle": "auto", "pingSpendCapUsd": 0.25})
    opened = open_session(SessionOptions(tmp_path, model="demo", env={}, headless=True))
    assert (opened.idle, opened.ping_cap_usd) == ("auto", 0.25)
    narrower = open_session(SessionOptions(tmp_path, model="demo", env={}, headless=True, idle="cold"))
    assert narrower.idle == "cold" and not [n for n in narrower.notices if "refused" in n.text]
    wider = open_session(SessionOptions(tmp_path, model="demo", env={}, headless=True, idle="ping"))
    assert wider.idle == "auto" and len([n for n in wider.notices if "idle policy 'ping' refused" in n.text]) == 1
    with pytest.raises(SessionRefused, match="idle policy 'warm' is not one of auto, ping, compact, cold"):
        open_session(SessionOptions(tmp_path, model="demo", env={}, headless=True, idle="warm"))
