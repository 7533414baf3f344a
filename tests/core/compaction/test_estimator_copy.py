"""`RequestEstimator.copy` (a replay's checkpoints) is what `copy.deepcopy` makes, and independent of it."""

from __future__ import annotations

import copy

from tui_agent.core.compaction.estimator import RequestEstimator


def estimator() -> RequestEstimator:
    est = RequestEstimator(3_000)
    for i in range(6):
        est.add((i, 0), 400 + 50 * i)
    est.observe(9_000)
    est.swap((2, 0), (2, 1), 120)
    est.add((6, 0), 700)
    est.remove((0, 0))
    return est


def test_a_copy_equals_a_deep_copy_and_goes_its_own_way() -> None:
    est = estimator()
    twin, deep = est.copy(), copy.deepcopy(est)
    assert vars(twin) == vars(deep) == vars(est)
    twin.add((7, 0), 900)
    twin.observe(11_000)
    deep.add((7, 0), 900)
    deep.observe(11_000)
    assert vars(twin) == vars(deep) and vars(est) != vars(twin)
    assert est.estimate() == estimator().estimate()  # the original did not move
