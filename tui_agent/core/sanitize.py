"""Control characters out of untrusted text before a face shows it.

File contents, tool output, MCP results, model text and repository config reach the terminal. Left
alone, ESC sequences in them act on the user's terminal: set its title, write the clipboard (OSC 52),
move the cursor to hide text, or worse. Every face passes untrusted strings through `strip_controls`
right before display; the history itself is never changed, so the model sees exactly what it saw.

Removed: C0 controls except tab and newline (a carriage return too: on a terminal it lets a later part
of a line overwrite an earlier one, hiding `rm -rf ~` behind something harmless), DEL, and C1
controls (U+0080..U+009F, which some terminals honour as 8-bit ESC sequences).
"""

from __future__ import annotations

import re

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> str:
    """`text` without control characters, keeping tab and newline (`\\r\\n` becomes `\\n`)."""
    if not isinstance(text, str):
        text = str(text)
    return _CONTROLS.sub("", text)


def escape_json_controls(text: str) -> str:
    """JSON text (`json.dumps(..., ensure_ascii=False)`) made safe for a terminal and still the same
    JSON: the controls `json.dumps` leaves raw (DEL and the C1 range, such as CSI `\x9b`) become
    `\u009b` escapes, which decode to the same strings. For faces that print JSON (`--print-outbound`,
    `--json` listings, a jsonl export): stripping would change the data, escaping does not."""
    return _CONTROLS.sub(lambda match: f"\\u{ord(match.group()):04x}", text)

