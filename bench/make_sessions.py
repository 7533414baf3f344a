"""Make N Claude Code sessions from real ones, for `tui-agent report` at scale (`bench/bench_report.py`).

Run: `.venv/bin/python bench/make_sessions.py 1000 /tmp/sessions [--seed 7] [--from DIR]` (default sources:
../shared/transcripts). Each made session is one of the sources, shuffled, cut and renamed: a source drawn
at random, cut after a random share of its lines (15 % to all of them), moved a random number of whole days
back (its pauses stay what they were, so the cache's clock sees the same session), given a new session id
(in its file name and its records) and put in one of a dozen project folders, laid out as
`<out>/projects/<project folder>/<session id>.jsonl`, as Claude Code writes them. The same seed makes the
same files. `--broken K` adds K files that are not sessions (binary bytes, an empty file, JSON that is no
log), which a report must list with one line each and go on.
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import uuid
from pathlib import Path

DEFAULT_SOURCES = Path(__file__).resolve().parents[1].parent / "shared" / "transcripts"
PROJECTS = 12
MAX_DAYS_BACK = 90


def _shift(stamp: str, days: int) -> str:
    try:
        moment = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    moved = moment - datetime.timedelta(days=days)
    return moved.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def remade(lines: list[str], rng: random.Random) -> tuple[str, list[str]]:
    """(the new session id, the cut, moved and renamed lines) of one source's `lines`."""
    session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    keep = max(20, round(len(lines) * rng.uniform(0.15, 1.0)))
    days = rng.randint(0, MAX_DAYS_BACK)
    out = []
    for line in lines[:keep]:
        try:
            record = json.loads(line)
        except ValueError:
            out.append(line)  # a broken line stays broken
            continue
        if isinstance(record, dict):
            if isinstance(record.get("timestamp"), str):
                record["timestamp"] = _shift(record["timestamp"], days)
            if "sessionId" in record:
                record["sessionId"] = session
        out.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    return session, out


def make_sessions(count: int, out: Path, sources: list[Path], seed: int = 7, broken: int = 0) -> list[Path]:
    rng = random.Random(seed)
    texts = [source.read_text(encoding="utf-8").splitlines() for source in sources]
    made = []
    for _ in range(count):
        session, lines = remade(texts[rng.randrange(len(texts))], rng)
        folder = out / "projects" / f"-home-dev-project-{rng.randrange(PROJECTS)}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{session}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        made.append(path)
    samples = [bytes(rng.getrandbits(8) for _ in range(512)), b"", b'{"not": "a session log"}\n']
    for k in range(broken):
        path = out / "projects" / "-home-dev-broken" / f"broken-{k}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(samples[k % len(samples)])
        made.append(path)
    return made


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--broken", type=int, default=0)
    parser.add_argument("--from", dest="sources", type=Path, default=DEFAULT_SOURCES)
    args = parser.parse_args()
    sources = sorted(args.sources.glob("*.jsonl"))
    if not sources:
        parser.error(f"no *.jsonl in {args.sources}")
    made = make_sessions(args.count, args.out, sources, args.seed, args.broken)
    size = sum(p.stat().st_size for p in made)
    print(f"{len(made)} files, {size / 1e6:.0f} MB under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
