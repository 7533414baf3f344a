"""The Claude Code stand-in's summary names the most-mentioned identifiers; among names mentioned as often, the
order must not depend on the process (a set's order follows its string hashing): the economics figures of two
runs of the same code were 0.977 and 0.979 before."""

from __future__ import annotations

import os
import subprocess
import sys

from tui_agent.core.messages import user_text
from tui_agent.core.recordings.peers import summary_text

NAMES = ["alpha_one", "beta_two", "gamma_three", "delta_four", "epsilon_five", "zeta_six", "eta_seven", "theta_eight"]


def test_names_mentioned_as_often_come_in_one_order():
    text = summary_text([user_text(" ".join(reversed(NAMES))), user_text("beta_two again")])
    named = text.split("Key names: ", 1)[1].split(", ")
    assert named == ["beta_two", *sorted(n for n in NAMES if n != "beta_two")]


def test_two_processes_with_different_string_hashing_write_the_same_summary():
    code = ("from tui_agent.core.messages import user_text; from tui_agent.core.recordings.peers import summary_text; "
            f"print(summary_text([user_text({' '.join(NAMES)!r})]))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(outs) == 1
