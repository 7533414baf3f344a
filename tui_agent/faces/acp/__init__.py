"""`tui-agent acp`: the engine as an Agent Client Protocol agent over stdio (Zed, Toad, Neovim, …).

`updates.py` is the one pure mapping from engine events to ACP session updates; `agent.py` wires the SDK
(`agent-client-protocol`, imported only when this face runs) to a `Session` opened through the one door.
"""
