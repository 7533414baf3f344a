"""The Textual face of tui-agent: chat pane beside the live context-budget panel.

Import `tui_agent.ui.app.run_app` lazily from the CLI; nothing here imports a model SDK, so the first
frame is not held up by `anthropic`, `openai` or `mcp` (they take seconds to import).
"""
