"""The command-line faces: argument parsing (cli.py, the `tui-agent` entry point), `-p` (headless), the
`sessions`/`export` subcommands, `replay` and `watch`. The TUI is tui_agent/ui, `serve` is tui_agent/web."""
