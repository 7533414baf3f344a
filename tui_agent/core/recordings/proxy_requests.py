"""A recorded request read in the API it speaks (Anthropic Messages, OpenAI Responses, Chat Completions) as
Messages API messages, and its usage as the Messages API counts it: what the proxy's reader folds and what the
side-call rule compares; and whether a request asks to compact (`asks_compaction`)."""

from __future__ import annotations

from typing import Any

from tui_agent.core.recordings.codex_rollout import item_blocks


def _strip_cache(value: Any) -> Any:
    """`value` without `cache_control` marks (they move from call to call; the conversation does not)."""
    if isinstance(value, dict):
        return {k: _strip_cache(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache(v) for v in value]
    return value


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def request_messages(api: str, body: Any) -> list[dict[str, Any]] | None:
    """The request's conversation as Messages API messages (None: not a request with one)."""
    if not isinstance(body, dict):
        return None
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": list(blocks)})

    if api == "anthropic-messages" and isinstance(body.get("messages"), list):
        for message in body["messages"]:
            if isinstance(message, dict):
                add("assistant" if message.get("role") == "assistant" else "user",
                    _strip_cache(_blocks(message.get("content"))))
    elif api == "openai-responses":
        items = body.get("input")
        items = [{"type": "message", "role": "user", "content": items}] if isinstance(items, str) else items
        for item in items if isinstance(items, list) else []:
            found = item_blocks(item) if isinstance(item, dict) else None
            if found:
                add(*found)
    elif api == "openai-chat" and isinstance(body.get("messages"), list):
        for message in body["messages"]:
            if not isinstance(message, dict) or message.get("role") == "system":
                continue
            if message.get("role") == "tool":
                add("user", [{"type": "tool_result", "tool_use_id": str(message.get("tool_call_id")),
                              "content": str(message.get("content") or "")}])
                continue
            blocks = _blocks(message.get("content"))
            for call in message.get("tool_calls") or []:
                if not isinstance(call, dict):
                    continue
                function = call.get("function") or {}
                made = item_blocks({"type": "function_call", "call_id": call.get("id"),
                                    "name": function.get("name"), "arguments": function.get("arguments")})
                if made:
                    blocks.append(made[1][0])
            add("assistant" if message.get("role") == "assistant" else "user", blocks)
    else:
        return None
    return out


def call_usage(api: str, usage: Any) -> dict[str, int] | None:
    """The call's usage as the Messages API counts it (the OpenAI APIs count cached tokens inside input)."""
    if not isinstance(usage, dict):
        return None
    def count(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
    if api == "anthropic-messages":
        return {k: count(usage.get(k)) for k in ("input_tokens", "cache_creation_input_tokens",
                                                  "cache_read_input_tokens", "output_tokens")}
    total = count(usage.get("input_tokens", usage.get("prompt_tokens")))
    details = usage.get("input_tokens_details") or usage.get("prompt_tokens_details") or {}
    cached = min(count(details.get("cached_tokens") if isinstance(details, dict) else 0), total)
    return {"input_tokens": total - cached, "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0,
            "output_tokens": count(usage.get("output_tokens", usage.get("completion_tokens")))}


# the prompts an agent's own compaction request ends with (their opening words, as each version writes them)
COMPACTION_PROMPTS = (
    "CONTEXT CHECKPOINT COMPACTION",  # Codex (local compaction: a summary for the next model)
    "Your task is to create a detailed summary of the conversation so far",  # Claude Code (/compact, auto-compact)
)


def asks_compaction(api: str, body: Any) -> str | None:
    """Whether this request asks to compact the conversation: "server" (the Responses API's
    `compaction_trigger` item: Codex's compaction on its built-in OpenAI provider), "summary" (the agent's
    own summary prompt ends the request), else None."""
    if not isinstance(body, dict):
        return None
    items = body.get("input") if api == "openai-responses" else body.get("messages")
    last = items[-1] if isinstance(items, list) and items else None
    if not isinstance(last, dict):
        return None
    if last.get("type") == "compaction_trigger":
        return "server"
    found = item_blocks(last) if api == "openai-responses" else ("user", _blocks(last.get("content")))
    texts = [b.get("text", "") for b in (found[1] if found else []) if isinstance(b, dict) and b.get("type") == "text"]
    return "summary" if any(prompt in text for text in texts for prompt in COMPACTION_PROMPTS) else None
