"""Every extension point is a table, and a new row is told what it still lacks (issue 42).

A block kind (`compaction/decisions.KINDS`), a provider (`providers/config.PROVIDERS`), a face
(`faces/table.FACES`), an engine event kind (`core/agent/event_wire.EVENTS`, and each face's mapping from it)
and a log format (`recordings/codex_logs.FORMATS`) each have a `…_gaps(row)` here that
lists, in words naming the file that reads it, every piece the row has not declared or that a reader of
the table does not know about; the contract test asserts the list is empty for every row. A throwaway row
(`test_a_throwaway_…`) shows each list naming what it should: a silent miss is the defect these catch (a
new kind that the digest, the loss report or the recall list ignore).
"""

from __future__ import annotations

import dataclasses
import lzma
import re
from pathlib import Path
from typing import Any, ClassVar, get_args

import pytest

from tui_agent.core.agent.context_report import RECALLABLE
from tui_agent.core.compaction.decisions import KINDS, DecisionOp
from tui_agent.core.compaction.plan import CompactEvent, EventKind, OpKind
from tui_agent.core.providers import config as provider_config
from tui_agent.core.providers.base import Provider
from tui_agent.core.recordings import codex_logs
from tui_agent.faces.arguments import ProviderChoices
from tui_agent.faces.table import FACES, Face

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"

# -- block kinds ----------------------------------------------------------------------------------------
# What a kind declares itself (in its own class body), and who reads it.
BLOCK_KIND_PIECES = {
    "tag": "its journal tag, the key of decisions.KINDS (the state's version 3)",
    "op": "the plan's per-message kind (CompactPlan.op), the panel's mark key",
    "rank": "which decision names a message holding several (decisions.strongest)",
    "reason": "the words the panel and the Context tool show for it",
    "render": "the block as sent (decisions.render_blocks)",
    "to_json": "how the journal keeps it (compaction/state.py)",
    "from_json": "how the journal reads it back (compaction/state.py)",
    "digest_part": "its share of CompactPlan.digest (compaction/plan.py: equal digests send equal requests)",
    "lost": "whether the event's loss report counts it (compaction/events_of.py)",
    "glyph": "the panel's row mark (ui/widgets/history_rows.MARKS and the legend)",
}


def block_kind_gaps(kind: type) -> list[str]:
    from tui_agent.ui.widgets.history_rows import MARKS, SENT_KINDS
    from tui_agent.ui.widgets.panel_legend import legend

    own: dict = {}  # what the row declares, itself or through the row it refines (a Clip is a Cut)
    for base in reversed(kind.__mro__[:-1]):
        own.update(vars(base))
    name = own.get("tag", kind.__name__)
    gaps = [f"block kind {name!r} lacks `{piece}`: {why}" for piece, why in BLOCK_KIND_PIECES.items() if piece not in own]
    op, glyph = own.get("op"), own.get("glyph")
    if KINDS.get(name) is not kind:
        gaps.append(f"block kind {name!r} is not a row of compaction/decisions.KINDS under its tag")
    if op not in get_args(DecisionOp) or op not in get_args(OpKind):
        gaps.append(f"block kind {name!r}: its op {op!r} is not in decisions.DecisionOp and plan.OpKind")
    if name not in get_args(EventKind):
        gaps.append(f"block kind {name!r}: its tag is not in plan.EventKind (the kinds an event names)")
    if op not in {field.name for field in dataclasses.fields(CompactEvent)}:
        gaps.append(f"block kind {name!r}: CompactEvent has no count `{op}` (compaction/plan.py, the event's line)")
    if op not in RECALLABLE:
        gaps.append(f"block kind {name!r}: the Context tool's recall list (agent/context_report.RECALLABLE) lacks {op!r}")
    if glyph is None or MARKS.get(op, ("",))[0] != glyph:
        gaps.append(f"block kind {name!r}: ui/widgets/history_rows.MARKS[{op!r}] is not its glyph {glyph!r}")
    if op not in SENT_KINDS:
        gaps.append(f"block kind {name!r}: ui/widgets/history_rows.SENT_KINDS lacks {op!r} (a row still sent)")
    if glyph is None or f"{glyph}{op}" not in legend().plain.replace(" ", ""):
        gaps.append(f"block kind {name!r}: the panel's legend (ui/widgets/panel_legend.py) does not show {glyph}{op}")
    return gaps


@pytest.mark.parametrize("tag", sorted(KINDS))
def test_every_block_kind_is_known_everywhere(tag: str) -> None:
    assert block_kind_gaps(KINDS[tag]) == []


def test_a_throwaway_block_kind_is_told_what_it_lacks() -> None:
    @dataclasses.dataclass(frozen=True)
    class Clear:  # "clear this result but keep its tool input", half written
        tag: ClassVar[str] = "clear"
        op: ClassVar[str] = "cleared"
        rank: ClassVar[int] = 2

    gaps = "\n".join(block_kind_gaps(Clear))
    for piece in ("`digest_part`: its share of CompactPlan.digest", "`lost`: whether the event's loss report",
                  "`glyph`", "`render`", "not a row of compaction/decisions.KINDS", "not in plan.EventKind",
                  "CompactEvent has no count `cleared`", "RECALLABLE) lacks 'cleared'", "panel_legend.py"):
        assert piece in gaps, piece


def test_the_digest_and_the_readers_take_every_kind_from_the_table() -> None:
    """The readers the issue found reading only cuts and masks now read `KINDS` or `plan.blocks`."""
    sources = {path: (ROOT / "tui_agent/core" / path).read_text(encoding="utf-8") for path in (
        "compaction/plan.py", "compaction/events_of.py", "compaction/request_diff.py", "agent/context_report.py")}
    assert "KINDS.values()" in sources["compaction/plan.py"].split("def digest")[1].split("def ")[0]
    assert "kind.lost" in sources["compaction/events_of.py"]
    for path in ("compaction/request_diff.py", "agent/context_report.py"):
        assert "(*plan.cuts, *plan.masks" not in sources[path], path


# -- providers ------------------------------------------------------------------------------------------
CAPABILITIES = ("prompt_caching", "cache_ttl", "thinking_budget", "can_ping", "manages_context", "reports_usage")


def provider_gaps(entry: provider_config.ProviderEntry) -> list[str]:
    name = entry.name
    gaps = []
    if provider_config.PROVIDERS.get(name) is not entry:
        gaps.append(f"provider {name!r} is not a row of providers/config.PROVIDERS under its name")
    if name not in list(ProviderChoices()):
        gaps.append(f"provider {name!r} is not among `--provider`'s choices (faces/arguments.ProviderChoices)")
    doc = provider_config.__doc__ or ""
    for variable in (entry.key_var, entry.model_var, entry.base_url_var):
        if variable and f"| {variable} |" not in doc:
            gaps.append(f"provider {name!r}: {variable} is not in providers/config.py's table of variables")
    cls = entry.build()
    if not (isinstance(cls, type) and issubclass(cls, Provider)):
        return gaps + [f"provider {name!r}: its build() gives {cls!r}, not a providers/base.Provider subclass"]
    for capability in CAPABILITIES:
        if not hasattr(cls, capability) and capability not in {f.name for f in dataclasses.fields(cls)}:
            gaps.append(f"provider {name!r}: no `{capability}` (declare it on providers/base.Provider)")
    if cls.can_ping and cls.ping is Provider.ping:
        gaps.append(f"provider {name!r} says it can ping (can_ping) and keeps Provider.ping, which refuses")
    if not cls.can_ping and cls.ping is not Provider.ping:
        gaps.append(f"provider {name!r} has a ping() but not can_ping: keep-warm would never use it")
    return gaps


@pytest.mark.parametrize("name", sorted(provider_config.PROVIDERS))
def test_every_provider_row_is_complete(name: str) -> None:
    assert provider_gaps(provider_config.PROVIDERS[name]) == []


def test_a_throwaway_provider_is_told_what_it_lacks() -> None:
    class Pings(Provider):
        async def stream(self, request):  # noqa: ANN001, ANN201
            yield None

        async def ping(self, request, zero=True):  # noqa: ANN001, ANN201
            return None

    entry = provider_config.ProviderEntry("zzz", "ZZZ_API_KEY", "ZZZ_MODEL", "ZZZ_BASE_URL", "zzz-1", None, lambda: Pings)
    gaps = "\n".join(provider_gaps(entry))
    for piece in ("not a row of providers/config.PROVIDERS", "not among `--provider`'s choices",
                  "ZZZ_API_KEY is not in providers/config.py's table", "has a ping() but not can_ping"):
        assert piece in gaps, piece


def test_the_engine_reads_no_undeclared_capability() -> None:
    """`getattr(provider, "thinking_budget", 0)` read a capability the Provider never declared (issue 42)."""
    found = []
    pattern = re.compile(r"getattr\([^)]*[\"'](%s)[\"']" % "|".join(CAPABILITIES + ("ping",)))
    for path in sorted((ROOT / "tui_agent").rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert found == []


# -- faces ----------------------------------------------------------------------------------------------
def face_gaps(face: Face, capsys: pytest.CaptureFixture[str]) -> list[str]:
    import importlib

    gaps = []
    if sum(1 for other in FACES if other.name == face.name) != 1 or face not in FACES:
        gaps.append(f"face {face.name!r} is not one row of faces/table.FACES")
    if not face.help.endswith(f"(tui-agent {face.name} --help)"):
        gaps.append(f"face {face.name!r}: its help line does not end with (tui-agent {face.name} --help)")
    try:
        run = getattr(importlib.import_module(face.module), face.function)
    except (ImportError, AttributeError) as error:
        return gaps + [f"face {face.name!r}: its entry {face.entry} does not load ({error})"]
    try:
        run(["--help"])
        code: Any = 0
    except SystemExit as leaving:
        code = leaving.code
    said = capsys.readouterr().out
    if code not in (0, None) or f"tui-agent {face.name}" not in said:
        gaps.append(f"face {face.name!r}: `tui-agent {face.name} --help` does not print its own usage "
                    f"(an argparse prog of 'tui-agent {face.name}')")
    return gaps


@pytest.mark.parametrize("name", [face.name for face in FACES])
def test_every_face_row_runs_its_own_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert face_gaps(next(face for face in FACES if face.name == name), capsys) == []


def test_a_throwaway_face_is_told_what_it_lacks(capsys: pytest.CaptureFixture[str]) -> None:
    gaps = "\n".join(face_gaps(Face("zzz", "zzz things", "tui_agent.faces.zzz:zzz_command"), capsys))
    assert "not one row of faces/table.FACES" in gaps and "(tui-agent zzz --help)" in gaps
    assert "tui_agent.faces.zzz:zzz_command does not load" in gaps


def test_the_cli_names_no_subcommand_by_hand() -> None:
    """The dispatcher and `--help` read the table: no second list of names to forget a face in."""
    for path in ("tui_agent/faces/cli.py", "tui_agent/faces/arguments.py", "tui_agent/faces/sessions.py"):
        text = (ROOT / path).read_text(encoding="utf-8")
        listed = re.findall(r"\(\s*\"sessions\",\s*\"export\"", text)
        assert listed == [] and "SUBCOMMAND_HELP" not in text, path


# -- event kinds: one wire form the faces map from ---------------------------------------------------------
# The faces that map engine events (ACP, OpenTelemetry's spans and metrics, `-p`) read them through
# core/agent/event_wire.read: a kind is a row of event_wire.EVENTS, and a face names kinds by the wire's names
# (its `BY_KIND` table's keys, or a `….kind == "Name"` test), never by the event classes themselves.
EVENT_MODULES = ("tui_agent.core.events", "tui_agent.core.events.server", "tui_agent.core.events.warm")
WIRE_FACES = ("faces/acp/updates.py", "faces/acp/agent.py", "faces/acp/turn_end.py", "faces/acp/compaction_approval.py",
              "faces/headless.py", "core/agent/telemetry.py", "core/agent/metrics.py")


def engine_event_classes() -> dict[str, type]:
    """Every event class the engine defines (a dataclass of core/events/: __init__.py, server.py or warm.py), less the
    values an event only carries in a field (a `BaseBreakdown` is a `NextRequestChanged`'s `base`)."""
    import importlib

    from tui_agent.core.agent.event_wire import EVENTS, _classes, _hints

    carried = {name for cls in EVENTS.values() for hint in _hints(cls).values() for name in _classes(hint)}
    return {name: cls for module in map(importlib.import_module, EVENT_MODULES) for name, cls in vars(module).items()
            if dataclasses.is_dataclass(cls) and isinstance(cls, type) and cls.__module__ == module.__name__
            and name not in carried}


def event_kind_gaps(cls: type) -> list[str]:
    from tui_agent.core.agent.event_wire import EVENTS

    if EVENTS.get(cls.__name__) is cls:
        return []
    return [f"event kind {cls.__name__!r} has no wire row: core/agent/event_wire.EVENTS holds every member of "
            "core/events.EngineEvent and SessionEvent (add it to one of them)"]


def kinds_a_face_maps(path: Path) -> set[str]:
    """The event kinds a module names the wire's way: its `BY_KIND` table's keys and the strings it tests a
    `kind` against (`wire.kind == "Notice"`, `kind in ("ServerEdited", "CacheMissed")`)."""
    import ast

    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        target = node.target if isinstance(node, ast.AnnAssign) else (node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "BY_KIND" and isinstance(node.value, ast.Dict):  # type: ignore[union-attr]
            named |= {key.value for key in node.value.keys if isinstance(key, ast.Constant)}  # type: ignore[union-attr]
        if isinstance(node, ast.Compare) and (getattr(node.left, "attr", None) == "kind" or getattr(node.left, "id", None) == "kind"):
            for right in node.comparators:
                items = right.elts if isinstance(right, (ast.Tuple, ast.Set, ast.List)) else [right]
                named |= {item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)}
    return named


def wire_face_gaps(path: Path) -> list[str]:
    from tui_agent.core.agent.event_wire import EVENTS

    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    gaps = [f"{where} maps event kind {kind!r} that core/agent/event_wire.EVENTS does not know"
            for kind in sorted(kinds_a_face_maps(path) - set(EVENTS))]
    text = path.read_text(encoding="utf-8")
    if "event_wire" not in text:
        gaps.append(f"{where} does not read events through core/agent/event_wire.read")
    for n, line in enumerate(text.splitlines(), 1):
        if re.search(r"case ev\.|isinstance\([^)]*\bev\.[A-Z]", line):
            gaps.append(f"{where}:{n}: names an event class instead of its wire kind: {line.strip()}")
    return gaps


@pytest.mark.parametrize("name", sorted(engine_event_classes()))
def test_every_engine_event_kind_has_a_wire_row(name: str) -> None:
    assert event_kind_gaps(engine_event_classes()[name]) == []


@pytest.mark.parametrize("face", WIRE_FACES)
def test_every_face_maps_only_kinds_the_wire_knows(face: str) -> None:
    path = ROOT / "tui_agent" / face
    assert kinds_a_face_maps(path), f"{face} names no event kind (a BY_KIND table or a kind test)"
    assert wire_face_gaps(path) == []


def test_every_module_reading_the_wire_is_a_checked_face() -> None:
    readers = {str(path.relative_to(ROOT / "tui_agent")) for path in (ROOT / "tui_agent").rglob("*.py")
               if "event_wire import" in path.read_text(encoding="utf-8")}
    assert readers == set(WIRE_FACES)


def test_a_throwaway_event_kind_and_face_row_are_told_what_they_lack(tmp_path: Path) -> None:
    @dataclasses.dataclass(frozen=True)
    class Throwaway:
        call: int

    assert "event kind 'Throwaway' has no wire row: core/agent/event_wire.EVENTS" in "".join(event_kind_gaps(Throwaway))
    face = tmp_path / "zzz_face.py"
    face.write_text("from tui_agent.core.agent.event_wire import read\n"
                    "BY_KIND = {'Notice': print, 'Throwaway': print}\n"
                    "def heard(event):\n    wire = read(event)\n    if wire.kind in ('TurnEnded', 'Gone'):\n        pass\n"
                    "    match event:\n        case ev.Usage():\n            pass\n")
    gaps = "\n".join(wire_face_gaps(face))
    assert "zzz_face.py maps event kind 'Throwaway' that core/agent/event_wire.EVENTS does not know" in gaps
    assert "maps event kind 'Gone'" in gaps and "'Notice'" not in gaps and "'TurnEnded'" not in gaps
    assert "zzz_face.py:8: names an event class instead of its wire kind: case ev.Usage():" in gaps


# -- log formats ----------------------------------------------------------------------------------------
SAMPLES = {"codex": "codex-rollout.jsonl", "proxy": "proxy-claude-code.jsonl.xz",
           "claude-code": "synthetic-claude-code.jsonl"}  # one small log of each format, in tests/data


def sample_path(kind: str, tmp_path: Path) -> Path | None:
    name = SAMPLES.get(kind)
    if name is None:
        return None
    path = DATA / name
    if path.suffix == ".xz":
        plain = tmp_path / path.stem
        plain.write_bytes(lzma.decompress(path.read_bytes()))
        return plain
    return path


def log_format_gaps(row: codex_logs.LogFormat, tmp_path: Path) -> list[str]:
    gaps = []
    if sum(1 for other in codex_logs.FORMATS if other.kind == row.kind) != 1 or row not in codex_logs.FORMATS:
        gaps.append(f"log format {row.kind!r} is not one row of recordings/codex_logs.FORMATS")
    if row.store is None:
        for method in ("feed", "load"):
            if not callable(getattr(row.reader, method, None)):
                gaps.append(f"log format {row.kind!r}: its reader has no {method}() (codex_logs.LogReader calls it)")
    sample = sample_path(row.kind, tmp_path)
    if sample is None:
        return gaps + [f"log format {row.kind!r}: no sample log in tests/data (SAMPLES in this test)"]
    if codex_logs.log_kind(sample) != row.kind:
        gaps.append(f"log format {row.kind!r}: log_kind() calls its sample {codex_logs.log_kind(sample)!r}")
    if not codex_logs.load_log(sample).history:
        gaps.append(f"log format {row.kind!r}: load_log() reads no message from its sample")
    return gaps


@pytest.mark.parametrize("kind", [row.kind for row in codex_logs.FORMATS])
def test_every_log_format_reads_its_sample(kind: str, tmp_path: Path) -> None:
    assert log_format_gaps(next(row for row in codex_logs.FORMATS if row.kind == kind), tmp_path) == []


def test_the_last_format_is_the_default_and_a_store_is_read_whole(tmp_path: Path, monkeypatch) -> None:
    assert codex_logs.FORMATS[-1].claims({"type": "anything"})
    sqlite = tmp_path / "opencode.db"
    sqlite.write_bytes(b"SQLite format 3\x00" + bytes(100))
    loaded = codex_logs.load_log(DATA / SAMPLES["claude-code"])
    store = codex_logs.LogStore(lambda head: head.startswith(b"SQLite format 3\x00"), lambda path: loaded)
    row = codex_logs.LogFormat("opencode", object, lambda record: False, store)
    monkeypatch.setattr(codex_logs, "FORMATS", (row, *codex_logs.FORMATS))
    assert codex_logs.log_kind(sqlite) == "opencode" and codex_logs.load_log(sqlite) is loaded
    assert codex_logs.log_kind(DATA / SAMPLES["claude-code"]) == "claude-code"


def test_a_throwaway_log_format_is_told_what_it_lacks(tmp_path: Path) -> None:
    gaps = "\n".join(log_format_gaps(codex_logs.LogFormat("opencode", object, lambda record: False), tmp_path))
    assert "not one row of recordings/codex_logs.FORMATS" in gaps and "its reader has no feed()" in gaps
    assert "no sample log in tests/data" in gaps
