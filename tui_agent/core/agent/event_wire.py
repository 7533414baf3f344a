"""The engine's events in one serialisable wire form: a JSON object per event, versioned, that any face can
read without importing the engine (a browser, another process, a recording).

`to_wire(event)` is `{"v": WIRE_VERSION, "type": "<event class>", <its fields>}`; a nested value keeps its
shape: a dataclass (a plan, a decision, an edit) is an object with its own "type", a tuple or a list is a
list, a map whose keys are not strings is `{"map": [[key, value], …]}`. `from_wire` makes the very event
back (equal to the one sent), and refuses in one line a version or a type it does not know. The table of
events is `EVENTS`: every member of `EngineEvent` and `SessionEvent`; a new event class is a row by being
one of those, and `tests/core/agent/test_event_wire.py` sends each one the engine emits through JSON and back.

Process-local fields do not travel (`LOCAL`; None when read back): a permission request's `decision` is the
future a face in the same process answers through; the answer travels as `PermissionAnswered`.

The faces in this process (ACP, OpenTelemetry's spans and metrics, `-p`) map FROM this form too, so that a
new event kind is one row here plus each face's optional row: `read(event)` is the event's wire form read a
field at a time (`WireView`: what `to_wire` would hold, encoded only where a face looks, so a plan of a
thousand blocks costs nothing to a face that reads the call number), and each face keeps its mapping in a
`BY_KIND` table keyed by wire kind names (`tests/test_extension_points.py` checks every key is a row here).
A view's `source` is the engine's own value, for what the wire does not carry: its methods (`line()`,
`why()`) and derived figures, and a value handed on whole to engine code that takes the engine's type.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterator, Mapping
from typing import Any, Union, get_args, get_origin

from tui_agent.core import events as ev
from tui_agent.core.agent.call import CallPlan
from tui_agent.core.compaction import CompactPlan

WIRE_VERSION = 1
EVENTS: dict[str, type] = {cls.__name__: cls for cls in (*get_args(ev.EngineEvent), *get_args(ev.SessionEvent))}
LOCAL = {"PermissionRequested": ("decision",)}


def to_wire(event: Any) -> dict[str, Any]:
    """The event as a JSON-ready object (`json.dumps` takes it as it is)."""
    name = type(event).__name__
    if name not in EVENTS:
        raise TypeError(f"{name} is not an engine event (event_wire.EVENTS)")
    return {"v": WIRE_VERSION, **_object(event, LOCAL.get(name, ()))}


def from_wire(data: Mapping[str, Any]) -> Any:
    """The event `to_wire` made `data` of; ValueError (one line) for another version or an unknown type."""
    if data.get("v") != WIRE_VERSION:
        raise ValueError(f"event wire version {data.get('v')!r}: this reads version {WIRE_VERSION}")
    cls = EVENTS.get(str(data.get("type")))
    if cls is None:
        raise ValueError(f"unknown event type {data.get('type')!r} (version {WIRE_VERSION} knows {len(EVENTS)})")
    return _build(cls, data)


class WireView(Mapping[str, Any]):
    """An event (or a value it carries) as its wire form, encoded a field at a time when read: equal, item
    by item, to what `to_wire` makes of it. `kind` is the wire's "type"; `source` the engine's own value."""

    __slots__ = ("source", "kind", "_names", "_top")

    def __init__(self, source: Any, top: bool = False) -> None:
        self.source, self.kind, self._top = source, type(source).__name__, top
        self._names = _field_names(type(source), top)

    def __getitem__(self, key: str) -> Any:
        if key == "type":
            return self.kind
        if key == "v" and self._top:
            return WIRE_VERSION
        if key not in self._names:
            raise KeyError(key)
        return _view(getattr(self.source, key))

    def __iter__(self) -> Iterator[str]:
        return iter((*(("v",) if self._top else ()), "type", *self._names))

    def __len__(self) -> int:
        return len(self._names) + 1 + self._top


_NAMES: dict[tuple[type, bool], tuple[str, ...]] = {}


def _field_names(cls: type, top: bool) -> tuple[str, ...]:
    """The fields a class's wire form holds (an event's process-local ones left out): known once per class,
    as a face reads every streamed text delta."""
    names = _NAMES.get((cls, top))
    if names is None:
        left_out = LOCAL.get(cls.__name__, ()) if top else ()
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name not in left_out) \
            if dataclasses.is_dataclass(cls) else ()
        _NAMES[(cls, top)] = names
    return names


def read(event: Any) -> WireView:
    """The event's wire form as a face reads it (`to_wire`'s object, each field encoded when looked at)."""
    return WireView(event, top=True)


def _view(value: Any) -> Any:
    """`_encode`, one level at a time: a carried dataclass is a view of its own, a list a list of views."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return WireView(value)
    if isinstance(value, Mapping):
        if all(isinstance(key, str) for key in value):
            return {key: _view(item) for key, item in value.items()}
        return {"map": [[_view(key), _view(item)] for key, item in value.items()]}
    if isinstance(value, (list, tuple, frozenset, set)):
        return [_view(item) for item in value]
    raise TypeError(f"{type(value).__name__} has no wire form")


# -- encoding ---------------------------------------------------------------------------------------------
def _object(value: Any, left_out: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type(value).__name__}
    for field in dataclasses.fields(value):
        if field.name not in left_out:
            out[field.name] = _encode(getattr(value, field.name))
    return out


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _object(value)
    if isinstance(value, Mapping):
        if all(isinstance(key, str) for key in value):
            return {key: _encode(item) for key, item in value.items()}
        return {"map": [[_encode(key), _encode(item)] for key, item in value.items()]}
    if isinstance(value, (list, tuple, frozenset, set)):
        return [_encode(item) for item in value]
    raise TypeError(f"{type(value).__name__} has no wire form")


# -- decoding -------------------------------------------------------------------------------------------------
def _hints(cls: type) -> dict[str, Any]:
    namespace = {**vars(ev), "CallPlan": CallPlan, "CompactPlan": CompactPlan, **vars(typing)}
    module = __import__(cls.__module__, fromlist=["_"])
    # an event names the next call's plan by a Protocol (`events.RequestPlan`); the one that travels is a CallPlan
    return typing.get_type_hints(cls, {**namespace, **vars(module), "RequestPlan": CallPlan})


def _build(cls: type, data: Mapping[str, Any]) -> Any:
    hints = _hints(cls)
    values = {field.name: _decode(data[field.name], hints.get(field.name, Any))
              for field in dataclasses.fields(cls) if field.init and field.name in data}
    values.update({name: None for name in LOCAL.get(cls.__name__, ())})  # (not on the wire: see LOCAL)
    return cls(**values)


def _classes(hint: Any) -> dict[str, type]:
    """The dataclasses a hint may hold, by name (a Union of decisions: `Cut` or `Mask`)."""
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return {hint.__name__: hint}
    found: dict[str, type] = {}
    for arg in get_args(hint):
        found.update(_classes(arg))
    return found


def _decode(value: Any, hint: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    origin = get_origin(hint)
    args = get_args(hint)
    if origin in (Union, types.UnionType):
        inner = [arg for arg in args if arg is not type(None)]
        if len(inner) == 1:
            return _decode(value, inner[0])
        shaped = [arg for arg in inner if get_origin(arg) in (list, tuple) or arg in (list, tuple)]
        if isinstance(value, list) and shaped:
            return _decode(value, shaped[0])
        classes = _classes(hint)
        if isinstance(value, dict) and value.get("type") in classes:
            return _build(classes[value["type"]], value)
        return _decode(value, Any)
    if isinstance(value, dict) and isinstance(value.get("type"), str) and value["type"] in _classes(hint):
        return _build(_classes(hint)[value["type"]], value)
    if isinstance(value, dict) and set(value) == {"map"}:
        key_hint, item_hint = args if len(args) == 2 else (Any, Any)
        return {_decode(key, key_hint): _decode(item, item_hint) for key, item in value["map"]}
    if isinstance(value, dict):
        item_hint = args[1] if len(args) == 2 else Any
        return {key: _decode(item, item_hint) for key, item in value.items()}
    if isinstance(value, list):
        if origin is tuple:
            hints = [args[0]] * len(value) if len(args) == 2 and args[1] is Ellipsis else list(args) or [Any] * len(value)
            return tuple(_decode(item, item_hint) for item, item_hint in zip(value, hints))
        item_hint = args[0] if args else Any
        items = [_decode(item, item_hint) for item in value]
        return frozenset(items) if origin in (frozenset, set) else items
    return value
