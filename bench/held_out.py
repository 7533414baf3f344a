"""Benchmark: our defaults chosen by leave-one-session-out, and what they give on the session left out.

Run: `nice -n 10 .venv/bin/python bench/held_out.py [FILE.jsonl | DIR ...] [--jobs 2]` (default: the shared
logs in ../shared/transcripts and, when present, ../extra-transcripts: public logs kept out of the repository,
listed with their sources in docs/compaction.md).

For every session S: the idle policy's prior is made of the *other* sessions' waits (`idle_replay.prior_of`),
and the setting is chosen among `GRID` on the other sessions alone, by the rule a default must meet: the
cheapest (cost ÷ append-only, pooled) whose pooled coverage is ≥ 0.96 and no session's < 0.92; failing that,
the cheapest whose pooled coverage is ≥ 0.96; failing that, the one that covers most. S is then replayed with that setting: the held-out figures. Beside them, the default
(`CompactPolicy()`) on every session with the prior of the others, and the one-step neighbours of the default
(each knob one step either way: within 0.01 coverage and 0.02 cost, or the default sits on a cliff).
Prices: 0.05 reads + 5-minute TTL (`--price`), windows `--windows` (200k and 1M). Append-only that keeps warm
by the fixed rule (`none+warm`, tail included) is the second base.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tui_agent.core.compaction import CompactPolicy  # noqa: E402
from tui_agent.core.models import PRICE_MODELS  # noqa: E402
from tui_agent.core.recordings.coverage import Coverage  # noqa: E402
from tui_agent.core.recordings.recorded import load_recorded  # noqa: E402

SHARED = ROOT.parent / "shared" / "transcripts"
EXTRA = ROOT.parent / "extra-transcripts"

# the default and each knob one step either way (the cliff check), and the marks upward (on sessions not seen
# when compaction 4's marks were chosen, the high mark decided coverage more than anything else)
DEFAULT: dict = {}
STEPS = {"high_water": (0.75, 0.85), "low_water": (0.07, 0.13), "keep_for_use_share": (0.6, 0.8),
         "keep_recurring_share": (0.2, 0.4), "keep_own_words_share": (0.0, 0.2), "mask": (False,)}
GRID: dict[str, dict] = {"default": DEFAULT}
# chosen on the others, the cheapest setting that meets the target lands on it, and on the session left out a
# little below it (0.958 against 0.96 on 17 sessions): `--margin` asks the others for that much more coverage
MARGIN = 0.005
for knob, values in STEPS.items():
    for value in values:
        GRID[f"{knob} {value:g}"] = {knob: value}
GRID.update({
    "high 0.6 low 0.1 (compaction 4)": {"high_water": 0.6, "low_water": 0.1},
    "high 0.8 low 0.15": {"high_water": 0.8, "low_water": 0.15},
    "high 0.6": {"high_water": 0.6},
    "high 0.7": {"high_water": 0.7},
    "high 0.9": {"high_water": 0.9},
    "high 0.9 low 0.1": {"high_water": 0.9, "low_water": 0.1},
    "high 0.9 low 0.2": {"high_water": 0.9, "low_water": 0.2},
    # larger marks and budgets: on 246 sessions (the public logs of seven repositories), a third of what the
    # agent names next is in sessions whose recorded requests outgrew 200k (1M windows, up to 590k tokens)
    "low 0.2": {"low_water": 0.2},
    "low 0.3": {"low_water": 0.3},
    "low 0.5": {"low_water": 0.5},
    "high 0.9 low 0.3": {"high_water": 0.9, "low_water": 0.3},
    "high 0.9 low 0.5": {"high_water": 0.9, "low_water": 0.5},
    "high 0.95 low 0.5": {"high_water": 0.95, "low_water": 0.5},
    "budget 300k": {"budget_tokens": 300_000},  # the budget is bounded by the window: at 200k it is the default
    "budget 300k high 0.9 low 0.2": {"budget_tokens": 300_000, "high_water": 0.9, "low_water": 0.2},
    "budget 500k": {"budget_tokens": 500_000},
})


@dataclass
class Figures:
    """One setting on a set of sessions: costs pooled against both bases, coverage pooled and per session."""

    cost: float = 0.0
    base: float = 0.0
    warm: float = 0.0
    coverage: Coverage = field(default_factory=Coverage)
    per_session: list[tuple[str, float, float]] = field(default_factory=list)
    invalid: int = 0
    over: int = 0
    missing: int = 0

    def add(self, name: str, ours, none, warm) -> None:
        self.cost += ours.cost
        self.base += none.cost
        self.warm += warm.cost
        self.coverage.merge(ours.coverage)
        self.per_session.append((name, ours.cost / none.cost if none.cost else 0.0, ours.coverage.pooled))
        self.invalid += ours.invalid
        self.over += ours.over_window
        self.missing += ours.prompts_missing + ours.paths_missing

    def line(self) -> str:
        worst = min((c for _, _, c in self.per_session), default=1.0)
        return (f"cost {self.cost / self.base:.3f} of append-only, {self.cost / self.warm:.3f} of append-only kept "
                f"warm; coverage {self.coverage.pooled:.3f} pooled, worst session {worst:.3f}; invalid "
                f"{self.invalid}, over the window {self.over}, prompts/paths missing {self.missing}")

    def meets(self) -> bool:
        return self.meets_pooled() and all(c >= 0.92 for _, _, c in self.per_session)

    def meets_pooled(self) -> bool:
        return self.coverage.pooled >= 0.96 + MARGIN


def waits_of(path: Path) -> list[float]:
    """One session's waits after each turn ended (and the one that never did), read once for every fold."""
    from tui_agent.core.recordings.idle_replay import session_waits

    return session_waits(load_recorded(path))


def replay_one(path: Path, others: list[float], window: int, price_index: int, names: list[str],
               base: dict | None = None) -> tuple:
    """One session under each setting in `names`, its idle prior from the other sessions' waits (`others`):
    {setting: (ours, none, warm)}; `base`: policy fields every setting starts from (`--set`)."""
    from tui_agent.core.recordings.economics import replay
    from tui_agent.core.recordings.idle_replay import prior_of

    recorded = load_recorded(path)
    prior = prior_of(others)
    price = PRICE_MODELS[price_index]
    policy = replace(CompactPolicy(context_window=window, max_output_tokens=32_000, enabled=True), **(base or {}))
    bases = replay(recorded, ["none", "none+warm"], policy, price=price, prior=prior)
    out = {}
    for name in names:
        ours = replay(recorded, ["v2"], replace(policy, **GRID[name]), price=price, prior=prior)["v2"]
        out[name] = (ours, bases["none"], bases["none+warm"])
    return path.name, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--windows", default="200000,1000000")
    parser.add_argument("--price", type=int, default=1, help="index into 0.1 / 0.05+TTL / 0.025+TTL / 1h")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--margin", type=float, default=MARGIN, help="coverage asked of the others above 0.96")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=BOOL",
                        help="a CompactPolicy flag every setting starts from (e.g. islands_show_edits=true)")
    args = parser.parse_args()
    base = {field: value.lower() in ("1", "true", "yes") for field, value in (s.split("=", 1) for s in args.set)}
    globals()["MARGIN"] = args.margin
    files = sessions(args.paths or [SHARED, EXTRA])
    if len(files) < 2:
        print("leave-one-out needs two sessions or more", file=sys.stderr)
        return 1
    print(f"{len(files)} sessions: " + ", ".join(f.name[:40] for f in files))
    names = list(GRID)
    waits = dict(zip(files, _map(waits_of, files, args.jobs)))
    for window in (int(w) for w in args.windows.split(",")):
        jobs = [(f, [w for o in files if o != f for w in waits[o]], window, args.price, names, base) for f in files]
        results = dict(_run(jobs, args.jobs))
        report(files, results, names, window)
    return 0


def report(files: list[Path], results: dict, names: list[str], window: int) -> None:
    print(f"\n######## window {window:,}")
    held = Figures()
    for f in files:
        train = [o for o in files if o != f]
        chosen = choose(train, results, names)
        held.add(f.name, *results[f.name][chosen])
        print(f"  held out {f.name[:40]:40} chosen on the others: {chosen}")
    print(f"held-out (leave-one-out): {held.line()}")
    for name in names:
        every = Figures()
        for f in files:
            every.add(f.name, *results[f.name][name])
        per = "  ".join(f"{c:.3f}/{v:.3f}" for _, c, v in every.per_session)
        print(f"  {name:28} {every.line()} | {per}")


def choose(train: list[Path], results: dict, names: list[str]) -> str:
    """The cheapest setting that meets the coverage rule on `train` (else the one that covers most)."""
    figures = {}
    for name in names:
        fig = Figures()
        for f in train:
            fig.add(f.name, *results[f.name][name])
        figures[name] = fig
    # both coverage rules if any setting meets them; else the pooled one alone (no setting of the grid keeps
    # every one of 17 sessions at 0.92: the per-session rule would pick the most covering at any price)
    for rule in (Figures.meets, Figures.meets_pooled):
        meeting = [n for n in names if rule(figures[n])]
        if meeting:
            return min(meeting, key=lambda n: (figures[n].cost / figures[n].base, n != "default"))
    return max(names, key=lambda n: figures[n].coverage.pooled)


def sessions(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out += sorted(path.glob("*.jsonl"))
        elif path.is_file():
            out.append(path)
    return out


def _map(function, items: list, processes: int) -> list:
    if processes <= 1:
        return [function(item) for item in items]
    from multiprocessing import Pool

    with Pool(processes) as pool:
        return pool.map(function, items)


def _run(jobs: list[tuple], processes: int) -> list[tuple]:
    if processes <= 1:
        return [replay_one(*job) for job in jobs]
    from multiprocessing import Pool

    with Pool(processes) as pool:
        return pool.starmap(replay_one, jobs)


if __name__ == "__main__":
    raise SystemExit(main())
