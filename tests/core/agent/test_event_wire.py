"""The events' one wire form (`core/agent/event_wire.py`, issue 42: each face wrote its own mapping): every
event the engine emits, and every event class with made-up fields, goes through JSON and comes back equal;
another version or an unknown type is refused in one line."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest

from tests.ui.support import demo_session
from tui_agent.core.agent.event_wire import EVENTS, LOCAL, WIRE_VERSION, WireView, _hints, from_wire, read, to_wire


def through_json(event: Any) -> Any:
    return from_wire(json.loads(json.dumps(to_wire(event))))


async def demo_events(workspace: Path) -> list[Any]:
    (workspace / "README.md").write_text("# demo\n" + "A line of the readme.\n" * 400)
    for n in range(4):
        (workspace / f"part{n}.py").write_text(f"def part{n}():\n" + "    return 1\n" * 600)
    session = demo_session(workspace)
    seen: list[Any] = []
    session.listeners.append(seen.append)
    for prompt in ("what is in this repo? read README.md and part0.py and part1.py and part2.py and part3.py",
                   "read README.md again", "what did we do so far?"):
        async for event in session.run_turn(prompt):
            seen.append(event)
    return seen


async def test_every_event_a_demo_session_emits_comes_back_equal(tmp_path: Path) -> None:
    seen = await demo_events(tmp_path)
    assert {"CompactionReported", "NextRequestChanged", "ToolFinished", "TurnEnded"} <= {type(e).__name__ for e in seen}
    assert any(e.plan.blocks for e in seen if type(e).__name__ == "CompactionReported"), "no cut or mask to carry"
    for event in seen:
        wire = to_wire(event)
        assert wire["v"] == WIRE_VERSION and wire["type"] == type(event).__name__
        assert through_json(event) == event, type(event).__name__


async def test_what_a_face_reads_is_the_wire_form_field_by_field(tmp_path: Path) -> None:
    """The faces map from `read(event)`: a view that is, item by item, the object `to_wire` makes."""
    seen = await demo_events(tmp_path)
    for event in seen:
        view = read(event)
        assert view.kind == type(event).__name__ and view.source is event
        assert view == to_wire(event) and list(view) == list(to_wire(event)), view.kind
    plan = next(e for e in seen if type(e).__name__ == "CompactionReported").plan
    carried = read(EVENTS["CompactionReported"](1, plan, 2, 3, 4))["plan"]
    assert isinstance(carried, WireView) and carried.source is plan and carried["type"] == "CompactPlan"


def made_up(hint: Any, real: dict[str, Any]) -> Any:
    """A value of `hint`: a real one where the engine has it (a plan), else the simplest of that type."""
    name = getattr(hint, "__name__", "")
    if name in real:
        return real[name]
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        return args[0]
    if origin in (typing.Union, __import__("types").UnionType):
        return made_up(next(arg for arg in args if arg is not type(None)), real)
    if origin in (list, tuple, dict) or hint in (list, tuple, dict):
        return (origin or hint)()
    if dataclasses.is_dataclass(hint):
        return sample(hint, real)
    return {int: 3, float: 0.5, str: "words", bool: True}.get(hint, {"role": "user", "content": "hi"})


def sample(cls: type, real: dict[str, Any]) -> Any:
    hints = _hints(cls)
    return cls(**{f.name: None if f.name in LOCAL.get(cls.__name__, ()) else made_up(hints[f.name], real)
                  for f in dataclasses.fields(cls) if f.init})


async def test_every_event_class_is_a_row_and_comes_back_equal(tmp_path: Path) -> None:
    seen = await demo_events(tmp_path)
    real = {"CompactPlan": next(e.plan for e in seen if type(e).__name__ == "CompactionReported"),
            "CallPlan": next(e.plan for e in seen if type(e).__name__ == "NextRequestChanged")}
    for name, cls in EVENTS.items():
        event = sample(cls, real)
        assert through_json(event) == event, name


def test_a_permission_request_travels_without_its_future() -> None:
    cls = EVENTS["PermissionRequested"]
    event = cls("Bash", {"command": "ls"}, "ls", "ls", asyncio.Future(loop=asyncio.new_event_loop()), "p1")
    wire = to_wire(event)
    assert "decision" not in wire and from_wire(json.loads(json.dumps(wire))).decision is None


def test_another_version_or_an_unknown_type_is_refused_in_one_line() -> None:
    wire = to_wire(EVENTS["Notice"]("hello"))
    with pytest.raises(ValueError, match="^event wire version 2: this reads version 1$"):
        from_wire({**wire, "v": 2})
    with pytest.raises(ValueError, match="^unknown event type 'Gone'"):
        from_wire({**wire, "type": "Gone"})
    with pytest.raises(TypeError, match="is not an engine event"):
        to_wire(object())
