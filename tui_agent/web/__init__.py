"""`tui-agent serve`: the same TUI in browser tabs, through textual-serve.

textual-serve runs one app process per browser tab (the command line `tui-agent -C DIR …` under Textual's
web driver), so each tab is its own session built by the same factory as the terminal app. This package
only adds what tui-agent needs on top: an offline page (no font CDN), a guard against other web sites
driving the agent from the user's browser, and the command line around it. Imported only by `serve`
(aiohttp and textual-serve are not on the path to `--version` or the TUI).
"""
