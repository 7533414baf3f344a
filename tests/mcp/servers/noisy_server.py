"""An MCP server that misbehaves the ways issue 9 found (stdio only): it prints junk on stdout between
protocol messages, floods stderr, and returns results far larger than any context window."""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("noisy")


@server.tool()
def junk() -> str:
    """Print lines that are not JSON-RPC on stdout (the protocol channel), then answer."""
    os.write(1, b"this is not json\n{broken\n")  # fd 1 itself: the SDK may wrap sys.stdout
    return "answered after junk"


@server.tool()
def shout(megabytes: int) -> str:
    """Write `megabytes` MB to stderr."""
    line = "x" * 1023 + "\n"
    for _ in range(megabytes * 1024):
        sys.stderr.write(line)
    sys.stderr.flush()
    return "shouted"


@server.tool()
def big(chars: int) -> str:
    """A text result of `chars` characters."""
    return ("0123456789" * (chars // 10 + 1))[:chars]


if __name__ == "__main__":
    server.run()
