"""The app for `tui-agent watch`: the usual app (themes, palette, quit keys) on a watch screen."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.screen import Screen

from tui_agent.ui.app import AgentApp
from tui_agent.ui.screens.watch import WatchScreen

if TYPE_CHECKING:
    from tui_agent.core.compaction import CompactPolicy
    from tui_agent.core.recordings.log_source import LogSource


class WatchApp(AgentApp):
    def __init__(self, source: LogSource, path: Path, policy: CompactPolicy, *, workspace: Path | None = None,
                 **kwargs) -> None:
        from tui_agent.core.providers.base import Provider, ProviderError
        from tui_agent.core.agent.session import Session
        from tui_agent.core.tools.base import ToolRegistry

        class WatchProvider(Provider):
            """Stands in for the recorded model: its window for the panel, and no calls."""

            async def stream(self, request):
                raise ProviderError("watch mode: no model is called")
                yield  # an async generator, like every provider's stream

        self.source, self.path, self.policy = source, path, policy
        provider = WatchProvider(model="recorded", context_window=policy.context_window,
                                 max_output_tokens=policy.max_output_tokens, name="watch", reports_usage=True)
        kwargs.setdefault("run_background", False)
        super().__init__(Session(provider, ToolRegistry(), workspace or Path.cwd(), compact_policy=policy), **kwargs)
        self.workspace_label = path.name

    def get_default_screen(self) -> Screen:
        from tui_agent.core.recordings.codex_logs import log_kind

        if log_kind(self.path) == "proxy":  # a proxy recording: the exact request of each call too
            from tui_agent.ui.screens.proxy_watch import ProxyWatchScreen

            return ProxyWatchScreen(self.source, self.path, self.policy, self.session)
        return WatchScreen(self.source, self.path, self.policy, self.session)


def run_watch(source: LogSource, path: Path, policy: CompactPolicy) -> int:
    app = WatchApp(source, path, policy, session_label="watch")
    return app.run_to_end()
