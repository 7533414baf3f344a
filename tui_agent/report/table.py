"""The report's per-session table, for DuckDB or a spreadsheet: Parquet (pyarrow, the `[report]` extra) or CSV.

One row per session file, sorted by path, with fixed columns in a fixed order and types (a session that
could not be read has its `error` and empty figures), so the same sessions give the same bytes whether
they were replayed here, on a Ray cluster or read from the cache. Money is in USD at the recorded model's
list prices (empty where the price is unknown); `<strategy>_units` is the same bill in units of one
uncached input token, for a model without a price.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.core.recordings.recorded_spend import MISS_REASONS
from tui_agent.core.recordings.session_figures import PEERS, SessionFigures, StrategyFigures

STRATEGIES = ("append_only", "ours", *PEERS.values())


@dataclass(frozen=True)
class Row:
    path: str
    figures: SessionFigures | None
    error: str = ""


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # "str" | "int" | "float" | "bool"
    value: Callable[[Row], Any]  # None: empty


Getter = Callable[[SessionFigures], Any]
StrategyGetter = Callable[[SessionFigures, StrategyFigures], Any]


def _of(getter: Getter) -> Callable[[Row], Any]:
    return lambda row: getter(row.figures) if row.figures is not None else None


def _strategy_of(name: str, getter: StrategyGetter) -> Callable[[Row], Any]:
    def value(row: Row) -> Any:
        figures = row.figures
        strategy = figures.strategy(name) if figures is not None else None
        return getter(figures, strategy) if figures is not None and strategy is not None else None

    return value


def _pooled(wanted: int, present: int) -> float:
    return present / wanted if wanted else 1.0


def _field(name: str) -> Getter:
    return lambda f: getattr(f, name)


def _miss(i: int, which: str) -> Getter:
    if which == "usd":
        return lambda f: f.miss_usd[i] if f.priced else None
    return lambda f: (f.miss_calls if which == "calls" else f.miss_tokens)[i]


def _plain(field: str) -> StrategyGetter:
    return lambda f, s: getattr(s, field)


def _usd(field: str) -> StrategyGetter:
    return lambda f, s: f.usd(getattr(s, field))


def columns() -> list[Column]:
    out = [Column("path", "str", lambda row: row.path), Column("session", "str", lambda row: Path(row.path).name),
           Column("error", "str", lambda row: row.error)]
    for name, kind in (("agent", "str"), ("model", "str"), ("started", "str"), ("ended", "str"), ("calls", "int"),
                       ("messages", "int"), ("skipped_lines", "int"), ("unit_usd", "float"), ("priced", "bool"),
                       ("input_usd", "float"), ("output_usd", "float"), ("idle_rewrites_usd", "float"),
                       ("uncached_tokens", "int"), ("cache_read_tokens", "int"), ("cache_write_tokens", "int"),
                       ("output_tokens", "int")):
        out.append(Column(name, kind, _of(_field(name))))
    for i, reason in enumerate(MISS_REASONS):
        out += [Column(f"miss_{reason}_{which}", kind, _of(_miss(i, which)))
                for which, kind in (("calls", "int"), ("tokens", "int"), ("usd", "float"))]
    for name in ("agent_compactions", "forgot_prompts", "forgot_paths", "prompts_before", "paths_before",
                 "coverage_wanted", "coverage_present"):
        out.append(Column(name, "int", _of(_field(name))))
    out.append(Column("coverage", "float", _of(lambda f: _pooled(f.coverage_wanted, f.coverage_present))))
    for strategy in STRATEGIES:
        out += _strategy_columns(strategy)
    return out


def _strategy_columns(name: str) -> list[Column]:
    out = [Column(f"{name}_units", "float", _strategy_of(name, _plain("units")))]
    for field in ("units", "conversation", "idle_rewrites", "summaries", "pings_units", "spared_units"):
        label = {"units": "usd", "pings_units": "pings_usd", "spared_units": "spared_usd"}.get(field, f"{field}_usd")
        out.append(Column(f"{name}_{label}", "float", _strategy_of(name, _usd(field))))
    for field in ("pings", "expired", "events", "summary_calls", "coverage_wanted", "coverage_present",
                  "prompts_missing", "paths_missing", "over_window"):
        out.append(Column(f"{name}_{field}", "int", _strategy_of(name, _plain(field))))
    out.append(Column(f"{name}_coverage", "float",
                      _strategy_of(name, lambda f, s: _pooled(s.coverage_wanted, s.coverage_present))))
    for field in ("missed_idle_tokens", "missed_compaction_tokens", "peak_tokens"):
        out.append(Column(f"{name}_{field}", "float", _strategy_of(name, _plain(field))))
    return out


def write_table(rows: Sequence[Row], path: Path) -> None:
    """`.parquet` (needs pyarrow) or `.csv`, by the file's suffix; raises ValueError for another one and
    RuntimeError (one line) when pyarrow is missing."""
    ordered = sorted(rows, key=lambda row: row.path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        _write_csv(ordered, path)
    elif suffix == ".parquet":
        _write_parquet(ordered, path)
    else:
        raise ValueError(f"--table {path}: write a .parquet or a .csv file")


def _write_csv(rows: Sequence[Row], path: Path) -> None:
    cols = columns()
    with open(path, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow([c.name for c in cols])
        for row in rows:
            writer.writerow(["" if (v := c.value(row)) is None else repr(v) if c.kind == "float" else v
                             for c in cols])


ARROW_TYPES = {"str": "string", "int": "int64", "float": "float64", "bool": "bool_"}


def _write_parquet(rows: Sequence[Row], path: Path) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise RuntimeError("--table FILE.parquet needs pyarrow: pip install 'tui-agent[report]' (or write a .csv)") from None
    cols = columns()
    schema = pa.schema([(c.name, getattr(pa, ARROW_TYPES[c.kind])()) for c in cols])
    table = pa.table({c.name: [c.value(row) for row in rows] for c in cols}, schema=schema)
    pq.write_table(table, path, compression="zstd")
