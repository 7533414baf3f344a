"""Who may use `tui-agent serve`: checked on every request, every route (the page, the app socket, and
textual-serve's own `/static/…` and `/download/…`), whatever address the server listens on.

Three checks, each against something an attacker does not control:

- **Host** must name this server: a loopback name, the `--host` given, and on a wildcard bind
  (`0.0.0.0`, `::`) any IP address or this machine's host name. A DNS-rebinding page sends its own
  name; a Host with userinfo (`evil@127.0.0.1:8000`) or any other oddity does not parse and is refused.
- **Origin**, when a browser sends one, must be an allowed host on the port the browser is talking to:
  compared with the allow-list, never with the Host header (a rebinding page controls both).
- **Token**: a random secret in the URL printed at start (`/?token=…`, as Jupyter does), then an HttpOnly
  SameSite=Strict cookie. Required on loopback too: any local user (or a process of another user) can
  reach 127.0.0.1, and the page can run tools as you. Without it, nothing but a 403 page.
"""

from __future__ import annotations

import ipaddress
import re
import secrets
import socket
from dataclasses import dataclass, field
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})
_HOST = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?))"
                   r"(?::(?P<port>[0-9]{1,5}))?$")
TOKEN_QUERY = "token"


def parse_host(value: str) -> tuple[str, int | None] | None:
    """(lowercase host name or address, port) of a Host header or an Origin's netloc; None when it is not
    exactly `name[:port]` or `[v6][:port]` (userinfo, spaces, paths, empty)."""
    match = _HOST.match(value)
    if match is None:
        return None
    host = (match["v6"] or match["name"]).lower()
    if match["v6"] is not None:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return None
    port = int(match["port"]) if match["port"] else None
    if port is not None and not 0 < port < 65536:
        return None
    return host, port


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@dataclass
class Guard:
    """The allow-list and the token of one server."""

    bind: str
    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    names: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        bind = self.bind.strip("[]").lower()
        names = set(LOOPBACK_NAMES) | ({bind} - WILDCARDS)
        if bind in WILDCARDS:
            names.add(socket.gethostname().lower())
        self.names = frozenset(names)
        self.wildcard = bind in WILDCARDS

    @property
    def cookie(self) -> str:
        """Cookies are not kept apart by port: two servers on one host need two names."""
        return f"tui_agent_token_{self.port}"

    def host_allowed(self, host: str) -> bool:
        return host in self.names or (self.wildcard and _is_address(host))

    def host_refusal(self, header: str) -> str | None:
        parsed = parse_host(header)
        if parsed is None or not self.host_allowed(parsed[0]):
            return f"Host {header!r} is not this server"
        return None

    def origin_refusal(self, origin: str | None, host_header: str, secure: bool) -> str | None:
        """None for no Origin (not a browser) or an Origin that is this server as the browser reached it."""
        if origin is None:
            return None
        try:
            parts = urlsplit(origin)
        except ValueError:
            parts = None
        parsed = parse_host(parts.netloc) if parts is not None and parts.scheme in ("http", "https") else None
        reached = parse_host(host_header)
        if parsed is None or reached is None or not self.host_allowed(parsed[0]):
            return f"Origin {origin!r} is another site"
        origin_port = parsed[1] or (443 if parts.scheme == "https" else 80)
        host_port = reached[1] or (443 if secure else 80)
        if origin_port != host_port:
            return f"Origin {origin!r} is another site"
        return None

    def token_ok(self, query_token: str | None, cookie_token: str | None) -> bool:
        given = query_token if query_token is not None else cookie_token
        return given is not None and secrets.compare_digest(given.encode(), self.token.encode())
