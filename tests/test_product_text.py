"""The product's comments and docstrings say what the code does and why, not which issue asked for it or where
a developer's machine keeps a script (issue 42 found 18 issue numbers and one such path). An issue of an
upstream project, named with its project (`opentelemetry-python issue 4568`), is a reference and stays."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tui_agent"
ISSUE = re.compile(r"\b[Ii]ssues? #?\d+")
MACHINE_PATH = re.compile(r"(/work/|/home/\w+/|/root/)")


def upstream(text: str, start: int) -> bool:
    """An issue named after its project: the word before it is a repository's name (`opentelemetry-python`)."""
    before = text[:start].split()
    return bool(before) and re.fullmatch(r"[\w.]+[-/][\w./-]+", before[-1].strip("(`\"'")) is not None


def citations(text: str, pattern: re.Pattern[str]) -> list[str]:
    return [text[max(m.start() - 30, 0):m.end() + 10] for m in pattern.finditer(text)
            if pattern is not ISSUE or not upstream(text, m.start())]


def findings(pattern: re.Pattern[str]) -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = re.sub(r"\s*\n\s*#?\s*", " ", path.read_text(encoding="utf-8"))  # a phrase broken over two lines
        found += [f"{path.relative_to(PACKAGE.parent)}: …{excerpt}…" for excerpt in citations(text, pattern)]
    return found


def test_no_product_text_cites_an_issue_number() -> None:
    assert findings(ISSUE) == []


def test_no_product_text_names_a_development_machine_path() -> None:
    assert findings(MACHINE_PATH) == []


def test_the_patterns_tell_a_citation_from_a_reference() -> None:
    for cited in ("ends (issue 21): a guarded", "Issue 40: the README's", "states saved before issue 29 named"):
        assert citations(cited, ISSUE), cited
    assert citations("(opentelemetry-python issue 4568)", ISSUE) == []
    assert MACHINE_PATH.search("so /work/briefs/recap-rename.py leaves it")
