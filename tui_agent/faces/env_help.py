"""What `tui-agent --help` says under its options: the environment variables it reads, what a repository may
start, the exit codes. Text only, kept beside the parser it closes."""

from tui_agent.faces import exit_codes

ENV_HELP = """environment:
  ANTHROPIC_API_KEY       use Claude (default model: see --model); without any key the offline demo model runs
  ANTHROPIC_BASE_URL      any Anthropic-compatible endpoint
  ANTHROPIC_MODEL         default Claude model
  OPENAI_API_KEY          use an OpenAI-compatible endpoint (with OPENAI_BASE_URL, OPENAI_MODEL)
  CLAUDE_CODE_USE_BEDROCK=1 (or _VERTEX, _FOUNDRY)  Claude on that cloud, set up as for Claude Code (docs/claude-sdk.md)
  CONTEXT_WINDOW_TOKENS   override the model's context window
  COMPACT                 compaction strategy: v2 (default), v1, seed, 0/off, server-clear, server-compact
  COMPACT_HIGH_WATER      compact when a request would exceed this (fraction of the budget, or tokens)
  COMPACT_LOW_WATER       compact down to this (fraction of the budget above the base, or tokens)
  COMPACT_SUMMARY=1       let the model summarise what compaction drops (same as --compact-summary)
  CACHE_DIAGNOSIS=1/0     ask the API why a call missed the prompt cache (default: on for api.anthropic.com)
  TRACE=1                 print [trace] lines (stderr headless; a log file in the TUI)
  ALLOW_WRITE=1           allow Write/Edit/Bash in headless mode (same as --allow-write)
  MCP_CONFIG              comma-separated MCP config files (default: .mcp.json)
  TEXTUAL_DRIVER          set by a Textual driver host (tui-agent serve): always open the app, never headless
  TUI_AGENT_DATA_DIR      where sessions are saved (default: the platform's user data dir)
  TUI_AGENT_KEEP_WARM     minutes to keep the prompt cache warm while idle (same as --keep-warm; 0 = off)
  TUI_AGENT_IDLE          what a waiting session does: auto (default), ping, compact, cold (same as --idle)

security: a repository's own MCP servers (.mcp.json) and allow rules need your approval (the TUI asks;
headless refuses them; --trust-project-mcp starts its MCP servers for one run). See the README.

exit codes:
""" + "".join(f"  {code:<24}{meaning}\n" for code, meaning in exit_codes.TABLE)
