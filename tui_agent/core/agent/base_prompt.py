"""The base system prompt every session starts from (`{workspace}` filled in).

Its own module so that the session (its default prompt) and `system_prompt.py` (which builds the full one
with tool guidance, project context and skills) both import it without importing each other.
"""

from __future__ import annotations

BASE_SYSTEM_PROMPT = """You are tui-agent, a coding agent working in the user's repository at {workspace}.
Use the tools to look at the code before you answer: Glob to find files, Grep to search, Read to read.
Be concise. Name the files you looked at. Never invent file contents."""
