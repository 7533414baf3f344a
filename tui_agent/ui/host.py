"""What the UI's command and session helpers need from the screen that hosts them.

`ui/commands.py` (slash commands, palette entries) and `ui/session_actions.py` (resume, export) act on
"the screen with a chat, a panel and a session"; they name that as this Protocol instead of importing the
main screen, so neither depends on the screen that imports them (and a replay or a test screen may host
them as long as it has these).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.app import App
    from textual.worker import Worker

    from tui_agent.core.agent.session import Session
    from tui_agent.ui.widgets.budget_panel import BudgetPanel
    from tui_agent.ui.widgets.chat_pane import ChatPane
    from tui_agent.ui.widgets.prompt_area import PromptArea


class CommandHost(Protocol):
    """The main screen as the commands see it."""

    session: "Session"

    @property
    def app(self) -> "App[Any]": ...

    @property
    def chat(self) -> "ChatPane": ...

    @property
    def panel(self) -> "BudgetPanel": ...

    @property
    def prompt(self) -> "PromptArea": ...

    def update_title(self) -> None: ...

    def run_line(self, line: str) -> None: ...

    def prefill(self, text: str) -> None: ...

    def start_turn(self, prompt: str) -> None: ...

    async def stop_turn(self) -> None: ...

    async def clear_conversation(self) -> None: ...

    def focus_panel(self) -> None: ...

    def continue_turn(self) -> None: ...

    def action_answer_approval(self, answer: str) -> None: ...

    def run_worker(self, work: Any, *args: Any, **kwargs: Any) -> "Worker[Any]": ...
