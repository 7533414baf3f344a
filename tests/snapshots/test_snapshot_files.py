"""Every SVG under `__snapshots__/` belongs to a snapshot test that exists.

syrupy fails a run on a stale snapshot file (its test renamed or deleted) only when one process runs every
test: under pytest-xdist (the default run, `-n auto` in pyproject's addopts) each worker sees a part, and
syrupy leaves the check out. This test makes it from pytest's own collection of this folder, every marker
included, so a renamed test or a dropped parameter still fails the default run.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def collected_tests() -> set[str]:
    """`<module>/<test name>` for every test pytest collects here (`-m ""`: slow ones too)."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-n0", "-m", "",
                           str(HERE.relative_to(ROOT))], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    names = set()
    for line in done.stdout.splitlines():
        path, sep, name = line.partition("::")
        if sep:
            names.add(f"{Path(path).stem}/{name}")
    return names


def snapshot_owner(svg: Path) -> str:
    """The test an SVG was written by: its module folder and file name (`name.1.svg`: a second snapshot)."""
    return svg.parent.name + "/" + re.sub(r"\.\d+$", "", svg.stem)


def test_every_snapshot_file_has_its_test() -> None:
    svgs = sorted((HERE / "__snapshots__").rglob("*.svg"))
    assert svgs, "no snapshot files found"
    tests = collected_tests()
    stale = [str(svg.relative_to(HERE)) for svg in svgs if snapshot_owner(svg) not in tests]
    assert stale == [], f"snapshot files with no test (delete them, or rerun with --snapshot-update): {stale}"


def test_the_owner_of_a_snapshot_file_is_its_test() -> None:
    folder = HERE / "__snapshots__" / "test_screens"
    assert snapshot_owner(folder / "test_permission_modal[bash].svg") == "test_screens/test_permission_modal[bash]"
    assert snapshot_owner(folder / "test_selected_row.1.svg") == "test_screens/test_selected_row"
