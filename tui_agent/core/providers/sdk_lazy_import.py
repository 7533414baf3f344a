"""The `anthropic` SDK imported without the thousands of types a call never touches.

`import anthropic` executes about 3,800 modules, most of them re-exported by package `__init__` files that
do nothing but `from .x import Name as Name` (`anthropic.types` and `anthropic.types.beta` alone: about 1,900
classes, a pydantic model each). A call needs a few hundred. Here such a re-export package is made lazy
(PEP 562): its module is created with its real `__path__`, and a name is imported from its submodule the first
time it is asked for; a type alias it binds (`X: TypeAlias = Y[object]`) is evaluated, as its own expression,
the first time it is asked for. Nothing of the SDK is changed or copied: every module that runs is the SDK's
own, as it ships, and a package whose `__init__` does anything else (or cannot be read) is imported as usual.

Used by `background_import.py` for the SDK's import; `install()` is idempotent and only ever affects
`anthropic`, `anthropic.types.*`, `anthropic.resources.*` and `anthropic.lib.*` packages.
"""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Iterator, Sequence

PREFIXES = ("anthropic.types", "anthropic.resources", "anthropic.lib")  # and the top package itself
_TYPING = ("typing", "typing_extensions")  # what an `__init__` may import by absolute name (bound at once: loaded)
_installed = False
_lock = threading.Lock()


@dataclass
class Exports:
    """What a package's `__init__` binds: {name: (submodule or "" for `from . import name`, its name there)},
    the modules it star-imports (searched, in order, for any other name), its `__all__`, what it imports from
    `typing` (bound at once), and its type aliases ({name: the SDK's own expression}, evaluated on first use)."""

    names: dict[str, tuple[str, str]] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)
    public: list[str] = field(default_factory=list)
    setup_logging: bool = False
    typing_names: dict[str, tuple[str, str]] = field(default_factory=dict)
    aliases: dict[str, ast.expr] = field(default_factory=dict)


def reexports(source: str, top: bool = False) -> Exports | None:
    """The `Exports` of an `__init__` that only re-exports (relative imports, `__all__`, a docstring); with
    `top`, also the SDK's own top-level extras (its logging set-up, its `__module__` renaming, `typing`).
    None for anything else: such a package is imported as usual."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found = Exports()
    for node in tree.body:
        if not _read(node, found, top):
            return None
    return found


def _read(node: ast.stmt, found: Exports, top: bool) -> bool:
    if isinstance(node, ast.ImportFrom):
        if node.module == "__future__":
            return True
        if node.level == 0 and node.module in _TYPING and all(a.name != "*" for a in node.names):
            found.typing_names.update({a.asname or a.name: (node.module, a.name) for a in node.names})
            return True
        if node.level != 1:
            return False
        for alias in node.names:
            if alias.name == "*":
                found.stars.append(node.module or "")
            else:
                found.names[alias.asname or alias.name] = (node.module or "", alias.name)
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return True  # a docstring
    if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]:
        try:
            found.public = [str(name) for name in ast.literal_eval(node.value)]
        except ValueError:
            return False
        return True
    type_alias = _type_alias(node)
    if type_alias is not None:
        found.aliases[type_alias[0]] = type_alias[1]
        return True
    if not top:
        return False
    if isinstance(node, ast.Import) and [a.name for a in node.names] == ["typing"]:
        return True
    if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
        return all(_read(inner, found, top) for inner in node.body) and not node.orelse
    if isinstance(node, ast.Expr) and ast.unparse(node) == "_setup_logging()":
        found.setup_logging = True
        return True
    # `__locals = locals()` and the loop naming exported symbols' module "anthropic": done per name on demand.
    return ast.unparse(node).startswith(("__locals = locals()", "for __name in __all__:"))


def _type_alias(node: ast.stmt) -> tuple[str, ast.expr] | None:
    """`Name: TypeAlias = X[object]` or `Name = X | Y`: a name bound to a type expression (names, attributes,
    subscripts, `|`, constants), which only reads names, so evaluating it on first use gives what the
    `__init__` would have bound, where it would have (module level: pydantic names a model parametrized there
    after the module). `anthropic.lib.streaming`'s aliases: their `[object]` builds two pydantic models and
    needs the beta streams, about 30 ms of the import a call never uses. The annotation is not kept."""
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        name, value = node.target.id, node.value
    elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        name, value = node.targets[0].id, node.value
    else:
        return None
    if name.startswith("__") or not all(isinstance(part, _TYPE_EXPRESSION) for part in ast.walk(value)):
        return None
    return name, value


_TYPE_EXPRESSION = (ast.Name, ast.Attribute, ast.Subscript, ast.Tuple, ast.Constant, ast.BinOp, ast.BitOr, ast.Load)


class _LazyPackage(importlib.abc.Loader):
    """Creates the package with its own spec and `__path__`; its names come from their submodules on demand."""

    def __init__(self, exports: Exports) -> None:
        self.exports = exports

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module, with the spec's __path__ set by the import system

    def exec_module(self, module: ModuleType) -> None:
        exports, package = self.exports, module.__name__
        renamed = set(exports.public) if exports.setup_logging else set()  # the top package's __module__ rule

        def __getattr__(name: str) -> Any:  # noqa: N807 - PEP 562's hook
            alias = exports.aliases.get(name)
            if alias is not None:  # the SDK's own expression, run at module level as the `__init__` would
                for read in {n.id for n in ast.walk(alias) if isinstance(n, ast.Name)} - set(module.__dict__):
                    try:
                        getattr(module, read)  # a lazy name: bound in the module as it loads
                    except AttributeError:
                        pass  # a builtin (`object`)
                code = compile(ast.Expression(alias), module.__file__ or package, "eval")
                value = eval(code, module.__dict__)  # noqa: S307 - a type expression (`_type_alias`)
            else:
                value = _resolve(package, exports, name)
            if name in renamed and not name.startswith("__"):
                try:
                    value.__module__ = package  # as the SDK's own __init__ does for what it exports
                except (TypeError, AttributeError):
                    pass
            setattr(module, name, value)
            return value

        def __dir__() -> list[str]:  # noqa: N807
            return sorted(set(module.__dict__) | set(exports.names) | set(exports.public) | set(exports.aliases))

        module.__getattr__ = __getattr__  # type: ignore[method-assign]
        module.__dir__ = __dir__  # type: ignore[method-assign]
        if exports.public:
            module.__all__ = list(exports.public)  # type: ignore[attr-defined]
        for name, (source, original) in exports.typing_names.items():
            setattr(module, name, getattr(importlib.import_module(source), original))
        if exports.setup_logging:
            importlib.import_module(f"{package}._utils._logs").setup_logging()


def _resolve(package: str, exports: Exports, name: str) -> Any:
    """`name` of the lazy `package`: from the submodule that binds it, else the submodule of that name
    (`from . import _exceptions`), else a star-imported module that has it."""
    where = exports.names.get(name)
    if where is not None:
        if not where[0]:
            return importlib.import_module(f"{package}.{where[1]}")
        return getattr(importlib.import_module(f"{package}.{where[0]}"), where[1])
    try:
        return importlib.import_module(f"{package}.{name}")
    except ModuleNotFoundError as error:
        if error.name != f"{package}.{name}":
            raise  # the submodule exists and failed to import something of its own
    for star in exports.stars:
        source = importlib.import_module(f"{package}.{star}")
        if name in getattr(source, "__all__", ()) or (not name.startswith("_") and hasattr(source, name)):
            return getattr(source, name)
    raise AttributeError(f"module {package!r} has no attribute {name!r}")


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the SDK's re-export packages as the path finder does, and gives them the lazy loader."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        top = fullname == "anthropic"
        if not (top or fullname.startswith(PREFIXES)):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)  # path None: sys.path (the top)
        if spec is None or not spec.submodule_search_locations or not spec.origin:
            return spec
        try:
            with open(spec.origin, encoding="utf-8") as handle:
                exports = reexports(handle.read(), top)
        except OSError:
            exports = None
        if exports is None:
            return spec  # imported as usual
        spec.loader = _LazyPackage(exports)
        return spec


def install() -> None:
    """Put the finder first on `sys.meta_path` (once per process)."""
    global _installed
    with _lock:
        if not _installed:
            sys.meta_path.insert(0, _Finder())
            _installed = True


# What a call reaches for first, imported in the background thread with the package so that the first call (on
# the event loop) finds them loaded: the HTTP stack under the client (its connection code is imported on the
# first request), the trace propagation the SDK adds to each request. `client.beta` (context management, cache
# diagnosis) loads its own on first use.
FOR_CALLS = ("jiter", "httpcore2", "h11", "anyio._backends._asyncio", "truststore", "opentelemetry.propagate",
             "anthropic.types.shared", "anthropic.lib.streaming")


_spare: Any = None  # the HTTP client made with the import, for the session's client (`take_http_client`)


def take_http_client() -> Any:
    """The SDK's default HTTP client (redirects not followed) made in the import thread, once; None after (or
    before the import finished): the caller makes its own. The session's one connection pool, without its TLS
    set-up on the critical path."""
    global _spare
    with _lock:
        spare, _spare = _spare, None
    return spare


def import_sdk(module: str = "anthropic") -> None:
    """Import the SDK lazily (unless TUI_AGENT_EAGER_SDK=1), then what a call needs: a throwaway client is made
    and its `messages` resource reached (no request is sent), which imports the rest of the call's path."""
    if os.environ.get("TUI_AGENT_EAGER_SDK", "").strip() not in ("", "0"):
        importlib.import_module(module)
        return
    tls = _start_tls_context()
    install()
    with _without_aiohttp():
        sdk = importlib.import_module(module)
        getattr(sdk, "DefaultAsyncHttpxClient")  # anthropic._base_client, where the aiohttp transport is tried
    for name in ("APIStatusError", "APIConnectionError", "NotFoundError"):
        getattr(sdk, name)
    global _spare
    spare = sdk.DefaultAsyncHttpxClient(follow_redirects=False, **tls())
    client = sdk.AsyncAnthropic(api_key="unused", base_url="http://127.0.0.1:9", max_retries=0, http_client=spare)
    client.messages.with_streaming_response.create  # noqa: B018 - the attribute imports the resource
    with _lock:
        _spare = spare
    for name in FOR_CALLS:
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # another version of the SDK's stack: whatever is missing loads with the first call


def _start_tls_context() -> Callable[[], dict[str, Any]]:
    """Start making the TLS context the SDK's HTTP client makes for itself (`verify=True` is
    `httpcore2.default_ssl_context()`: the CA store, SSL_CERT_FILE / SSL_CERT_DIR honoured) in a thread of its
    own; the function returned waits for it and gives the client's `verify=` (nothing when it could not be
    made: the client then makes its own, as before). Loading the CA store takes about 30 ms with the GIL
    released: made after the import, it was a wait on `-p`'s critical path; here it overlaps the import."""
    try:
        import httpcore2
    except ImportError:  # another version of the SDK's stack
        return dict
    made: list[Any] = []

    def make() -> None:
        try:
            made.append(httpcore2.default_ssl_context())
        except Exception:  # noqa: BLE001 - the client makes its own and reports what is wrong with it
            pass

    thread = threading.Thread(target=make, name="tls-context", daemon=True)
    thread.start()

    def verify() -> dict[str, Any]:
        thread.join()
        return {"verify": made[0]} if made else {}

    return verify


@contextmanager
def _without_aiohttp() -> Iterator[None]:
    """The SDK offers an aiohttp transport (`DefaultAioHttpClient`) and imports aiohttp for it when it is
    installed (about a tenth of the SDK's import; it is installed here for the proxy face). Calls use its
    httpx2 transport, so while the SDK's base client is imported aiohttp reads as absent, unless something
    imported it already; it is importable again right after."""
    if "aiohttp" in sys.modules:
        yield
        return
    sys.modules["aiohttp"] = None  # type: ignore[assignment]  # the import system's "not installed" marker
    try:
        yield
    finally:
        if sys.modules.get("aiohttp", 0) is None:
            del sys.modules["aiohttp"]
