"""The budget panel's legend: what each row mark means, the row keys (not in read-only replay), and the
words for the row actions.

The keys line starts with F4 because the row keys act only in the steering mode F4 enters
(`type_through`): reached by Tab, `/context` or a click, typed text goes to the prompt instead.
"""

from __future__ import annotations

from textual.content import Content

MARKS = Content.assemble(  # two lines of at most 49 cells (the panel's narrowest): how a sent row looks, then the rest
    ("▌", "$budget-bar"), "sent ", ("◆", "$budget-protected"), "newest ", ("✂", "bold $budget-truncated"), "cut ",
    ("▒", "bold $text-warning"), "masked ", ("✎", "bold $budget-truncated"), "edited ", ("≡", "bold $text-primary"),
    "recap ", ("┃", "bold $text-accent"), "cached", "\n",
    ("·dropped", "italic $budget-dropped"), " ", ("Σ", "bold $text-secondary"), "summary ",
    ("●", "bold $text-success"), "pinned ", ("⊘", "bold $text-error"), "excluded ", ("≈", "bold"), "estimate",
)
KEYS = Content.assemble(
    ("F4", "bold"), " steer: ", ("p", "bold"), " pin · ", ("x", "bold"), " exclude · ", ("e", "bold"), " expand · ",
    ("u", "bold"), " undo",  # (v events, ⏎ open, c exact count: in the footer once steering)
)
READ_ONLY_KEYS = Content.assemble(("⏎", "bold"), " open a row · read-only: nothing is sent")


ACTIONS = {"pin": "pinned", "exclude": "excluded", "expand": "expanded"}  # the words for the row actions


def legend(read_only: bool = False) -> Content:
    return Content("\n").join([MARKS, READ_ONLY_KEYS if read_only else KEYS])


__all__ = ["ACTIONS", "legend"]
