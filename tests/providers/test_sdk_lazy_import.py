"""The SDK imported as the app imports it (`core/providers/sdk_lazy_import.py`, issue 43): only what a call needs
is loaded, and every name the SDK exports is still there, the same as a whole import gives."""

from __future__ import annotations

import json
import subprocess
import sys

from tui_agent.core.providers.sdk_lazy_import import reexports

PROBE = """
import json, os, sys, time
started = time.process_time()
from tui_agent.core.providers.sdk_lazy_import import import_sdk
import_sdk()
cpu = time.process_time() - started
import anthropic
loaded = len([m for m in sys.modules if m.startswith("anthropic")])
beta_streams = "anthropic.lib.streaming._beta_messages" in sys.modules  # the beta API's streams: not a call's
import anthropic.lib.streaming as streaming
aliases = {n: repr(getattr(streaming, n)) for n in ("BetaTextEvent", "BetaMessageStopEvent",
                                                     "BetaMessageStreamEvent", "BetaContentBlockStopEvent")}
# (a submodule such as `types` is not renamed: the whole import sets a meaningless `__module__` on it)
names = {n: f"{type(v).__name__}:{'' if type(v).__name__ == 'module' else getattr(v, '__module__', '')}"
         for n, v in ((n, getattr(anthropic, n)) for n in anthropic.__all__)}
beta = anthropic.types.beta.BetaMessage.__name__
import aiohttp  # importable again once the SDK's base client is in
print(json.dumps({"loaded": loaded, "names": names, "beta": beta, "cpu": cpu, "beta_streams": beta_streams,
                  "aliases": aliases, "dir": sorted(n for n in dir(streaming) if not n.startswith("_"))}))
"""


def _probe(**env: str) -> dict:
    import os

    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120,
                         env={**os.environ, **env})
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.splitlines()[-1])


def test_the_lazy_sdk_loads_what_a_call_needs_and_exports_every_name():
    lazy, whole = _probe(), _probe(TUI_AGENT_EAGER_SDK="1")
    assert lazy["loaded"] < 0.6 * whole["loaded"], (lazy["loaded"], whole["loaded"])  # 3,300 modules → under 1,600
    assert lazy["names"] == whole["names"]  # the same objects' kinds, named from `anthropic` as the SDK does
    assert lazy["beta"] == "BetaMessage"
    # anthropic.lib.streaming's type aliases (`ParsedBetaMessageStopEvent[object]`: two pydantic models built) are
    # evaluated on first use, to the same values; the beta streams load only then
    assert not lazy["beta_streams"] and whole["beta_streams"]
    assert lazy["aliases"] == whole["aliases"] and lazy["dir"] == whole["dir"]


def test_only_a_package_that_only_reexports_is_made_lazy():
    assert reexports('"""doc"""\nfrom __future__ import annotations\nfrom .a import B as B\n__all__ = ["B"]\n'
                     ).names == {"B": ("a", "B")}
    assert reexports("from .a import B\nB.x = 1\n") is None  # does something else: imported as usual
    assert reexports("import os\nfrom .a import B\n") is None
    assert reexports("from ..up import B\n") is None
    top = reexports("import typing as _t\nfrom . import types\nfrom .lib.x import *\n_setup_logging()\n", top=True)
    assert top is not None and top.stars == ["lib.x"] and top.names == {"types": ("", "types")} and top.setup_logging
    aliased = reexports("from typing_extensions import TypeAlias\nfrom ._t import E as E\n"
                        "A: TypeAlias = E[object]\nB = E | None\n")
    assert aliased is not None and set(aliased.aliases) == {"A", "B"}
    assert aliased.typing_names == {"TypeAlias": ("typing_extensions", "TypeAlias")}
    assert reexports("from ._t import E\nA = E(1)\n") is None  # a call may do anything: imported as usual
    assert reexports("from os import path\n") is None


def test_dash_p_starts_the_import_before_the_flags_are_parsed(monkeypatch):
    """Issue 43: the SDK's thread starts from argv itself, before the parser and the compaction settings."""
    from tui_agent.core.providers import background_import

    asked: list = []
    monkeypatch.setattr(background_import, "import_if_claude", lambda provider, env: asked.append(provider))
    for argv, wanted in ((["-p", "hello there"], [None]), (["--print=hi", "--provider", "bedrock"], ["bedrock"]),
                         (["-phi", "--provider=anthropic"], ["anthropic"]), (["--print-outbound", "-p", "x"], []),
                         (["--model", "m"], []), (["sessions"], [])):
        asked.clear()
        background_import.import_if_headless(argv, {})
        assert asked == wanted, argv


def test_the_spare_client_verifies_as_one_the_sdk_makes_itself():
    """The import thread's HTTP client gets the TLS context made in a thread of its own (the CA store's load
    overlaps the import): it is the one `verify=True` makes, the same store and settings."""
    out = subprocess.run([sys.executable, "-c", """
import json
from tui_agent.core.providers.sdk_lazy_import import import_sdk, take_http_client
import_sdk()
import anthropic
def tls(client):
    ctx = client._transport._pool._ssl_context
    return [int(ctx.verify_mode), ctx.check_hostname, ctx.cert_store_stats(), int(ctx.options), int(ctx.minimum_version)]
print(json.dumps([tls(take_http_client()), tls(anthropic.DefaultAsyncHttpxClient(follow_redirects=False))]))
"""], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    spare, own = json.loads(out.stdout.splitlines()[-1])
    assert spare == own and spare[0] == 2 and spare[1] is True  # CERT_REQUIRED, hostnames checked
