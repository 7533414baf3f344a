"""Shared bits for the MCP tests: our demo server and config-file writers."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

DEMO_SERVER = Path(__file__).parent / "servers" / "demo_server.py"


def demo_entry(**extra: Any) -> dict[str, Any]:
    """A `.mcp.json` entry that runs our demo server over stdio with this interpreter."""
    return {"command": sys.executable, "args": [str(DEMO_SERVER)], **extra}


def write_config(path: Path, servers: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path
