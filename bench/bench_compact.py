"""Benchmark: `compact_messages` grows linearly, and `tui-agent --version` starts fast.

Run: `.venv/bin/python bench/bench_compact.py`. Prints ratios measured side by side in one run (these
machines are noisy), not absolute targets: time at 10,000 messages / time at 1,000 must be ≤ 12, and
`tui-agent --version` should take ≤ 0.15 s (Claude Code takes 0.15 s, Codex 0.11 s on these machines).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tui_agent.compact import CompactOptions, compact_messages  # noqa: E402
from tui_agent.core.messages import tool_result_block, user_text  # noqa: E402


def history(n: int) -> list[dict]:
    """Realistic shape: a user prompt, then tool rounds with large results, every 14 messages."""
    out: list[dict] = []
    i = 0
    while len(out) < n:
        if len(out) % 14 == 0:
            out.append(user_text(f"prompt {i} " + "words " * 20))
        elif len(out) % 2 == 1:
            out.append({"role": "assistant", "content": [
                {"type": "text", "text": "Let me read it."},
                {"type": "tool_use", "id": f"t{i}", "name": "Read", "input": {"file_path": f"src/f{i}.py"}}]})
        else:
            out.append({"role": "user", "content": [tool_result_block(f"t{i - 1}", "x" * (2000 + (i * 37) % 9000))]})
        i += 1
    if out[-1]["role"] == "assistant" and any(b["type"] == "tool_use" for b in out[-1]["content"]):
        out.pop()
    return out


def time_compact(messages: list[dict], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        compact_messages(messages, CompactOptions(enabled=True))
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def time_version(repeat: int = 9) -> float:
    exe = Path(sys.executable).with_name("tui-agent")
    cmd = [str(exe), "--version"] if exe.exists() else [sys.executable, "-m", "tui_agent", "--version"]
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    small, large = history(1_000), history(10_000)
    time_compact(small, 3)  # warm up
    rounds = []
    for _ in range(5):  # interleave so noise hits both sizes alike
        t_small = time_compact(small, 5)
        t_large = time_compact(large, 5)
        rounds.append((t_small, t_large))
    t_small = statistics.median(r[0] for r in rounds)
    t_large = statistics.median(r[1] for r in rounds)
    ratio = t_large / t_small
    print(f"compact_messages  1,000 msgs: {t_small * 1000:8.2f} ms")
    print(f"compact_messages 10,000 msgs: {t_large * 1000:8.2f} ms")
    print(f"ratio 10k/1k: {ratio:.2f}  (target ≤ 12: {'OK' if ratio <= 12 else 'FAIL'})")
    startup = time_version()
    print(f"tui-agent --version: {startup * 1000:.0f} ms median  (target ≤ 150 ms: {'OK' if startup <= 0.15 else 'FAIL'})")
    return 0 if ratio <= 12 and startup <= 0.15 else 1


if __name__ == "__main__":
    raise SystemExit(main())
