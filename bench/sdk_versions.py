"""The provider tests against every end of the `anthropic` pin: the oldest and the newest version it allows.

    .venv/bin/python bench/sdk_versions.py [--all] [--tests tests/providers] [-n 2]

pyproject's pin (`anthropic>=A,<B`) is read, the versions the package index offers are asked once (`pip index
versions`), and for the oldest and the newest allowed (`--all`: each) a throwaway venv is made beside this
checkout's `.venv`: it sees the project's other packages through a `.pth` file and installs only that
`anthropic` (and the `httpx2` released with it) on top. The tests run in it with `python -m pytest`; one
line per version says what passed. Exit status 1 when any version failed.

Issue 40: a fresh venv installed 2.17.0 where the suite had been run on an older one, and the README's test
command failed there; this is how a change is tried on both ends before it lands.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import sysconfig
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pin() -> str:
    """The `anthropic` requirement as pyproject states it, e.g. `>=2.14,<3`."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for requirement in data["project"]["dependencies"]:
        name = re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0]
        if name.lower() == "anthropic":
            return requirement[len(name):].strip()
    raise SystemExit("pyproject.toml does not require anthropic")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def allowed(spec: str, versions: list[str]) -> list[str]:
    """The final releases among `versions` that `spec` (comma-separated >=, >, <=, <, ==) allows, oldest first."""
    checks = {">=": lambda v, b: v >= b, ">": lambda v, b: v > b, "<=": lambda v, b: v <= b,
              "<": lambda v, b: v < b, "==": lambda v, b: v == b}
    clauses = [re.match(r"\s*(>=|<=|==|>|<)\s*([\d.]+)\s*$", part) for part in spec.split(",") if part.strip()]
    if not all(clauses):
        raise SystemExit(f"cannot read the pin {spec!r}")
    finals = [v for v in versions if re.fullmatch(r"\d+(\.\d+)*", v)]
    ok = [v for v in finals if all(checks[c[1]](_version(v), _version(c[2])) for c in clauses if c)]
    return sorted(ok, key=_version)


def offered() -> list[str]:
    """The versions of anthropic the configured package index offers (one look-up)."""
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "anthropic"], capture_output=True,
                         text=True, check=True).stdout
    line = next((text for text in out.splitlines() if text.startswith("Available versions:")), "")
    return [v.strip() for v in line.removeprefix("Available versions:").split(",") if v.strip()]


def run_version(version: str, tests: list[str], workers: str) -> tuple[bool, str, float]:
    """Make the throwaway venv, install `anthropic==version`, run the tests: (passed, last line, seconds)."""
    with tempfile.TemporaryDirectory(prefix=f"sdk-{version}-") as folder:
        venv = Path(folder) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        python = venv / "bin" / "python"
        site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        # The project's packages after this venv's own: the anthropic installed here shadows the project's.
        Path(site, "project-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n" + str(ROOT) + "\n")
        install = subprocess.run([str(python), "-m", "pip", "install", "-q", f"anthropic[bedrock,vertex]=={version}"],
                                 capture_output=True, text=True)
        if install.returncode:
            return False, "install failed: " + " ".join(install.stderr.split())[-300:], 0.0
        seen = subprocess.run([str(python), "-c", "import anthropic; print(anthropic.__version__)"],
                              capture_output=True, text=True).stdout.strip()
        if seen != version:
            return False, f"the venv imported anthropic {seen or '?'}, not {version}", 0.0
        started = time.perf_counter()
        run = subprocess.run([str(python), "-m", "pytest", *tests, "-q", "-n", workers, "-p", "no:cacheprovider"],
                             cwd=ROOT, capture_output=True, text=True)
        lines = [line for line in run.stdout.splitlines() if line.strip()]
        failed = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
        summary = "; ".join(failed[:5] + lines[-1:]) if lines else run.stderr[-300:]
        return run.returncode == 0, summary, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every allowed version, not only the two ends")
    parser.add_argument("--tests", nargs="+", default=["tests/providers"])
    parser.add_argument("-n", default="2", help="pytest-xdist workers (the machine is shared)")
    args = parser.parse_args()
    spec = pin()
    versions = allowed(spec, offered())
    if not versions:
        raise SystemExit(f"the index offers no anthropic version that {spec} allows")
    chosen = versions if args.all else sorted({versions[0], versions[-1]}, key=_version)
    print(f"anthropic{spec}: the index offers {', '.join(versions)}; testing {', '.join(chosen)}", flush=True)
    results = []
    for version in chosen:
        passed, summary, seconds = run_version(version, args.tests, args.n)
        results.append(passed)
        print(f"anthropic {version}: {'passed' if passed else 'FAILED'} ({seconds:.0f} s) — {summary}", flush=True)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
