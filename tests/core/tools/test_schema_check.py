"""The quick schema check (tools/schema_check.py) may only skip jsonschema, never disagree with it: whenever
it says "surely valid", jsonschema finds no error. And a valid call to a built-in tool no longer imports
jsonschema (120–230 ms of every `-p` run, issue 18's long turn)."""

from __future__ import annotations

import subprocess
import sys

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from tui_agent.core.tools import builtin_tools
from tui_agent.core.tools.schema_check import surely_valid

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
SCHEMAS = [tool.input_schema for tool in builtin_tools()] + [
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "exclusiveMaximum": 10}},
     "required": ["n"], "additionalProperties": False},
    {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string", "maxLength": 3},
                                               "minItems": 1}}, "additionalProperties": {"type": "number"}},
    {"type": ["string", "null"], "enum": ["a", "b", None]},
    {"type": "object", "properties": {"x": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"type": "string"}}},
    {"type": "number", "maximum": 2.5}, {"type": "integer"}, {"type": "boolean"}, {"enum": [1, True]},
]


def candidates(schema: dict) -> st.SearchStrategy:
    """Arbitrary JSON, and objects built from the schema's own property names (the likely inputs)."""
    names = list((schema.get("properties") or {}).keys()) or ["x"]
    return JSON | st.dictionaries(st.sampled_from(names + ["other"]), JSON, max_size=len(names) + 1)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_surely_valid_never_disagrees_with_jsonschema(data) -> None:
    schema = data.draw(st.sampled_from(SCHEMAS))
    value = data.draw(candidates(schema))
    if surely_valid(schema, value):
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(value))
        assert not errors, (schema, value, errors[0].message)


def test_the_usual_inputs_are_recognised_and_the_wrong_ones_are_left_to_jsonschema() -> None:
    tools = {tool.name: tool for tool in builtin_tools()}
    assert surely_valid(tools["Read"].input_schema, {"file_path": "src/app.py"})
    assert surely_valid(tools["Grep"].input_schema, {"pattern": "TODO", "path": "src"})
    assert surely_valid(tools["Bash"].input_schema, {"command": "ls -la"})
    assert not surely_valid(tools["Read"].input_schema, {})
    assert not surely_valid(tools["Read"].input_schema, {"file_path": 3})
    assert not surely_valid({"type": "integer"}, True) and surely_valid({"type": "integer"}, 3.0)
    assert not surely_valid({"type": "object", "properties": {"x": {"$ref": "#/$defs/x"}}}, {"x": 1})


def test_a_valid_tool_call_does_not_import_jsonschema() -> None:
    code = ("import sys\n"
            "from tui_agent.core.tools import builtin_tools\n"
            "from tui_agent.core.tools.base import validate_input\n"
            "read = next(t for t in builtin_tools() if t.name == 'Read')\n"
            "assert validate_input(read, {'file_path': 'a.py'}) is None\n"
            "print('jsonschema' in sys.modules)\n"
            "assert 'file_path' in validate_input(read, {})\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
