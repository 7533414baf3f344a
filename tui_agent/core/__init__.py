"""The UI-free engine: messages, compaction, tools, providers, the query loop and the session.

Rule: nothing under `tui_agent.core` imports textual, rich or `tui_agent.ui` (a test enforces it).
The Textual app, the headless `-p` mode and the tests all drive this same core.
"""

__all__: list[str] = []
