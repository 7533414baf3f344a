"""`replay --fit-calls N`: the token ruler fitted on the first N calls only (the watch's fixed ruler)."""

from __future__ import annotations

import json

from tui_agent.faces.cli import main
from tui_agent.core.recordings.recorded import load_recorded
from tests.shared import SMALL_LOG

SMALL = SMALL_LOG  # the small real log, else the long synthetic one (tests/shared.py)


def test_the_ruler_is_fitted_on_the_first_calls_only(tmp_path):
    whole = load_recorded(SMALL)
    early = load_recorded(SMALL, fit_calls=8)
    assert early.model != whole.model  # this log's later calls move the fit
    cut = tmp_path / "first.jsonl"  # the same first 8 calls and more after them: the same ruler
    cut.write_bytes(b"".join(SMALL.read_bytes().splitlines(keepends=True)[:60]))
    assert len(load_recorded(cut).calls) > 8 and load_recorded(cut, fit_calls=8).model == early.model


def test_replay_json_fit_calls(capsys):
    assert main(["replay", str(SMALL), "--json", "--no-memory", "--fit-calls", "8"]) == 0
    model = json.loads(capsys.readouterr().out)["report"]["token_model"]
    early = load_recorded(SMALL, fit_calls=8).model
    assert (model["baseline"], model["ratio"]) == (early.baseline, early.ratio)
    assert main(["replay", str(SMALL), "--json", "--fit-calls", "0"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "error: --fit-calls must be at least 1 (got 0)"
