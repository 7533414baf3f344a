"""What the server did to a request on its own, read from the SDK's final (beta) message.

Three things the Messages API reports beside the answer, each behind a beta:
- context editing (`context-management-2025-06-27`): `context_management.applied_edits`, one entry per
  edit that fired, with how many tool uses / thinking turns it cleared and the input tokens that freed;
- server-side compaction (`compact-2026-01-12`): a `compaction` block leading the content, and its own
  cost as a `compaction` entry in `usage.iterations` (not included in the top-level usage);
- cache diagnosis (`cache-diagnosis-2026-04-07`): `diagnostics.cache_miss_reason`, why the prompt cache
  could not reuse the previous request's prefix (model, system, tools or messages changed, the previous
  message unknown, no diagnosis) and about how many tokens that cost.

Plain frozen values, so the engine, the journal and every face read the same thing without the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tui_agent.core.messages import AppliedEdit, CompactionUsage  # the API's shapes (the events carry them)

BETA_CONTEXT = "context-management-2025-06-27"
BETA_COMPACT = "compact-2026-01-12"
BETA_DIAGNOSIS = "cache-diagnosis-2026-04-07"


@dataclass(frozen=True)
class CacheMissReason:
    """The API's word on a cache miss: `kind` as it names it (`messages_changed`, `system_changed`,
    `tools_changed`, `model_changed`, `previous_message_not_found`, `unavailable`) and the tokens it
    says would have been read from the cache (0 where it does not say)."""

    kind: str
    missed_tokens: int = 0


@dataclass(frozen=True)
class ServerReport:
    message_id: str = ""
    edits: tuple[AppliedEdit, ...] = ()
    compacted: bool = False  # the reply carries a compaction block
    compaction_summary: str = ""
    compaction_usage: CompactionUsage | None = None
    cache_miss: CacheMissReason | None = None

    @property
    def acted(self) -> bool:
        """The server changed what the model saw (an edit fired or it compacted)."""
        return bool(self.edits) or self.compacted


def _get(value: Any, key: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(key)
    return getattr(value, key, None)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _edits(final: Any) -> tuple[AppliedEdit, ...]:
    applied = _get(_get(final, "context_management"), "applied_edits")
    out = []
    for edit in applied if isinstance(applied, list) else []:
        kind = str(_get(edit, "type") or "")
        cleared = _get(edit, "cleared_tool_uses") if "tool_uses" in kind else _get(edit, "cleared_thinking_turns")
        out.append(AppliedEdit(kind, _int(cleared), _int(_get(edit, "cleared_input_tokens"))))
    return tuple(out)


def _compaction_usage(final: Any) -> CompactionUsage | None:
    iterations = _get(_get(final, "usage"), "iterations")
    for item in iterations if isinstance(iterations, list) else []:
        if _get(item, "type") == "compaction":
            return CompactionUsage(*(_int(_get(item, name)) for name in (
                "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")))
    return None


def _cache_miss(final: Any) -> CacheMissReason | None:
    reason = _get(_get(final, "diagnostics"), "cache_miss_reason")
    if reason is None or not _get(reason, "type"):
        return None
    return CacheMissReason(str(_get(reason, "type")), _int(_get(reason, "cache_missed_input_tokens")))


def report_from(final: Any) -> ServerReport:
    """The server's part of the SDK's final message (an SDK model or its dict); never raises on a shape."""
    content = _get(final, "content")
    blocks = [b for b in content if _get(b, "type") == "compaction"] if isinstance(content, list) else []
    summary = _get(blocks[-1], "content") if blocks else None
    return ServerReport(message_id=str(_get(final, "id") or ""), edits=_edits(final), compacted=bool(blocks),
                        compaction_summary=summary if isinstance(summary, str) else "",
                        compaction_usage=_compaction_usage(final), cache_miss=_cache_miss(final))


def betas_for(context_management: Mapping[str, Any] | None, diagnose: bool,
              messages: list[Any] | None = None) -> list[str]:
    """The beta headers a request with this `context_management` (and diagnosis) needs; a compaction block
    in `messages` needs the compaction beta too, whatever the strategy is now (one switched from
    server-compact, or a resumed session, still sends the block the server wrote)."""
    betas: list[str] = []
    kinds = {str(edit.get("type")) for edit in (context_management or {}).get("edits", [])}
    if any(kind.startswith("clear_") for kind in kinds):
        betas.append(BETA_CONTEXT)
    if any(kind.startswith("compact_") for kind in kinds) or _holds_compaction(messages or []):
        betas.append(BETA_COMPACT)
    if diagnose:
        betas.append(BETA_DIAGNOSIS)
    return betas


def _holds_compaction(messages: list[Any]) -> bool:
    """Whether a reply in `messages` starts with the server's compaction block (it is always a reply's first
    block); only first blocks are looked at, so a 10,000-message request costs about a millisecond."""
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if content and isinstance(content, list) and isinstance(content[0], dict) \
                and content[0].get("type") == "compaction":
            return True
    return False


def diagnosis_wanted(env: Mapping[str, str]) -> bool:
    """Whether to send the cache-diagnosis beta: `CACHE_DIAGNOSIS=1`/`0` decides; unset, only to Anthropic's
    own API (an Anthropic-compatible server at ANTHROPIC_BASE_URL rarely knows a beta; a 400 would turn it
    off for the session anyway, at the price of one refused request)."""
    asked = (env.get("CACHE_DIAGNOSIS") or "").strip().lower()
    if asked:
        return asked in ("1", "true", "yes", "on")
    if any((env.get(f"CLAUDE_CODE_USE_{cloud}") or "").strip().lower() in ("1", "true", "yes", "on")
           for cloud in ("BEDROCK", "VERTEX", "FOUNDRY")):
        return False  # the diagnosis is the Claude API's own: Bedrock and Vertex do not offer it
    base = (env.get("ANTHROPIC_BASE_URL") or "").strip()
    return not base or base.rstrip("/").endswith("api.anthropic.com")
