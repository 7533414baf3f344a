"""Write the public session logs of `bench/sessions.tsv` from local clones of their repositories.

Run: `.venv/bin/python bench/gather_sessions.py CLONES_DIR [--set extra|more|all] [--out DIR]`. CLONES_DIR holds
one clone per repository, named `owner+name` or `owner/name` (a bare or mirror clone will do: the logs are read
by blob id with `git cat-file`, whatever branch or ref holds them; the entire.io checkpoint logs live on
`entire/checkpoints/*` refs, so fetch all refs). The files go to `../extra-transcripts` (the set the defaults
were first chosen on) and `../more-transcripts` (every other session of those repositories), each the blob
byte for byte, checked with `git hash-object`; `bench/economics.py` and `bench/held_out.py` take them as paths.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "bench" / "sessions.tsv"
OUT = {"extra": ROOT.parent / "extra-transcripts", "more": ROOT.parent / "more-transcripts"}


def rows(table: Path = TABLE) -> list[dict[str, str]]:
    """The table's rows (`file`, `repository`, `blob`, `set`), comments left out."""
    lines = [line for line in table.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    head, *body = (line.split("\t") for line in lines)
    return [dict(zip(head, row)) for row in body]


def clone_of(clones: Path, repository: str) -> Path | None:
    for name in (repository.replace("/", "+"), repository):
        for candidate in (clones / name / "repo", clones / name):
            if candidate.is_dir():
                return candidate
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clones", type=Path)
    parser.add_argument("--set", choices=("extra", "more", "all"), default="all")
    parser.add_argument("--out", type=Path, help="one folder for every file (default: ../extra-transcripts, ../more-transcripts)")
    parser.add_argument("--table", type=Path, default=TABLE)
    args = parser.parse_args()
    written = missing = 0
    for row in rows(args.table):
        if args.set != "all" and row["set"] != args.set:
            continue
        clone = clone_of(args.clones, row["repository"])
        out_dir = args.out or OUT[row["set"]]
        data = None
        if clone is not None:
            found = subprocess.run(["git", "-C", str(clone), "cat-file", "blob", row["blob"]], capture_output=True)
            data = found.stdout if found.returncode == 0 else None
        if data is None:
            print(f"missing: {row['file']} (blob {row['blob']} of {row['repository']})", file=sys.stderr)
            missing += 1
            continue
        out_dir.mkdir(parents=True, exist_ok=True)
        target = out_dir / row["file"]
        target.write_bytes(data)
        check = subprocess.run(["git", "hash-object", str(target)], capture_output=True, text=True).stdout.strip()
        if check != row["blob"]:
            print(f"changed on the way: {row['file']}", file=sys.stderr)
            missing += 1
            continue
        written += 1
    print(f"{written} written, {missing} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
