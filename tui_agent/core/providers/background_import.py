"""Importing a heavy module in a thread, once per process, so whoever needs it later only waits for the rest.

The `anthropic` SDK costs 1.5–2.3 s to import (about 3,300 modules), 6–11 s on a loaded machine. `-p`
starts it here first thing (cli.py, before the rest of the engine is even imported: this module needs
only the standard library), the TUI after its first frame (`preload`), and a call that comes first waits
for it from a worker thread (`import_finished`), never on the event loop.
"""

from __future__ import annotations

import gc
import threading
from typing import Mapping

SDK_MODULE = "anthropic"

_imports: dict[str, threading.Thread] = {}
_imports_lock = threading.Lock()


def import_in_background(module: str = SDK_MODULE) -> threading.Thread:
    """Start importing `module` in a daemon thread (once per process); `wait_for_import` joins it."""
    with _imports_lock:
        thread = _imports.get(module)
        if thread is None:
            thread = threading.Thread(target=_import_quietly, args=(module,), name=f"import-{module}", daemon=True)
            _imports[module] = thread
            thread.start()
    return thread


def _import_quietly(module: str) -> None:
    """Import `module` with the cyclic garbage collector paused, then frozen out of its walks.

    The SDK's import makes hundreds of thousands of objects (its pydantic classes) that live as long as
    the process; the collections they trigger walk them again and again for nothing: paused, the import
    took about a quarter less (6.5–7.0 s against 8.7–9.2 s at load 9.5). Frozen, no later collection
    walks them either.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        if module == SDK_MODULE:  # only what a call needs of it (sdk_lazy_import.py)
            from tui_agent.core.providers.sdk_lazy_import import import_sdk

            import_sdk(module)
        else:
            __import__(module)
    except Exception:  # noqa: BLE001 - the call that needs it imports again and reports what is missing
        pass
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def wait_for_import(module: str = SDK_MODULE) -> None:
    """Join a background import of `module` if one was started (a no-op otherwise)."""
    thread = _imports.get(module)
    if thread is not None and thread is not threading.current_thread():
        thread.join()


async def import_finished(module: str = SDK_MODULE) -> None:
    """The SDK imported, without ever importing it on the event loop: the import is started in its
    thread if nobody started it yet (a prompt sent before the TUI's preload got to it) and awaited from
    a worker thread, so the screen stays live (the typing, the spinner) while it loads."""
    import sys

    if module in sys.modules and module not in _imports:
        return
    thread = import_in_background(module)
    if thread.is_alive():
        import asyncio

        await asyncio.to_thread(thread.join)


def import_if_claude(provider: str | None, environ: Mapping[str, str]) -> None:
    """Start importing the `anthropic` SDK (1.5–2.3 s) in a thread when this run will call Claude: an
    Anthropic key and no other provider asked for (`--provider anthropic` even without one: the error
    needs no SDK, and nothing is lost). Decided from the environment alone, before anything else of
    the engine is imported, so the thread starts as early as it can."""
    wanted = (provider or "").strip().lower()
    cloud = any((environ.get(f"CLAUDE_CODE_USE_{name}") or "").strip().lower() in ("1", "true", "yes", "on")
                for name in ("BEDROCK", "VERTEX", "FOUNDRY"))  # Claude on a cloud: the same SDK
    if wanted in ("anthropic", "claude", "bedrock", "vertex", "foundry") or (
            not wanted and (cloud or (environ.get("ANTHROPIC_API_KEY") or "").strip())):
        import_in_background()


def import_if_headless(argv: list[str], environ: Mapping[str, str]) -> None:
    """`-p` on the command line: `import_if_claude` before the parser, the compaction settings and the rest of
    start-up are built, from argv as it stands (cli.py asks again with the parsed flags, for a
    prompt piped on stdin). `--print-outbound` sends nothing and needs no SDK."""
    if "--print-outbound" in argv or not any(
            arg in ("-p", "--print") or arg.startswith("--print=") or (arg.startswith("-p") and arg[1:2] == "p")
            for arg in argv):
        return
    provider = next((argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--provider"), None)
    provider = next((arg.split("=", 1)[1] for arg in argv if arg.startswith("--provider=")), provider)
    import_if_claude(provider, environ)
