"""The token estimator: the last real count plus what changed since, measured per outbound message.

chars/4 is a fine guess for one message and a poor one for a whole request (real tokens run 1.2–1.6×
chars/4 on code and JSON). So the estimate is anchored on what the API reported: each call's real input
size is split between the messages that were new in that request (in proportion to their chars/4), and
those measured sizes are reused as long as the messages are sent unchanged. After a compaction event the
estimate is the last real count, less the measured size of what left, plus the new parts at the learned
ratio. The system+tools baseline is kept apart from the messages' share, so a ratio learned on a large
request never rescales it.

Every update is O(changed messages): a call with no event costs nothing per old message.
"""

from __future__ import annotations

import copy
import math
from typing import Hashable

MIN_RATIO, MAX_RATIO = 0.5, 3.0
# the tag of the recap's unit (its size is learned like any message's); states saved before the recap had its name
# called it "ledger" and their token export holds that tag (`restore` reads it as the recap's)
RECAP_UNIT = "recap"
OLD_RECAP_UNIT = "ledger"
RATIO_MIN_EVIDENCE = 200  # estimated tokens of new content needed before a call's ratio is trusted


class RequestEstimator:
    """Sizes of the units (outbound messages) of the current request; `estimate()` of the whole request."""

    def __init__(self, baseline_tokens: int) -> None:
        self.baseline_estimate = max(int(baseline_tokens), 0)  # chars/4 of system + tools
        self.baseline = float(self.baseline_estimate)  # in real tokens once calibrated
        self.ratio = 1.0  # real tokens per estimated token, learned from usage
        self.observed = False
        self.last_real: int | None = None
        self._units: dict[Hashable, int] = {}  # unit → chars/4 estimate, for the units in the request
        self._pending: dict[Hashable, int] = {}  # the units not measured yet (new since the last usage)
        self._measured: dict[Hashable, float] = {}  # unit → real tokens (measured units only)
        self._sum_measured = 0.0
        self._sum_unmeasured = 0  # chars/4 of the units not measured yet
        # real tokens and chars/4 of all new content measured so far: messages tokenize like the messages
        # before them (better than one call's ratio, which swings with the kind of content)
        self._num = 0.0
        self._den = 0.0

    def copy(self) -> RequestEstimator:
        """An independent copy, what `copy.deepcopy` makes (the units are tuples of numbers, the sizes
        numbers: only the three dicts need copying) at a fraction of its cost (a replay's checkpoints)."""
        twin = copy.copy(self)
        twin._units, twin._pending, twin._measured = dict(self._units), dict(self._pending), dict(self._measured)
        return twin

    # -- the request's composition ------------------------------------------------------------
    def add(self, unit: Hashable, estimate: int) -> None:
        if unit in self._units:
            self.remove(unit)
        self._units[unit] = estimate
        self._pending[unit] = estimate
        self._sum_unmeasured += estimate

    def remove(self, unit: Hashable) -> None:
        estimate = self._units.pop(unit, None)
        if estimate is None:
            return
        measured = self._measured.pop(unit, None)
        if measured is None:
            self._pending.pop(unit, None)
            self._sum_unmeasured -= estimate
        else:
            self._sum_measured -= measured

    def swap(self, old: Hashable, new: Hashable, estimate: int) -> None:
        """Unit `old` is replaced by `new` (the same message, cut or masked): a measured message's new form
        is sized at the message's own measured rate, not the request's average (a cut copy tokenizes like
        the original; at the average rate a cut could seem to grow a request the API had counted small)."""
        old_estimate = self._units.get(old)
        measured = self._measured.get(old)
        self.remove(old)
        if measured is None or not old_estimate:
            self.add(new, estimate)
            return
        if new in self._units:
            self.remove(new)
        self._units[new] = estimate
        size = measured * estimate / old_estimate
        self._measured[new] = size
        self._sum_measured += size

    def clear(self) -> None:
        self._units.clear()
        self._pending.clear()
        self._measured.clear()
        self._sum_measured = 0.0
        self._sum_unmeasured = 0

    def measured(self) -> dict[Hashable, float]:
        """A copy of the measured sizes (a request laid out again keeps them for the units still sent)."""
        return dict(self._measured)

    def reuse(self, units: list[Hashable], saved: dict[Hashable, float]) -> None:
        """Sizes measured before a re-layout, back on the units that are still (unmeasured) in the request."""
        for unit in units:
            if unit not in saved or unit not in self._pending:
                continue
            self._measured[unit] = saved[unit]
            self._sum_measured += saved[unit]
            self._sum_unmeasured -= self._pending.pop(unit)

    def set_baseline(self, baseline_tokens: int) -> None:
        """The system prompt or tools changed: move the baseline by the difference (scaled)."""
        delta = max(int(baseline_tokens), 0) - self.baseline_estimate
        self.baseline_estimate += delta
        self.baseline += delta * self.ratio

    # -- estimates ----------------------------------------------------------------------------
    def size(self, unit: Hashable) -> float:
        measured = self._measured.get(unit)
        return measured if measured is not None else self._units.get(unit, 0) * self.ratio

    def size_of(self, estimate: int) -> float:
        """Real tokens of new content with this chars/4 estimate, at the learned ratio."""
        return estimate * self.ratio

    def messages_estimate(self) -> float:
        return self._sum_measured + self._sum_unmeasured * self.ratio

    def estimate(self) -> int:
        return round(self.baseline + self.messages_estimate())

    # -- learning from the API ----------------------------------------------------------------
    def observe(self, real_tokens: int) -> None:
        """The API's input size (input + cache write + cache read) of the request as it stands now."""
        if real_tokens <= 0:
            return
        pending, self._pending = self._pending, {}
        new_est = sum(pending.values())
        if not self.observed:
            # One number, two unknowns (baseline, messages): assume they tokenize alike, once.
            total_est = self.baseline_estimate + new_est
            self.ratio = _clamp(real_tokens / total_est) if total_est else 1.0
            self.baseline = self.baseline_estimate * self.ratio
        leftover = real_tokens - self.baseline - self._sum_measured
        if new_est > 0 and leftover > 0:
            if self.observed and new_est >= RATIO_MIN_EVIDENCE:
                # an odd call (content the log does not show) counts as a bounded one
                self._num += min(max(leftover, MIN_RATIO * new_est), MAX_RATIO * new_est)
                self._den += new_est
                self.ratio = _clamp(self._num / self._den)
            share = leftover / new_est
            for unit, est in pending.items():
                self._measured[unit] = est * share
            self._sum_measured += leftover
            self._sum_unmeasured -= new_est
        else:
            # The API counted no more than we already knew (a changed request, stripped thinking):
            # the messages we measured were smaller than we thought; the baseline stays as it is.
            for unit, est in pending.items():
                self._measured[unit] = 0.0
            self._sum_unmeasured -= new_est
            room = real_tokens - self.baseline
            if self._sum_measured > 0 and room > 0:
                factor = room / self._sum_measured
                for unit in self._measured:
                    self._measured[unit] *= factor
                self._sum_measured = room
        self.observed = True
        self.last_real = real_tokens

    # -- persistence --------------------------------------------------------------------------
    def export(self) -> dict:
        """JSON-safe state, with the measured size of each unit of the request (units are tuples)."""
        return {"baseline": self.baseline, "baseline_estimate": self.baseline_estimate, "ratio": self.ratio,
                "observed": self.observed, "last_real": self.last_real, "num": self._num, "den": self._den,
                "measured": [[list(unit) if isinstance(unit, tuple) else unit, size]
                             for unit, size in self._measured.items()]}

    def restore(self, data: dict) -> None:
        """What `export` saved. Each number must be a finite number in bounds (`saved`): a journal's string
        of 4,000 nines became an infinite baseline, and every estimate after it an OverflowError."""
        self.baseline = saved(data.get("baseline", self.baseline))
        self.baseline_estimate = int(saved(data.get("baseline_estimate", self.baseline_estimate)))
        self.ratio = _clamp(saved(data.get("ratio", 1.0)))
        self.observed = bool(data.get("observed", False))
        last_real = data.get("last_real")
        self.last_real = None if last_real is None else int(saved(last_real))
        self._num = saved(data.get("num", 0.0))
        self._den = saved(data.get("den", 0.0))
        for unit, size in data.get("measured", []):
            key = tuple(unit) if isinstance(unit, list) else unit
            if isinstance(key, tuple) and key and key[0] == OLD_RECAP_UNIT:  # saved before the recap's rename
                key = (RECAP_UNIT, *key[1:])
            estimate = self._pending.pop(key, None)
            if estimate is None:
                continue  # not in the request any more
            self._measured[key] = saved(size)
            self._sum_measured += saved(size)
            self._sum_unmeasured -= estimate


SAVED_LIMIT = 1e15  # tokens and sums of them: far above any session, far below float trouble


def saved(value: object) -> float:
    """A number read back from a saved state: an int or a float (not text, not a flag), finite, from 0 to
    `SAVED_LIMIT`; else ValueError (the state is refused with a warning, the plan made from the history)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"a saved {type(value).__name__} where a number belongs")
    if isinstance(value, int) and not 0 <= value <= SAVED_LIMIT:  # (before float(): a huge int overflows it)
        raise ValueError("a saved number out of range")
    if not (math.isfinite(value) and 0 <= value <= SAVED_LIMIT):
        raise ValueError("a saved number out of range")
    return float(value)


def _clamp(ratio: float) -> float:
    return min(max(ratio, MIN_RATIO), MAX_RATIO)
