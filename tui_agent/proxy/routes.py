"""Which API a request speaks, and the one upstream it may go to.

Why a fixed table: a proxy that forwards wherever a request points is an open proxy. Only a path of a known
API is forwarded, and only to the upstream configured for that API (`--upstream URL` for every API, else the
vendor's own: Anthropic for the Messages API, OpenAI for Responses and Chat Completions). The request's own
`Host` or absolute URL never chooses the destination.
"""

from __future__ import annotations

from dataclasses import dataclass

ANTHROPIC = "https://api.anthropic.com"
OPENAI = "https://api.openai.com"

# (path prefix, API name, the vendor that serves it by default); the first match wins
ROUTES = (
    ("/v1/messages/count_tokens", "anthropic-count-tokens", ANTHROPIC),
    ("/v1/messages", "anthropic-messages", ANTHROPIC),
    ("/v1/responses", "openai-responses", OPENAI),
    ("/v1/chat/completions", "openai-chat", OPENAI),
    ("/v1/models", "models", None),  # Anthropic and OpenAI both list models here: chosen by the headers
)
MODEL_CALLS = {"anthropic-messages", "openai-responses", "openai-chat"}  # what makes a call (a step)

# hop-by-hop headers (RFC 9110 §7.6.1) are the proxy's own business on each side; the rest passes unchanged
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "transfer-encoding", "upgrade", "host", "content-length"})


@dataclass(frozen=True)
class Route:
    api: str
    upstream: str  # origin (and path prefix) the request's path is appended to
    strip: str = ""  # the head of the path `upstream` stands for ("/v1": a base URL such as Codex's)

    def url(self, path_qs: str) -> str:
        return self.upstream.rstrip("/") + path_qs[len(self.strip):]


def route(path: str, headers: dict[str, str], upstream: str | None = None, api_base: str | None = None) -> Route | None:
    """Where a request for `path` goes (None: not an API this proxy speaks: 404, never forwarded). `api_base`:
    the URL the path's `/v1` stands for (`https://chatgpt.com/backend-api/codex`, a provider's base URL), for
    every API; else `upstream` (an origin, the whole path appended), else the vendor's API for the path."""
    clean = path.split("?", 1)[0]
    if ".." in clean or "//" in clean:
        return None
    for prefix, api, vendor in ROUTES:
        if clean == prefix or clean.startswith(prefix + "/"):
            if api_base:
                return Route(api, api_base, "/v1")
            if vendor is None:
                vendor = ANTHROPIC if "anthropic-version" in headers or "x-api-key" in headers else OPENAI
            return Route(api, upstream or vendor)
    return None


def forwarded_headers(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The request's or answer's headers as they pass the proxy: all but the hop-by-hop ones, unchanged."""
    return [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP]
