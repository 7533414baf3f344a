"""The budget panel's legend (what each row mark means, and the row keys) and the words for its actions."""

from __future__ import annotations

from textual.content import Content

LEGEND = Content.assemble(
    ("▌", "$budget-bar"), "sent ", ("◆", "$budget-protected"), "newest ", ("✂", "bold $budget-truncated"), "cut ",
    ("▒", "bold $text-warning"), "masked ", ("·dropped", "italic $budget-dropped"), " ",
    ("Σ", "bold $text-secondary"), "summary", "\n",
    ("●", "bold $text-success"), "pinned ", ("⊘", "bold $text-error"), "excluded ", ("≡", "bold $text-primary"),
    "ledger ", ("┃", "bold $text-accent"), "cached ", ("≈", "bold"), "estimate", "\n",
    ("p", "bold"), " pin · ", ("x", "bold"), " exclude · ", ("e", "bold"), " expand · ", ("enter", "bold"), " open · ",
    ("v", "bold"), " events",
)
ACTIONS = {"pin": "pinned", "exclude": "excluded", "expand": "expanded"}
