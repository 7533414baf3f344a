"""Claude on Bedrock and Vertex through the SDK's own clients, against loopback fakes that check what the
real platforms check: the SigV4 signature over the bytes that arrived (Bedrock), an OAuth token issued
for a service-account JWT (Vertex), the platform's path and model id, and a valid Messages request."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import cli_env
from tests.fakes.fake_anthropic import text, tool_use
from tests.fakes.fake_cloud import FakeBedrock, FakeVertex, service_account
from tests.providers.conftest import FAST_RETRY, collect
from tui_agent.core.messages import user_text
from tui_agent.core.providers.base import ModelRequest, ProviderError, StreamDone, StreamText
from tui_agent.core.models import canonical_model
from tui_agent.core.providers.cloud import CloudConfigError, platform_model_id
from tui_agent.core.providers.config import chosen_provider, provider_from_env
from tui_agent.core.models import cost_usd, model_info

AWS_ISOLATION = {"AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
                 "AWS_EC2_METADATA_DISABLED": "true"}


@pytest.fixture
def bedrock(monkeypatch):
    """A Bedrock fake and the environment Claude Code users already have (keys in os.environ: boto's chain)."""
    fake = FakeBedrock(region="eu-west-1")
    env = {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": fake.access_key,
           "AWS_SECRET_ACCESS_KEY": fake.secret_key, "ANTHROPIC_BEDROCK_BASE_URL": fake.origin, **AWS_ISOLATION}
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with fake:
        yield fake, env


@pytest.fixture
def vertex(monkeypatch, tmp_path):
    fake = FakeVertex(project="proj-fake", region="us-east5")
    with fake:
        env = {"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "us-east5", "ANTHROPIC_VERTEX_PROJECT_ID": "proj-fake",
               "ANTHROPIC_VERTEX_BASE_URL": f"{fake.origin}/v1", "GOOGLE_APPLICATION_CREDENTIALS":
               service_account(tmp_path, fake)}
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        yield fake, env


def _request(model: str, messages=None) -> ModelRequest:
    tools = [{"name": "Read", "description": "read a file",
              "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}}]
    return ModelRequest(model=model, system="You are terse.", tools=tools, max_tokens=256,
                        messages=messages or [user_text("hello")])


async def test_bedrock_streams_signed_with_the_mapped_model(bedrock):
    fake, env = bedrock
    fake.replies = [text("Hello from Bedrock.")]
    provider = provider_from_env(env)
    provider.retry = FAST_RETRY
    assert provider.name == "bedrock" and provider.model == "claude-sonnet-5-5"
    items = await collect(provider.stream(_request(provider.model)))
    await provider.aclose()
    assert "".join(i.text for i in items if isinstance(i, StreamText)) == "Hello from Bedrock."
    done = items[-1]
    assert isinstance(done, StreamDone) and done.stop_reason == "end_turn" and done.usage.input_tokens > 0
    assert fake.violations == [] and fake.models == ["eu.anthropic.claude-sonnet-5-5-v1:0"]
    seen = fake.requests[0]
    assert seen["headers"]["user-agent"].startswith("AsyncAnthropicBedrock/Python") or \
        "anthropic" in seen["headers"]["user-agent"].lower()
    assert "cache_control" in str(seen["body"]["system"])  # our breakpoints travel to Bedrock too


async def test_bedrock_tool_use_arrives_whole_from_event_stream_frames(bedrock):
    fake, env = bedrock
    fake.replies = [tool_use("Read", {"file_path": "src/app.py"}, "toolu_1", say="Reading.")]
    provider = provider_from_env(env, model="claude-haiku-4-5-20251001")
    items = await collect(provider.stream(_request(provider.model)))
    await provider.aclose()
    done = items[-1]
    assert done.stop_reason == "tool_use"
    assert done.message["content"][-1] == {"type": "tool_use", "id": "toolu_1", "name": "Read",
                                           "input": {"file_path": "src/app.py"}}
    assert fake.models == ["eu.anthropic.claude-haiku-4-5-20251001-v1:0"] and fake.violations == []


async def test_bedrock_refusal_names_the_credentials_and_counting_is_not_offered(bedrock):
    fake, env = bedrock
    fake.secret_key = "the-secret-aws-knows"  # so the client's signature is wrong
    provider = provider_from_env(env)
    provider.retry = FAST_RETRY
    with pytest.raises(ProviderError) as caught:
        await collect(provider.stream(_request(provider.model)))
    assert "Amazon Bedrock refused access" in str(caught.value) and "AWS_PROFILE" in str(caught.value)
    assert env["AWS_SECRET_ACCESS_KEY"] not in str(caught.value)
    assert await provider.count_tokens(_request(provider.model)) is None
    await provider.aclose()
    fake.violations.clear()  # the bad signature was the point


async def test_a_gateway_in_front_of_bedrock_gets_the_request_unsigned(bedrock):
    fake, env = bedrock
    fake._signature_problem = lambda *args: None  # a gateway signs for itself
    fake.replies = [text("via gateway")]
    provider = provider_from_env({**env, "CLAUDE_CODE_SKIP_BEDROCK_AUTH": "1"})
    await collect(provider.stream(_request(provider.model)))
    await provider.aclose()
    headers = fake.requests[0]["headers"]
    assert "authorization" not in headers
    # Issue 41: no internal class name (it said `_GatewayBedrock/Python …`) and no placeholder credential.
    assert headers["user-agent"].startswith("AsyncAnthropicBedrock/Python ")
    assert "gateway" not in str(headers).lower() and "x-api-key" not in headers


async def test_a_gateway_in_front_of_vertex_gets_no_placeholder_token(vertex):
    """Issue 41: Vertex gateways got `Authorization: Bearer gateway`; the gateway adds its own credentials."""
    fake, env = vertex
    fake.tokens.add("")  # this gateway authenticates the caller itself: a request without a bearer passes
    fake.replies = [text("via the Vertex gateway")]
    provider = provider_from_env({**env, "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1"})
    items = await collect(provider.stream(_request(provider.model)))
    await provider.aclose()
    assert "".join(i.text for i in items if isinstance(i, StreamText)) == "via the Vertex gateway"
    assert [r["path"] for r in fake.requests if r["path"] == "/token"] == []  # no token fetched either
    headers = fake.requests[0]["headers"]
    assert "authorization" not in headers and "x-api-key" not in headers
    assert headers["user-agent"].startswith("AsyncAnthropicVertex/Python ") and "gateway" not in str(headers).lower()


async def test_vertex_gets_a_token_for_the_service_account_and_the_dated_id(vertex):
    fake, env = vertex
    fake.replies = [text("Hello from Vertex.")]
    provider = provider_from_env({**env, "ANTHROPIC_API_KEY": "ignored"}, model="claude-sonnet-4-5-20250929")
    assert provider.name == "vertex"  # the switch wins over a key, as in Claude Code
    items = await collect(provider.stream(_request(provider.model)))
    await provider.aclose()
    assert "".join(i.text for i in items if isinstance(i, StreamText)) == "Hello from Vertex."
    assert fake.models == ["claude-sonnet-4-5@20250929"] and fake.violations == []
    assert [r["path"] for r in fake.requests][0] == "/token" and len(fake.tokens) == 1


def test_missing_settings_are_one_line_naming_the_variable():
    with pytest.raises(CloudConfigError, match="AWS_REGION"):
        provider_from_env({"CLAUDE_CODE_USE_BEDROCK": "1"})
    with pytest.raises(CloudConfigError, match="ANTHROPIC_VERTEX_PROJECT_ID"):
        provider_from_env({"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "us-east5"})
    with pytest.raises(CloudConfigError, match="ANTHROPIC_FOUNDRY_API_KEY"):
        provider_from_env({"CLAUDE_CODE_USE_FOUNDRY": "1", "ANTHROPIC_FOUNDRY_RESOURCE": "res"})
    assert chosen_provider({"CLAUDE_CODE_USE_BEDROCK": "0", "ANTHROPIC_API_KEY": "k"}) == "anthropic"
    assert chosen_provider({"ANTHROPIC_API_KEY": "k"}, "bedrock") == "bedrock"


def test_model_ids_map_both_ways_and_keep_their_prices():
    assert platform_model_id("bedrock", "claude-opus-4-1-20250805", "us-west-2") == \
        "us.anthropic.claude-opus-4-1-20250805-v1:0"
    assert platform_model_id("bedrock", "claude-sonnet-5-5", "ap-northeast-1") == "jp.anthropic.claude-sonnet-5-5-v1:0"
    assert platform_model_id("bedrock", "global.anthropic.claude-x-v1:0", "eu-west-1") == "global.anthropic.claude-x-v1:0"
    assert platform_model_id("vertex", "claude-opus-4-1-20250805") == "claude-opus-4-1@20250805"
    assert platform_model_id("vertex", "claude-sonnet-5-5") == "claude-sonnet-5-5"
    assert platform_model_id("foundry", "claude-sonnet-5-5") == "claude-sonnet-5-5"
    for cloud_id in ("us.anthropic.claude-opus-4-1-20250805-v1:0", "anthropic.claude-opus-4-1-20250805-v1:0",
                     "claude-opus-4-1@20250805"):
        assert canonical_model(cloud_id) == "claude-opus-4-1-20250805"
        assert model_info(cloud_id) == model_info("claude-opus-4-1")
    from tui_agent.core.providers.base import UsageInfo

    assert cost_usd("eu.anthropic.claude-sonnet-4-5-20250929-v1:0", UsageInfo(1_000_000, 0)) == pytest.approx(3.0)


def _headless(tmp_path: Path, env: dict[str, str], prompt: str = "say hi") -> subprocess.CompletedProcess:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "tui_agent", "-p", prompt], cwd=workspace,
                          env=cli_env(tmp_path, **env, MODEL_MAX_RETRIES="0"), capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def test_headless_on_bedrock_end_to_end(bedrock, tmp_path):
    fake, env = bedrock
    fake.replies = [text("Bedrock says hi.")]
    done = _headless(tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert "Bedrock says hi." in done.stdout and fake.models == ["eu.anthropic.claude-sonnet-5-5-v1:0"]
    assert fake.violations == []


def test_headless_on_vertex_end_to_end(vertex, tmp_path):
    fake, env = vertex
    fake.replies = [text("Vertex says hi.")]
    done = _headless(tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert "Vertex says hi." in done.stdout and fake.violations == []


def test_headless_refuses_a_half_configured_cloud_in_one_line(tmp_path):
    done = _headless(tmp_path, {"CLAUDE_CODE_USE_BEDROCK": "1"})
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "AWS_REGION" in lines[0] and "Traceback" not in done.stderr


@pytest.mark.parametrize("platform", ["bedrock", "vertex"])
def test_a_cloud_without_credentials_is_refused_at_once_naming_what_to_set(platform, tmp_path):
    """Issue 40: switched on with no credentials anywhere, the first call failed after 8–10 s as "The Anthropic
    stream broke off (RuntimeError …)", naming no variable, and the budget line counted a call that never left."""
    fake = FakeBedrock(region="eu-west-1") if platform == "bedrock" else FakeVertex(project="p", region="us-east5")
    env = ({"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "eu-west-1", "ANTHROPIC_BEDROCK_BASE_URL": fake.origin}
           if platform == "bedrock" else
           {"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "us-east5", "ANTHROPIC_VERTEX_PROJECT_ID": "p",
            "ANTHROPIC_VERTEX_BASE_URL": f"{fake.origin}/v1"})
    with fake:
        done = _headless(tmp_path, {**env, "HOME": str(tmp_path), "AWS_EC2_METADATA_DISABLED": "true"})
    assert done.returncode == 2, done.stderr
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr and "[budget]" not in done.stdout + done.stderr
    wanted = ("AWS_PROFILE", "AWS_ACCESS_KEY_ID") if platform == "bedrock" else ("GOOGLE_APPLICATION_CREDENTIALS",)
    assert all(name in lines[0] for name in wanted) and "RuntimeError" not in lines[0]
    assert fake.requests == []  # nothing left


def test_credentials_in_a_profile_file_or_a_key_file_are_enough(tmp_path):
    from tui_agent.core.providers.cloud import cloud_settings

    base = {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "eu-west-1", "HOME": str(tmp_path)}
    with pytest.raises(CloudConfigError, match="no AWS credentials"):
        cloud_settings(base, "bedrock")
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text("[default]\naws_access_key_id = x\n")
    assert cloud_settings(base, "bedrock").region == "eu-west-1"
    assert cloud_settings({**base, "HOME": "/nonexistent", "AWS_BEARER_TOKEN_BEDROCK": "t"}, "bedrock").api_key == "t"
    vertex = {"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "us-east5", "ANTHROPIC_VERTEX_PROJECT_ID": "p",
              "HOME": str(tmp_path)}
    with pytest.raises(CloudConfigError, match="GOOGLE_APPLICATION_CREDENTIALS names .*not a file"):
        cloud_settings({**vertex, "GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "missing.json")}, "vertex")
    adc = tmp_path / ".config" / "gcloud" / "application_default_credentials.json"
    adc.parent.mkdir(parents=True)
    adc.write_text("{}")
    assert cloud_settings(vertex, "vertex").project_id == "p"
