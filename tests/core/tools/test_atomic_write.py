"""Write and Edit replace a file whole or not at all (issue 9, item 10).

Before, both truncated the file and then wrote: a write that failed midway (disk full, quota, a file-size
limit) left a 204 kB file at 100 kB. The real failure is produced with RLIMIT_FSIZE in a subprocess (the
kernel refuses to grow any file past the limit, with EFBIG once SIGXFSZ is ignored).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tui_agent.core.tools import atomic
from tui_agent.core.tools.base import ToolContext, ToolError
from tui_agent.core.tools.edit import EditTool
from tui_agent.core.tools.write import WriteTool

ORIGINAL = b"".join(b"original line %05d\n" % i for i in range(5000))  # 100 kB
BIGGER = "".join(f"replacement line {i:06d}\n" for i in range(8500))  # ~204 kB

LIMITED_RUN = r"""
import asyncio, json, resource, signal, sys
from pathlib import Path
from tui_agent.core.tools.base import ToolContext, ToolError
from tui_agent.core.tools.edit import EditTool
from tui_agent.core.tools.write import WriteTool

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (150_000, 150_000))
workspace, tool, args = Path(sys.argv[1]), sys.argv[2], json.loads(sys.stdin.read())
ctx = ToolContext(workspace=workspace)
path = (workspace / args["file_path"]).resolve()
ctx.read_files[str(path)] = path.stat().st_mtime
try:
    out = asyncio.run((WriteTool() if tool == "Write" else EditTool()).call(args, ctx))
    print(json.dumps({"error": None, "content": out.content}))
except ToolError as error:
    print(json.dumps({"error": str(error)}))
"""


def run_limited(workspace: Path, tool: str, args: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", LIMITED_RUN, str(workspace), tool], input=json.dumps(args),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_a_write_that_fails_midway_leaves_the_original_whole(tmp_path: Path, tool: str) -> None:
    target = tmp_path / "data.txt"
    target.write_bytes(ORIGINAL)
    if tool == "Write":
        args = {"file_path": "data.txt", "content": BIGGER}
    else:
        args = {"file_path": "data.txt", "old_string": "original line 00000\n", "new_string": BIGGER}
    result = run_limited(tmp_path, tool, args)
    assert result["error"] and "Cannot write data.txt" in result["error"]
    assert target.read_bytes() == ORIGINAL  # before: truncated to the 150 kB limit
    assert leftovers(tmp_path) == []


async def test_a_failing_write_call_keeps_the_original(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same in-process: the disk fills up after the first chunk."""
    target = tmp_path / "data.txt"
    target.write_bytes(ORIGINAL)
    real_write = os.write
    calls = []

    def full_disk(fd: int, data) -> int:
        calls.append(len(data))
        if len(calls) > 1:
            raise OSError(28, "No space left on device")
        return real_write(fd, bytes(data[:4096]))

    monkeypatch.setattr(atomic.os, "write", full_disk)
    with pytest.raises(ToolError, match="No space left on device"):
        await WriteTool().call({"file_path": "data.txt", "content": BIGGER}, ToolContext(workspace=tmp_path))
    assert len(calls) == 2
    assert target.read_bytes() == ORIGINAL
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("mode", [0o755, 0o600, 0o640])
async def test_the_file_mode_is_kept(tmp_path: Path, mode: int) -> None:
    target = tmp_path / "run.sh"
    target.write_text("echo one\n")
    target.chmod(mode)
    ctx = ToolContext(workspace=tmp_path)
    await WriteTool().call({"file_path": "run.sh", "content": "echo two\n"}, ctx)
    assert stat.S_IMODE(target.stat().st_mode) == mode
    await EditTool().call({"file_path": "run.sh", "old_string": "two", "new_string": "three"}, ctx)
    assert stat.S_IMODE(target.stat().st_mode) == mode and target.read_text() == "echo three\n"


async def test_a_new_file_gets_the_usual_mode(tmp_path: Path) -> None:
    await WriteTool().call({"file_path": "new.txt", "content": "x"}, ToolContext(workspace=tmp_path))
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o666 & ~umask


async def test_writing_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to("real.txt")
    await WriteTool().call({"file_path": "link.txt", "content": "new"}, ToolContext(workspace=tmp_path))
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "new"
    assert leftovers(tmp_path) == []
