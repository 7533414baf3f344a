"""A quick "this input surely fits its schema" for the common case, before jsonschema is needed.

Why: importing jsonschema (and building a validator) took 120–230 ms of every `-p` run, only to confirm that
the model's `{"file_path": "..."}` fits the Read tool's schema (bench/bench_turn.py). This check
understands a small, exactly specified part of JSON Schema (types, properties, required,
additionalProperties, items, string and number bounds, string enums) and answers True only when that part
proves the input valid. Anything else (an unknown keyword, a `$ref`, an enum of numbers, a failure) answers
False, and jsonschema decides and words the message, as before. So it can only skip work, never let an
invalid input through.
"""

from __future__ import annotations

from typing import Any

# Keywords that only describe (no effect on validity without a format checker, as jsonschema runs here).
_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$schema", "$comment", "format",
                          "deprecated", "readOnly", "writeOnly"})
_KNOWN = _ANNOTATIONS | {"type", "properties", "required", "additionalProperties", "items", "enum", "minimum",
                         "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
                         "minItems", "maxItems"}


def surely_valid(schema: Any, value: Any) -> bool:
    """True only if `value` is valid against `schema` for certain; False means "ask jsonschema"."""
    if schema is True or schema == {}:
        return True
    if not isinstance(schema, dict) or not _KNOWN.issuperset(schema):
        return False
    kind = schema.get("type")
    if kind is not None and not _has_type(value, kind):
        return False
    if "enum" in schema:
        options = schema["enum"]
        if not (isinstance(value, str) and isinstance(options, list) and value in options):
            return False  # only strings compare simply (jsonschema tells 1, 1.0 and True apart its own way)
    if isinstance(value, dict):
        return _object_fits(schema, value)
    if isinstance(value, list):
        return _array_fits(schema, value)
    if isinstance(value, str):
        return _bounded(len(value), schema.get("minLength"), schema.get("maxLength"))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number_fits(schema, value)
    return True


def _has_type(value: Any, kind: Any) -> bool:
    if isinstance(kind, list):
        return any(_has_type(value, one) for one in kind)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "integer":  # 2020-12: 3.0 is an integer too
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return False  # an unknown type name: not ours to judge


def _object_fits(schema: dict[str, Any], value: dict[str, Any]) -> bool:
    required = schema.get("required", [])
    if not isinstance(required, list) or any(name not in value for name in required):
        return False
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        return False
    extra = schema.get("additionalProperties", True)
    for name, inner in value.items():
        if name in properties:
            if not surely_valid(properties[name], inner):
                return False
        elif extra is False or (extra is not True and not surely_valid(extra, inner)):
            return False
    return True


def _array_fits(schema: dict[str, Any], value: list[Any]) -> bool:
    if not _bounded(len(value), schema.get("minItems"), schema.get("maxItems")):
        return False
    items = schema.get("items", True)
    return all(surely_valid(items, inner) for inner in value)


def _number_fits(schema: dict[str, Any], value: float) -> bool:
    for key, fits in (("minimum", lambda bound: value >= bound), ("maximum", lambda bound: value <= bound),
                      ("exclusiveMinimum", lambda bound: value > bound),
                      ("exclusiveMaximum", lambda bound: value < bound)):
        bound = schema.get(key)
        if bound is None:
            continue
        if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not fits(bound):
            return False
    return True


def _bounded(size: int, low: Any, high: Any) -> bool:
    for bound, fits in ((low, lambda b: size >= b), (high, lambda b: size <= b)):
        if bound is None:
            continue
        if isinstance(bound, bool) or not isinstance(bound, int) or not fits(bound):
            return False
    return True
