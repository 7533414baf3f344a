"""How `tui-agent proxy -- AGENT` points each agent at the proxy (`faces/proxy_agent.py`, `proxy_codex.py`):
what it sets, where the calls go on, and what it refuses, read as each agent reads its own settings."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.npm_agents import clean_env
from tui_agent.faces.proxy_agent import FIRST_PARTY, AgentPlan, plan_for
from tui_agent.proxy.routes import route

BASE = "http://127.0.0.1:5000"


def _plan(argv: list[str], env: dict[str, str], upstream: str | None = None) -> AgentPlan:
    plan = plan_for(argv, env, upstream)
    assert isinstance(plan, AgentPlan), plan
    return plan


def test_claude_code_with_no_base_url_of_its_own_stays_first_party():
    plan = _plan(["claude", "-p", "hi"], {})
    command, env = plan.command(BASE)
    assert command == ["claude", "-p", "hi"] and env == {"ANTHROPIC_BASE_URL": BASE, FIRST_PARTY: "1"}
    assert plan.upstream is None and plan.api_base is None  # on to api.anthropic.com, by the path
    assert any(FIRST_PARTY in line and "1M" in line for line in plan.lines)


def test_claude_code_with_a_gateway_of_its_own_keeps_it_and_stays_a_third_partys_client():
    plan = _plan(["/opt/bin/claude"], {"ANTHROPIC_BASE_URL": "https://gateway.example.com/anthropic"})
    assert plan.command(BASE)[1] == {"ANTHROPIC_BASE_URL": BASE}
    assert plan.upstream == "https://gateway.example.com/anthropic"
    assert _plan(["claude"], {"ANTHROPIC_BASE_URL": "https://api.anthropic.com"}).env[FIRST_PARTY] == "1"


def test_claude_code_on_a_cloud_is_refused_in_one_line():
    said = plan_for(["claude"], {"CLAUDE_CODE_USE_BEDROCK": "1"}, None)
    assert isinstance(said, str) and "CLAUDE_CODE_USE_BEDROCK" in said and "\n" not in said


def test_codex_on_an_api_key_keeps_its_built_in_provider(tmp_path):
    plan = _plan(["codex", "exec", "hi"], {"CODEX_HOME": str(tmp_path), "CODEX_API_KEY": "k"})
    command, env = plan.command(BASE)
    assert command == ["codex", "exec", "-c", f'openai_base_url="{BASE}/v1"', "hi"] and env == {}
    assert plan.api_base == "https://api.openai.com/v1"


def test_codex_signed_in_with_chatgpt_goes_on_to_chatgpt(tmp_path):
    (tmp_path / "auth.json").write_text(json.dumps({"auth_mode": "chatgpt", "tokens": {"access_token": "t"}}))
    plan = _plan(["codex"], {"CODEX_HOME": str(tmp_path)})
    assert plan.api_base == "https://chatgpt.com/backend-api/codex"
    target = route("/v1/responses", {}, None, plan.api_base)
    assert target is not None and target.url("/v1/responses?x=1") == "https://chatgpt.com/backend-api/codex/responses?x=1"


def test_codex_on_a_provider_of_its_config_gets_that_providers_base_url_moved(tmp_path):
    (tmp_path / "config.toml").write_text('model_provider = "corp"\n[model_providers.corp]\nname = "Corp"\n'
                                          'base_url = "https://llm.corp.example/openai"\nwire_api = "responses"\n')
    plan = _plan(["codex", "exec", "-c", "model_reasoning_effort=high", "go"], {"CODEX_HOME": str(tmp_path)})
    command, _ = plan.command(BASE)
    assert command == ["codex", "exec", "-c", "model_reasoning_effort=high", "-c",
                       f'model_providers.corp.base_url="{BASE}/v1"', "go"]  # after the user's own -c: it wins
    assert plan.api_base == "https://llm.corp.example/openai"


def test_codex_given_its_provider_on_the_command_line_and_a_profile(tmp_path):
    (tmp_path / "config.toml").write_text('[profiles.work]\nmodel_provider = "w"\n'
                                          '[model_providers.w]\nbase_url = "https://w.example/v1"\n')
    inline = 'model_providers.p={name="p",base_url="https://p.example/v1",wire_api="responses"}'
    plan = _plan(["codex", "-c", "model_provider=p", "-c", inline, "exec", "go"], {"CODEX_HOME": str(tmp_path)})
    assert plan.api_base == "https://p.example/v1" and plan.command(BASE)[0][5:7] == [
        "-c", f'model_providers.p.base_url="{BASE}/v1"']
    assert _plan(["codex", "--profile", "work"], {"CODEX_HOME": str(tmp_path)}).api_base == "https://w.example/v1"
    refused = plan_for(["codex", "--oss"], {"CODEX_HOME": str(tmp_path)}, None)
    assert isinstance(refused, str) and "local model server" in refused


def test_upstream_overrides_where_the_calls_go_on(tmp_path):
    plan = _plan(["codex"], {"CODEX_HOME": str(tmp_path), "CODEX_API_KEY": "k"}, "http://127.0.0.1:9/v1")
    assert plan.api_base == "http://127.0.0.1:9/v1"
    assert _plan(["claude"], {}, "http://127.0.0.1:9").upstream == "http://127.0.0.1:9"


def test_an_agent_that_is_not_there_is_refused_before_anything_starts(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tui_agent", "proxy", "--record-dir", str(tmp_path), "--",
                           "no-such-agent-x"], env=clean_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 127 and done.stderr.strip() == "error: no-such-agent-x: command not found"
    assert list(tmp_path.iterdir()) == []  # no recording begun


@pytest.mark.parametrize("argv, says", [(["--json", "--", "claude"], "--json"), (["--"], "-- takes the agent"),
                                        (["--panel", "tmux"], "--panel goes with an agent")])
def test_flags_that_do_not_go_with_an_agent_are_refused(tmp_path, argv, says):
    done = subprocess.run([sys.executable, "-m", "tui_agent", "proxy", "--record-dir", str(tmp_path), *argv],
                          env=clean_env(PATH="/usr/bin:/bin"), capture_output=True, text=True, timeout=60)
    assert done.returncode in (2, 127) and says in done.stderr and len(done.stderr.strip().splitlines()) == 1
