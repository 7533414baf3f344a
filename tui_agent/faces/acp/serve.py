"""`tui-agent acp [--model M]`: serve one ACP client over stdin/stdout until it hangs up.

The SDK's connection runs on `frames.GuardedTransport` rather than its own stdio reader, so no line a
client sends can end the agent: every malformed frame is answered with its JSON-RPC error and the next
one is read (`frames.py` says what the SDK's reader did with them).
"""

from __future__ import annotations

import asyncio


def acp_command(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="tui-agent acp", description=(
        "Run tui-agent as an Agent Client Protocol agent over stdio (for Zed, Toad, Neovim, …). "
        "See docs/acp.md."))
    parser.add_argument("--model", default=None, help="model id, or `demo` for the offline demo model")
    parser.add_argument("--approve-compaction", action="store_true", default=None,
                        help="ask the editor before each compaction event (a permission request: compact now or "
                             "postpone; same as COMPACT_APPROVE=1, or /approve in a session)")
    parser.add_argument("--idle", choices=("auto", "ping", "compact", "cold"), default=None,
                        help="what a waiting session does with the prompt cache (same as TUI_AGENT_IDLE; default auto)")
    args = parser.parse_args(argv)
    if args.idle is not None:  # the door reads it for every session this agent opens
        import os

        os.environ["TUI_AGENT_IDLE"] = args.idle
    asyncio.run(serve(args.model, args.approve_compaction))
    return 0


async def serve(model: str | None, approve_compaction: bool | None = None) -> None:
    """One client on this process's stdin/stdout; the sessions' own work is shut down when it leaves."""
    from acp import AgentSideConnection
    from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
    from acp.stdio import stdio_streams

    from tui_agent.faces.acp.agent import TuiAgent
    from tui_agent.faces.acp.frames import GuardedTransport

    agent = TuiAgent(model=model, approve_compaction=approve_compaction)
    reader, writer = await stdio_streams(limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    # the SDK answers method-not-found for what we leave out, and -32602 for params its schema refuses
    conn = AgentSideConnection(agent, GuardedTransport(reader, writer), listening=False,  # type: ignore[arg-type]
                               observers=[agent.observe])
    try:
        await conn.listen()
    finally:
        try:
            await agent.aclose()
        finally:
            await asyncio.shield(conn.close())


__all__ = ["acp_command", "serve"]
