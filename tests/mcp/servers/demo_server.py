"""A small MCP server for tui-agent's tests, built on the SDK's `MCPServer` (mcp 2.x).

It exercises what the client must handle: a read-only tool, a tool that writes, a slow one (timeouts),
one that kills its own process (crash and restart), errors, images and structured content. Run it as
`python demo_server.py` (stdio) or `python demo_server.py --http PORT` (streamable HTTP on 127.0.0.1).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(readOnlyHint=True)

# A 1x1 transparent PNG: enough to check that image blocks reach the model unchanged.
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)

server = MCPServer("demo")


@server.tool(annotations=READ_ONLY)
def echo(message: str) -> str:
    """Echo a message back (read-only)."""
    return f"got:{message}"


@server.tool()
def write_note(path: str, text: str) -> str:
    """Write text to a file (changes things, so it needs permission)."""
    Path(path).write_text(text, encoding="utf-8")
    return f"wrote {len(text)} characters to {path}"


@server.tool(annotations=READ_ONLY)
def slow(seconds: float) -> str:
    """Sleep, then answer: for call timeouts."""
    time.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def crash() -> str:
    """Kill this server process mid-call: for dead-server handling."""
    print("demo server: crashing on purpose", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool(annotations=READ_ONLY)
def fail(reason: str) -> str:
    """Fail with a message the model should read."""
    raise ToolError(f"failed on purpose: {reason}")


@server.tool(annotations=READ_ONLY)
def picture() -> list:
    """Return a caption and an image."""
    return ["see below", Image(data=PIXEL, format="png")]


@server.tool(annotations=READ_ONLY, structured_output=True)
def stats(word: str) -> dict[str, str | int]:
    """Return structured content."""
    return {"word": word, "length": len(word)}


@server.tool(name="odd.name v2", annotations=READ_ONLY)
def odd_name() -> str:
    """A tool whose name needs normalising."""
    return "odd"


@server.tool(annotations=READ_ONLY)
def env(name: str) -> str:
    """Return an environment variable of the server process (for `${VAR}` expansion in config)."""
    return os.environ.get(name, "<unset>")


@server.tool(annotations=READ_ONLY)
def pid() -> str:
    """The server's process id: tells a restarted server from the old one."""
    return str(os.getpid())


if __name__ == "__main__":
    print("demo server: starting", file=sys.stderr, flush=True)
    if len(sys.argv) >= 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
