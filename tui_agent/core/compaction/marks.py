"""The fixed words that mark a message the compactor wrote (not the user): one place for all of them.

The recap that stands for dropped messages, the stand-in that opens a request and the summary request
are user-role text messages, so anything that reads a request as a model would (the demo model, the
extractive summary) must tell them from the user's own prompts. It does so by these prefixes, imported
from here, never by a copied string: a rename of the recap's wording then moves every reader with it.
"""

from __future__ import annotations

from tui_agent.core.messages import Message, is_user_text, text_of

RECAP_MARK = "[Context recap:"  # the first words of the message standing for dropped messages
# the same words from before the recap had its name: a state saved then keeps sending them until its next drop
# (a resumed session sends byte for byte what it sent), and a request holding them still has a recap
OLD_RECAP_MARK = "[Context ledger:"
RECAP_MARKS = (RECAP_MARK, OLD_RECAP_MARK)
RECAP_PROMPTS_HEADING = "The user's prompts in that part, oldest first (verbatim):"
CONTINUES = "[The conversation continues from earlier messages that are not sent.]"
SUMMARY_MARK = "[tui-agent: summary request]"
# what follows the prompts in a recap, each after a blank line (`recap.build_recap` writes them in this order)
RECAP_SECTIONS = ("Files read: ", "Files written: ", "Files edited: ", "Files and folders searched: ", "Commands run",
                  "Tool calls in that part: ", "Summary of that part:")


def is_recap(message: Message) -> bool:
    return is_user_text(message) and text_of(message).startswith(RECAP_MARKS)


def is_compactor_text(message: Message) -> bool:
    """A user-role text message written by the compactor: the recap, the stand-in or a summary request."""
    if not is_user_text(message):
        return False
    text = text_of(message)
    return text.startswith((*RECAP_MARKS, SUMMARY_MARK)) or text == CONTINUES


def is_user_prompt(message: Message) -> bool:
    """Something the user typed: a non-blank text message of the user's that the compactor did not write."""
    return is_user_text(message) and bool(text_of(message).strip()) and not is_compactor_text(message)


def recap_prompts(message: Message) -> list[str]:
    """The user's prompts a recap lists (verbatim, oldest first; a long one as its head)."""
    if not is_recap(message):
        return []
    lines = text_of(message).splitlines()
    if RECAP_PROMPTS_HEADING not in lines:
        return []
    out: list[str] = []
    rest = lines[lines.index(RECAP_PROMPTS_HEADING) + 1:]
    for k, line in enumerate(rest):
        ends = line == "" and (k + 1 == len(rest) or rest[k + 1].startswith(RECAP_SECTIONS))
        if ends or not out and not line.startswith("- "):
            break
        if line.startswith("- "):
            out.append(line[2:])
        else:  # a pasted prompt's next line (a log, a listing): the prompts are verbatim, so is this one
            out[-1] += "\n" + line
    return out


_RECAP_FILES = ("Files read: ", "Files written: ", "Files edited: ")


def recap_files(message: Message) -> list[str]:
    """The files a recap says the messages it stands for read, wrote or edited (in its order)."""
    if not is_recap(message):
        return []
    return [path for line in text_of(message).splitlines() if line.startswith(_RECAP_FILES)
            for path in line.split(": ", 1)[1].split(", ") if path]
