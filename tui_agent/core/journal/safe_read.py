"""Reading journal files that may be hostile or broken, without letting one of them stop a listing.

The data dir is shared by every workspace: one bad file there must not break `sessions`, `--continue`,
`export` or `replay` for all of them. So a journal is read only when it is a regular file under a size
cap (a `*.jsonl` FIFO would hang the read, a symlink to `/dev/zero` never ends), and each line is
parsed so that every way it can fail is a `ValueError` the reader turns into a skipped line: JSON
nested 100,000 deep (RecursionError), a number no JSON writer makes (`NaN`, `Infinity`, `1e309`: Python
reads them as floats that break every sum after them), and strings holding a lone surrogate (`"\\ud800"`
is valid JSON but cannot be printed or sent as UTF-8: it is replaced by `?`). What a record's fields must
hold is checked by the reader (`check_message`, `out_of_bounds` and the typed field helpers here).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from tui_agent.core.config_files import read_bytes_capped
from tui_agent.core.journal.records import JournalError

MAX_JOURNAL_BYTES = 512 * 1024 * 1024  # far beyond a real session (they are a few MB); bounds memory


def read_journal_bytes(path: Path | str, limit: int = MAX_JOURNAL_BYTES) -> bytes:
    """The bytes of a journal file: a regular file under `limit`, else a one-line `JournalError`."""
    try:
        data = read_bytes_capped(path, limit)
    except OSError as error:  # config_files.UnreadableFile says why in words
        raise JournalError(f"cannot read session file {path}: {error.strerror or error}") from None
    if data is None:
        raise JournalError(f"cannot read session file {path}: it does not exist")
    return data


class NotFinite(ValueError):
    """A `NaN`, `Infinity` or a float too big for a float (`1e309`) in a line."""


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotFinite(f"the number {text[:20]} is out of range")
    return value


def _constant(name: str) -> float:
    raise NotFinite(f"{name} is not a number")


_DECODER = json.JSONDecoder(parse_float=_finite, parse_constant=_constant)


def loads_line(line: bytes) -> Any:
    """One JSON line; `ValueError` for anything that is not readable JSON (bad UTF-8, too deep, a number
    that is not finite: `NotFinite`)."""
    try:
        value = _DECODER.decode(line.decode("utf-8"))
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8 (byte {error.start})") from None
    if b"\\ud" in line or b"\\uD" in line:  # the only way a lone surrogate gets in: an escape
        value = without_lone_surrogates(value)
    return value


def loads_lines(lines: list[bytes]) -> list[Any]:
    """`loads_line` of each line: its value, or the `ValueError` it raised. The lines are parsed as one JSON
    array when they can be (a journal of 200,000 small records: a third of the time of one parse per line);
    any line that breaks that (or holds two values) sends them all through `loads_line` one by one."""
    try:
        values = _DECODER.decode((b"[" + b",".join(lines) + b"]").decode("utf-8"))
    except (ValueError, RecursionError):  # (UnicodeDecodeError is a ValueError)
        values = None
    if not isinstance(values, list) or len(values) != len(lines):
        return [_value_or_error(line) for line in lines]
    for index, line in enumerate(lines):
        if b"\\ud" in line or b"\\uD" in line:
            values[index] = without_lone_surrogates(values[index])
    return values


def _value_or_error(line: bytes) -> Any:
    try:
        return loads_line(line)
    except ValueError as error:
        return error


def _fixed(text: str) -> str:
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def without_lone_surrogates(value: Any) -> Any:
    """`value` with every string (keys too) made encodable; iterative, so depth costs no recursion."""
    if isinstance(value, str):
        return _fixed(value)
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in list(item):
                inner = item[key]
                if isinstance(inner, str):
                    inner = _fixed(inner)
                elif isinstance(inner, (dict, list)):
                    stack.append(inner)
                fixed = _fixed(key)
                if fixed != key:
                    del item[key]
                item[fixed] = inner
        elif isinstance(item, list):
            for index, inner in enumerate(item):
                if isinstance(inner, str):
                    item[index] = _fixed(inner)
                elif isinstance(inner, (dict, list)):
                    stack.append(inner)
    return value


# -- typed fields ----------------------------------------------------------------------------------
# Every number a journal holds (tokens, calls, indices, dollars) is a count or an amount: never negative,
# and far below these bounds in any real session. A forged or corrupt one above them (a ping of 4,000
# digits) overflowed the float arithmetic of prices and meters (OverflowError ended `--continue`); now the
# record is refused (ValueError: one warning, the line skipped) before any of it is used.
MAX_COUNT = 10 ** 15
MAX_AMOUNT = 1e12


def as_int(value: Any, limit: int = MAX_COUNT) -> int:
    """A count: an int, or a float with an integral finite value, from 0 to `limit` (`1e400` is refused)."""
    if type(value) is int:  # nearly every field: the checks below cost more than the whole record otherwise
        if 0 <= value <= limit:
            return value
        raise ValueError(_out_of_range(value))
    if isinstance(value, str):
        return as_int(int(value) if len(value) <= 40 else _too_long(value), limit)  # (a hand-edited "3")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{_shown(value)} is not a number")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise ValueError(f"{_shown(value)} is not a whole finite number")
    return as_int(int(value), limit)


def as_float(value: Any, limit: float = MAX_AMOUNT) -> float:
    """An amount: a finite number from 0 to `limit`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{_shown(value)} is not a number")
    if isinstance(value, int) and not 0 <= value <= limit:  # (before float(): a huge int overflows it)
        raise ValueError(_out_of_range(value))
    if not (math.isfinite(value) and 0 <= value <= limit):
        raise ValueError(f"{_shown(value)} is not a finite number from 0 to {limit:g}")
    return float(value)


_LONG_NUMBER = re.compile(rb"[0-9]{16}|[0-9][eE]\+?[0-9]{2}")  # past the bounds: 16 digits, or 1e+12 and up


def out_of_bounds(line: bytes, record: Any) -> str | None:
    """Why a record (not a message: its numbers are the conversation's) holds a number no journal writes,
    or None. Only lines with a long run of digits are walked: nearly every line is not."""
    if not _LONG_NUMBER.search(line):
        return None
    stack = [record]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) > MAX_COUNT:
            return _out_of_range(item)
        elif isinstance(item, float) and abs(item) > MAX_AMOUNT:
            return f"a number out of range ({item:g})"
    return None


def _out_of_range(value: int) -> str:
    digits = len(str(abs(value))) if abs(value) < 10 ** 60 else "many"
    return f"a number out of range ({'-' if value < 0 else ''}{digits} digits)"


def _too_long(value: str) -> int:
    raise ValueError(f"a number of {len(value):,} characters")


def _shown(value: Any) -> str:
    """A value in a one-line warning: short, whatever it holds."""
    text = repr(value) if not isinstance(value, (list, dict)) else type(value).__name__
    return text if len(text) <= 40 else text[:40] + "…"


def opt_int(value: Any) -> int | None:
    return None if value is None else as_int(value)


def opt_float(value: Any) -> float | None:
    return None if value is None else as_float(value)


def opt_str(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{_shown(value)} is not text")
    return value


_BLOCK_FIELDS: dict[str, dict[str, type]] = {"text": {"text": str}, "tool_use": {"id": str, "name": str, "input": dict},
                 "tool_result": {"tool_use_id": str}, "thinking": {"thinking": str}}


def check_message(message: Any) -> None:
    """A history entry every face can show and the API can take: `ValueError` says what is wrong."""
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        raise ValueError("not a message")
    content = message.get("content")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise ValueError("its content is neither text nor a list of blocks")
    for block in content:
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise ValueError("a content block is not an object with a type")
        for name, kind in _BLOCK_FIELDS.get(block["type"], {}).items():
            if not isinstance(block.get(name), kind):
                raise ValueError(f"a {block['type']} block's {name!r} is not {kind.__name__}")
        if block["type"] == "tool_result":
            inner = block.get("content")
            if inner is not None and not isinstance(inner, (str, list)):
                raise ValueError("a tool_result's content is neither text nor a list")
            if isinstance(inner, list) and not all(isinstance(b, dict) for b in inner):
                raise ValueError("a tool_result's content holds something that is not a block")
