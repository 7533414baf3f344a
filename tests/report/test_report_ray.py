"""The same report on a Ray cluster (`--ray`) writes the table of a local run, byte for byte. Slow: it starts
a Ray instance on this machine (`--ray local`); skipped where Ray (the `[ray]` extra) is not installed."""

from __future__ import annotations

import importlib.util
import shutil

import pytest

from tests.shared import ROOT, SYNTHETIC_LONG
from tui_agent.faces.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                                                   reason="Ray is not installed (pip install 'tui-agent[ray]').")]


def test_a_ray_run_writes_the_bytes_of_a_local_run(tmp_path, monkeypatch, capsys):
    store = tmp_path / "store"
    store.mkdir()
    for source in (SYNTHETIC_LONG, ROOT / "tests" / "data" / "codex-rollout.jsonl",
                   ROOT / "tests" / "data" / "synthetic-claude-code.jsonl"):
        shutil.copy(source, store / source.name)
    (store / "broken.jsonl").write_bytes(b"\x00 no log")
    monkeypatch.setenv("TUI_AGENT_CACHE_DIR", str(tmp_path / "cache-local"))
    assert main(["report", str(store), "--jobs", "1", "--table", str(tmp_path / "local.parquet")]) == 0
    monkeypatch.setenv("TUI_AGENT_CACHE_DIR", str(tmp_path / "cache-ray"))  # nothing kept: Ray replays all
    assert main(["report", str(store), "--ray", "local", "--table", str(tmp_path / "ray.parquet")]) == 0
    assert (tmp_path / "ray.parquet").read_bytes() == (tmp_path / "local.parquet").read_bytes()
    assert "broken.jsonl" in capsys.readouterr().out


def test_an_unreachable_cluster_is_one_line(tmp_path, capsys):
    shutil.copy(SYNTHETIC_LONG, tmp_path / "a.jsonl")
    assert main(["report", str(tmp_path), "--no-cache", "--ray", "127.0.0.1:1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: cannot reach the Ray cluster at 127.0.0.1:1")
