"""Claude on Amazon Bedrock, Google Vertex AI and Microsoft Foundry, chosen as Claude Code chooses them.

A user who runs Claude Code on a cloud already has `CLAUDE_CODE_USE_BEDROCK=1` (or `_VERTEX`, `_FOUNDRY`) and
that platform's region/project variables set; the same environment picks the same platform here. The calls
go through the `anthropic` SDK's own platform clients (SigV4 signing, Google OAuth tokens, Azure keys, AWS
event-stream decoding): nothing of those protocols is written here. What is ours:

- which platform, from the environment, and a one-line error naming the variable that is missing
  (`CloudConfigError`), before anything runs;
- the model id each platform expects (`platform_model_id`), while the engine keeps the plain Claude id for
  limits and prices (`core.models.canonical_model` maps a cloud id back);
- the gateway switches (`CLAUDE_CODE_SKIP_BEDROCK_AUTH` / `_VERTEX_AUTH`): an LLM gateway in front of the
  platform adds its own credentials, so the request goes unsigned.

Nothing here imports the SDK until a client is made (`make_cloud_client`), on the first call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping


class CloudConfigError(ValueError):
    """A cloud platform was asked for but its settings are incomplete: one line naming what to set."""


@dataclass(frozen=True)
class Platform:
    """One cloud platform: the variable that selects it and how it is named to the user."""

    name: str
    flag_var: str  # Claude Code's switch
    label: str
    skip_auth_var: str | None  # Claude Code's switch for an LLM gateway that adds its own credentials
    base_url_var: str  # the SDK's own override (a gateway, or a loopback endpoint in tests)
    credentials_hint: str  # named when the platform refuses the credentials
    pip_extra: str  # `pip install 'tui-agent[EXTRA]'` brings what the SDK's client needs


PLATFORMS: dict[str, Platform] = {
    "bedrock": Platform("bedrock", "CLAUDE_CODE_USE_BEDROCK", "Amazon Bedrock", "CLAUDE_CODE_SKIP_BEDROCK_AUTH",
                        "ANTHROPIC_BEDROCK_BASE_URL",
                        "AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY, or "
                        "AWS_BEARER_TOKEN_BEDROCK)", "bedrock"),
    "vertex": Platform("vertex", "CLAUDE_CODE_USE_VERTEX", "Google Vertex AI", "CLAUDE_CODE_SKIP_VERTEX_AUTH",
                       "ANTHROPIC_VERTEX_BASE_URL",
                       "Google credentials (GOOGLE_APPLICATION_CREDENTIALS, or `gcloud auth application-default "
                       "login`)", "vertex"),
    "foundry": Platform("foundry", "CLAUDE_CODE_USE_FOUNDRY", "Microsoft Foundry", None,
                        "ANTHROPIC_FOUNDRY_BASE_URL", "ANTHROPIC_FOUNDRY_API_KEY", "anthropic"),
}


def _get(env: Mapping[str, str], key: str) -> str:
    return (env.get(key) or "").strip()


def _truthy(value: str) -> bool:
    return value.lower() in ("1", "true", "yes", "on")


def chosen_platform(env: Mapping[str, str]) -> str | None:
    """The platform a `CLAUDE_CODE_USE_*` switch selects (Bedrock, then Vertex, then Foundry), or None."""
    return next((name for name, p in PLATFORMS.items() if _truthy(_get(env, p.flag_var))), None)


@dataclass(frozen=True)
class CloudSettings:
    """Everything the platform's client needs, read once from the environment."""

    platform: str
    region: str | None = None
    project_id: str | None = None
    base_url: str | None = None
    resource: str | None = None  # Foundry's resource name (its endpoint is derived from it)
    skip_auth: bool = False
    api_key: str | None = field(default=None, repr=False)  # Foundry's key, Bedrock's bearer token: never shown

    @property
    def label(self) -> str:
        return PLATFORMS[self.platform].label

    @property
    def credentials_hint(self) -> str:
        return PLATFORMS[self.platform].credentials_hint


def cloud_settings(env: Mapping[str, str], platform: str) -> CloudSettings:
    """The settings for `platform`, or `CloudConfigError` naming the variable to set."""
    spec = PLATFORMS[platform]
    base_url = _get(env, spec.base_url_var) or None
    skip = bool(spec.skip_auth_var) and _truthy(_get(env, spec.skip_auth_var or ""))
    if platform == "bedrock":
        region = _get(env, "AWS_REGION") or _get(env, "AWS_DEFAULT_REGION")
        if not region:
            raise CloudConfigError(f"{spec.flag_var} is set but AWS_REGION is not: set AWS_REGION (e.g. "
                                   "us-east-1) to the region that serves your Claude models.")
        token = _get(env, "AWS_BEARER_TOKEN_BEDROCK") or None
        if not (skip or token):
            _aws_credentials_found(env, spec.flag_var)
        return CloudSettings(platform, region=region, base_url=base_url, skip_auth=skip, api_key=token)
    if platform == "vertex":
        region = _get(env, "CLOUD_ML_REGION")
        project = _get(env, "ANTHROPIC_VERTEX_PROJECT_ID")
        missing = [name for name, value in (("CLOUD_ML_REGION", region), ("ANTHROPIC_VERTEX_PROJECT_ID", project))
                   if not value]
        if missing:
            raise CloudConfigError(f"{spec.flag_var} is set but {' and '.join(missing)} "
                                   f"{'is' if len(missing) == 1 else 'are'} not: set "
                                   f"{'them' if len(missing) > 1 else 'it'} (e.g. CLOUD_ML_REGION=us-east5, "
                                   "ANTHROPIC_VERTEX_PROJECT_ID=your-gcp-project).")
        if not skip:
            _google_credentials_found(env, spec.flag_var)
        return CloudSettings(platform, region=region, project_id=project, base_url=base_url, skip_auth=skip)
    resource = _get(env, "ANTHROPIC_FOUNDRY_RESOURCE") or None
    if not (resource or base_url):
        raise CloudConfigError(f"{spec.flag_var} is set but neither ANTHROPIC_FOUNDRY_RESOURCE nor "
                               "ANTHROPIC_FOUNDRY_BASE_URL is: set one to your Foundry resource.")
    key = _get(env, "ANTHROPIC_FOUNDRY_API_KEY")
    if not key:
        raise CloudConfigError(f"{spec.flag_var} is set but ANTHROPIC_FOUNDRY_API_KEY is not: set it to your "
                               "Foundry resource's key.")
    return CloudSettings(platform, base_url=base_url, resource=resource, api_key=key)


# -- credentials, looked for where the platform's libraries look, without asking a metadata server -------------
def _home_file(env: Mapping[str, str], variable: str, default: str) -> Path:
    """The file `variable` names, else `default` under the home directory (`~` as the platform's tools read it)."""
    named = _get(env, variable)
    return Path(named).expanduser() if named else Path(_get(env, "HOME") or Path.home()) / default


def _aws_credentials_found(env: Mapping[str, str], flag: str) -> None:
    """`CloudConfigError` unless botocore's chain has something to read besides the instance metadata service:
    without this the first call failed after seconds ("RuntimeError: Could not resolve AWS credentials"), and on
    a machine outside AWS the metadata probes alone take 8–10 s. On an EC2 instance with a role, saying
    AWS_EC2_METADATA_DISABLED=false lets the chain ask the instance."""
    keys = _get(env, "AWS_ACCESS_KEY_ID") and _get(env, "AWS_SECRET_ACCESS_KEY")
    named = any(_get(env, name) for name in (
        "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE"))
    instance = _get(env, "AWS_EC2_METADATA_DISABLED").lower() == "false"
    files = (_home_file(env, "AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials").is_file()
             or _home_file(env, "AWS_CONFIG_FILE", ".aws/config").is_file())
    if not (keys or named or instance or files):
        raise CloudConfigError(f"{flag} is set but no AWS credentials were found: set AWS_PROFILE, or "
                               "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_BEARER_TOKEN_BEDROCK.")


def _google_credentials_found(env: Mapping[str, str], flag: str) -> None:
    """`CloudConfigError` unless google-auth has credentials to read (the variable's file, or gcloud's
    application-default file); on Google Compute Engine, GCE_METADATA_HOST says the metadata server is there."""
    named = _get(env, "GOOGLE_APPLICATION_CREDENTIALS")
    if named:
        if not Path(named).expanduser().is_file():
            raise CloudConfigError(f"{flag} is set but GOOGLE_APPLICATION_CREDENTIALS names {named}, which is not "
                                   "a file: point it to your service-account key file.")
        return
    gcloud = _get(env, "CLOUDSDK_CONFIG")
    adc = (Path(gcloud).expanduser() if gcloud else Path(_get(env, "HOME") or Path.home()) / ".config" / "gcloud"
           ) / "application_default_credentials.json"
    if not (adc.is_file() or _get(env, "GCE_METADATA_HOST") or _get(env, "GCE_METADATA_IP")):
        raise CloudConfigError(f"{flag} is set but no Google credentials were found: set "
                               "GOOGLE_APPLICATION_CREDENTIALS to a service-account key file, or run "
                               "`gcloud auth application-default login`.")


# -- model ids ------------------------------------------------------------------------------------------
_DATED = re.compile(r"^(?P<base>claude-[a-z0-9-]+?)-(?P<date>\d{8})$")

def _bedrock_geo(region: str | None) -> str:
    """The cross-region inference profile a region belongs to (Bedrock's `us.`, `eu.`, `apac.`, ... prefix)."""
    region = (region or "").lower()
    if region.startswith("us-gov"):
        return "us-gov"
    if region.startswith(("us-", "ca-", "sa-", "mx-")):
        return "us"
    if region.startswith("eu-"):
        return "eu"
    if region == "ap-northeast-1":
        return "jp"
    if region in ("ap-southeast-2", "ap-southeast-4"):
        return "au"
    if region.startswith("ap-"):
        return "apac"
    return "global"


def platform_model_id(platform: str | None, model: str, region: str | None = None) -> str:
    """The id `platform` expects for the Claude model `model`; an id already in the platform's form (a
    Bedrock profile or ARN, a Vertex `@` version) is sent as given.

    Bedrock: `{geo}.anthropic.{model}-v1:0` (the cross-region profile of the region); Vertex: a dated id
    becomes `base@date`; Foundry takes the plain id.
    """
    if platform == "bedrock":
        if model.startswith("arn:") or "anthropic." in model:
            return model
        return f"{_bedrock_geo(region)}.anthropic.{model}-v1:0"
    if platform == "vertex":
        if "@" in model:
            return model
        dated = _DATED.match(model)
        return f"{dated['base']}@{dated['date']}" if dated else model
    return model


# -- the SDK's clients ------------------------------------------------------------------------------------
def make_cloud_client(settings: CloudSettings, timeout: float) -> Any:
    """The SDK's async client for the platform: our retries (none of its own), redirects not followed."""
    from tui_agent.core.providers.background_import import wait_for_import

    wait_for_import()
    import anthropic

    from tui_agent.core.providers.sdk_lazy_import import take_http_client

    http_client = take_http_client() or anthropic.DefaultAsyncHttpxClient(follow_redirects=False)
    common: dict[str, Any] = {"max_retries": 0, "timeout": timeout, "http_client": http_client}
    if settings.base_url:
        common["base_url"] = settings.base_url
    try:
        if settings.platform == "bedrock":
            return _bedrock_client(anthropic, settings, common)
        if settings.platform == "vertex":
            return _vertex_client(anthropic, settings, common)
        return anthropic.AsyncAnthropicFoundry(api_key=settings.api_key, resource=settings.resource, **common)
    except ImportError as error:  # botocore / google-auth: the platform's extra is not installed
        from tui_agent.core.providers.base import ProviderError

        extra = PLATFORMS[settings.platform].pip_extra
        raise ProviderError(f"{settings.label} needs a package that is not installed ({error.name}): "
                            f"pip install 'tui-agent[{extra}]'.") from error


def _bedrock_client(anthropic: Any, settings: CloudSettings, common: dict[str, Any]) -> Any:
    if settings.skip_auth:
        return _unsigned(anthropic.AsyncAnthropicBedrock(aws_region=settings.region, **common))
    _needs("botocore")
    if settings.api_key:
        return anthropic.AsyncAnthropicBedrock(aws_region=settings.region, api_key=settings.api_key, **common)
    return anthropic.AsyncAnthropicBedrock(aws_region=settings.region, **common)


def _vertex_client(anthropic: Any, settings: CloudSettings, common: dict[str, Any]) -> Any:
    client = anthropic.AsyncAnthropicVertex(region=settings.region, project_id=settings.project_id, **common)
    if settings.skip_auth:
        return _unsigned(client)
    _needs("google.auth")
    return client


def _unsigned(client: Any) -> Any:
    """`client` sending its requests as they are, for a gateway that adds its own credentials: the
    platform's own class, so the User-Agent is the SDK's (a subclass put its name there), and no placeholder
    key or token (Vertex gateways got `Authorization: Bearer gateway`)."""

    async def prepare_request(request: Any) -> None:
        return None

    client._prepare_request = prepare_request
    return client


def _needs(module: str) -> None:
    """Fail at client creation, with the extra to install, rather than at the first call's signing."""
    import importlib

    importlib.import_module(module)
