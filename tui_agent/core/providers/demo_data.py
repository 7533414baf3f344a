"""The data files of a repository, as the demo model finds and reads them ("read the data files").

Why: "what is in this repo? read the data files" once listed the folder and read none. Data is what the
repository holds by extension (csv, tsv, json, yaml, parquet, …) or by folder (`data/`, `datasets/`), less
what is plainly configuration (package.json, CI workflows, dotfiles). The demo looks with two Globs, reads
the head of each text one (as a model pages a table), never a binary one (Read shows only text: it says so),
and its answer counts them as they are: found, read, binary, left.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui_agent.core.formats import plural
from tui_agent.core.providers.demo_answers import LINE_NUMBER
from tui_agent.core.providers.demo_turn import Turn, lost
from tui_agent.core.tools.glob import NO_FILES

TEXT_DATA = ("csv", "tsv", "json", "jsonl", "ndjson", "yaml", "yml", "xml")
BINARY_DATA = ("parquet", "feather", "arrow", "avro", "orc", "xlsx", "xls", "npy", "npz", "h5", "hdf5", "pkl",
               "pickle", "sqlite", "db")
BY_EXTENSION = {"pattern": "**/*.{" + ",".join(TEXT_DATA + BINARY_DATA) + "}"}
BY_FOLDER = {"pattern": "**/{data,datasets,dataset}/**/*"}
CONFIG_NAMES = ("package.json", "package-lock.json", "composer.json", "renovate.json", "tsconfig", "jsconfig",
                "docker-compose", "compose.y", "mkdocs.y", "codecov.y", "tox.ini", "app.json", "manifest.json")
CONFIG_FOLDERS = (".github/", ".gitlab/", ".circleci/", ".vscode/", ".idea/", "node_modules/", ".devcontainer/")
MAX_READS = 6
DATA_HEAD = 20  # a table's header and first rows: what it holds, not all of it


def is_data(path: str) -> bool:
    """Data by extension or folder, not configuration."""
    lower = path.lower()
    name = Path(lower).name
    if name.startswith(".") or any(f"/{folder}" in f"/{lower}" for folder in CONFIG_FOLDERS):
        return False
    if name.startswith(CONFIG_NAMES) or ".config." in name or "-config." in name:
        return False
    in_folder = any(part in ("data", "datasets", "dataset") for part in Path(lower).parts[:-1])
    return in_folder or Path(lower).suffix.lstrip(".") in TEXT_DATA + BINARY_DATA


OTHER_BINARY = ("xz", "gz", "bz2", "zst", "zip", "tar", "7z", "png", "jpg", "jpeg", "gif", "webp", "pdf", "bin", "so")


def binary(path: str) -> bool:
    """Binary by its extension (a table format, an archive, an image): Read would refuse it."""
    return Path(path).suffix.lower().lstrip(".") in BINARY_DATA + OTHER_BINARY


def data_files(turn: Turn) -> list[str] | None:
    """The data files the two Globs found (data folders first, then by path), or None before they ran."""
    listed = [text for name, i, text, e in turn.calls if name == "Glob" and not e and i in (BY_EXTENSION, BY_FOLDER)]
    if not listed:
        return None
    paths = {line.strip() for text in listed for line in text.splitlines()
             if line.strip() and line.strip() != NO_FILES and not line.startswith(("(", "…", "["))}
    found = [p for p in paths if is_data(p)]
    return sorted(found, key=lambda p: ("data" not in Path(p.lower()).parts[:-1], p))


def look_for_data() -> list[tuple[str, dict[str, Any]]]:
    return [("Glob", dict(BY_EXTENSION)), ("Glob", dict(BY_FOLDER))]


def data_reads(turn: Turn) -> list[tuple[str, dict[str, Any]]]:
    """The Reads still to make: the heads of the first text data files not read in this turn (a head at
    most: `DATA_HEAD` lines fit the demo's window six times over, however long the file)."""
    found = data_files(turn) or []
    read = {str(i.get("file_path")) for name, i, _t, _e in turn.calls if name == "Read"}  # held: a placeholder is no read
    wanted = [p for p in found if not binary(p)][:MAX_READS]
    return [("Read", {"file_path": p, "limit": DATA_HEAD}) for p in wanted if p not in read]


def data_lines(turn: Turn) -> list[str]:
    """The answer's data section: each file read (its first line: the header of a table), what was not read
    and why, counted as it is."""
    found = data_files(turn)
    if found is None:
        return []
    if not found:
        return ["", "I found no data files here (I looked for " + ", ".join(TEXT_DATA[:4] + BINARY_DATA[:1])
                + "… files and data/ folders)."]
    held = {str(i.get("file_path")): (text, error) for name, i, text, error in turn.calls if name == "Read"}
    read = [p for p in found if p in held and not held[p][1] and not lost("Read", held[p][0])]
    gone = [p for p in found if p in turn.reads() and p not in read]
    failed = [p for p in found if p in held and held[p][1] and p not in gone]
    skipped = [p for p in found if binary(p) and p not in failed]
    left = [p for p in found if p not in read and p not in gone and p not in skipped and p not in failed]
    lines = ["", f"Data files: {plural(len(found), 'file')} found, {len(read) + len(gone)} read (the first "
             f"{DATA_HEAD} lines of each):"]
    for path in read:
        rows = [LINE_NUMBER.sub("", line) for line in held[path][0].splitlines() if LINE_NUMBER.match(line)]
        head = rows[0].strip()[:100] if rows else ""
        lines.append(f"- `{path}` ({plural(len(rows), 'line')} shown)" + (f": {head}" if head else ""))
    lines += [f"- `{p}`: read, since taken out of my context by compaction (the panel shows it)" for p in gone]
    lines += [f"- `{p}`: could not be read ({held[p][0].splitlines()[0][:100] if held[p][0] else 'an error'})"
              for p in failed]
    if skipped:
        lines.append(f"Not read, binary ({plural(len(skipped), 'file')}; Read shows only text): "
                     + ", ".join(f"`{p}`" for p in skipped[:8]) + (" …" if len(skipped) > 8 else "") + ".")
    if left:
        lines.append(f"Not read, past the first {MAX_READS} ({plural(len(left), 'file')}): "
                     + ", ".join(f"`{p}`" for p in left[:8]) + (" …" if len(left) > 8 else "") + ".")
    return lines


__all__ = ["BY_EXTENSION", "BY_FOLDER", "data_files", "data_lines", "data_reads", "is_data", "look_for_data"]
