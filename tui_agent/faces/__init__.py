"""The command-line faces: the `tui-agent` entry point (cli.py; its flags: arguments.py), `-p` (headless), the
`sessions`/`export` subcommands, `replay` and `watch`. The TUI is tui_agent/ui, `serve` is tui_agent/web."""
