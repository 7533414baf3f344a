"""A prompt that cannot fit the window is refused before it is sent.

The engine's own estimate knows it: the system prompt, the tools and the prompt alone are more than the
window leaves for a request (the window less the answer's reserve). Sent anyway, the API answers "prompt is
too long", and a prompt that joined the history made every later request too long as well (every
`--continue` failed "prompt is too long: 378,128 tokens > 200,000" until `/clear`). Refused, it never joins
the history: the turn ends with one line that says how large it is, what fits and what to do, and the face
keeps the text for the user (the TUI's prompt box, `-p`'s usage exit, ACP's `refusal` stop reason).

Compaction cannot help here (it never cuts the prompt being asked); a prompt whose estimate fits but whose
real size does not is still fitted by the compactor's last resort (`compaction/clip.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui_agent.core import tokens as tk
from tui_agent.core.messages import user_text

if TYPE_CHECKING:
    from tui_agent.core.compaction.protocol import CompactorProtocol


def prompt_refusal(compactor: "CompactorProtocol", system: str, schemas: list[dict[str, Any]],
                   prompt: str) -> str | None:
    """None when a request holding only `prompt` (with the system prompt and tools) fits the window the
    compactor plans for; else the one line that refuses it."""
    policy = compactor.policy
    room = policy.effective_window  # the window less the answer's reserve (and a learned smaller window)
    base = tk.text_tokens(system) + tk.tools_tokens(schemas)
    own = tk.message_tokens(user_text(prompt))
    ratio = max(compactor.ratio, 1.0)  # what the API counted per estimated token (never below the estimate)
    need = round((base + own) * ratio)
    if need <= room:
        return None
    over_chars = round((need - room) / ratio * tk.CHARS_PER_TOKEN)
    prompt_tokens = round(own * ratio)
    return (f"Not sent: this prompt is ≈{prompt_tokens:,} tokens ({len(prompt):,} characters); with the system "
            f"prompt and tools (≈{round(base * ratio):,}) the request would be ≈{need:,}, and the model's "
            f"{policy.context_window:,}-token window leaves {room:,} for it ({policy.max_output_tokens:,} are "
            f"kept for the answer). Shorten it by at least {over_chars:,} characters, split it, or save it to a "
            "file and ask for the parts you need to be read. Nothing was added to the conversation.")


__all__ = ["prompt_refusal"]
