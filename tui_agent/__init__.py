"""tui-agent: a terminal coding agent whose signature is a live context-budget panel.

Nothing is imported here on purpose: `tui-agent --version` must not pay for Textual or the SDKs.
"""

__version__ = "0.1.0"
