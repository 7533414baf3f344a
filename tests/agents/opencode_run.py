"""One real opencode (`opencode-ai` from npm) `run` turn — three reads, then an answer — against the Messages
fake, through whatever base URL it is given (the proxy, in the tests).

opencode speaks the Anthropic Messages API through the AI SDK, which takes its base URL from
`ANTHROPIC_BASE_URL` (with `/v1`); its config (`OPENCODE_CONFIG`) allows the reads and turns off autoupdate and
sharing, and `OPENCODE_DISABLE_MODELS_FETCH` keeps it off the network (it runs offline here). It asks for a
session title first with its small model and no tools (a side call), then runs its `read` tool.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.fakes.fake_anthropic import FakeAnthropic, reader_model, stream_reply, text
from tests.fakes.http import Reply
from tests.npm_agents import clean_env

MODEL = "anthropic/claude-sonnet-4-5"
FILES = ["f0.txt", "f1.txt", "f2.txt"]


class OpencodeFake(FakeAnthropic):
    """Its `read` requests get the next read (then the answer); requests without the tool (the title) a text."""

    def __init__(self) -> None:
        super().__init__(model=reader_model(FILES, tool="read", path_key="filePath"))
        self.usage_by_body: list[tuple[dict[str, Any], dict[str, int]]] = []

    def handle(self, path: str, headers: dict[str, str], body: Any, raw: bytes) -> Reply:
        if path.split("?")[0] != "/v1/messages" or not isinstance(body, dict) or headers.get("x-api-key") != self.api_key:
            self.violate(f"not a Messages request with the key: {path}")
            return super().handle(path, headers, body, raw)
        usage = {"input_tokens": len(raw) // 4, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        with self.lock:
            self.usage_by_body.append((body, usage))
        if not any(t.get("name") == "read" for t in body.get("tools") or []):
            return stream_reply(text("Reading three files"), usage=usage)
        return stream_reply(self.model(body), usage=usage)


def run_opencode_turn(exe: Path, root: Path, base_url: str, timeout: float = 180) -> subprocess.CompletedProcess:
    """`opencode run` in `root/work` (its three files written), its state under `root/home`."""
    work, home = root / "work", root / "home"
    work.mkdir(parents=True, exist_ok=True)
    for n, name in enumerate(FILES):
        (work / name).write_text(f"file {n} holds beta-{n}\n")
    config = root / "opencode.json"
    config.write_text(json.dumps({"$schema": "https://opencode.ai/config.json", "autoupdate": False,
                                  "share": "disabled", "permission": {"read": "allow"}}))
    env = clean_env(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
                    XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".local/state"),
                    ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=base_url + "/v1", OPENCODE_CONFIG=str(config),
                    OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_AUTOUPDATE="1", NO_COLOR="1")
    return subprocess.run([str(exe), "run", "--model", MODEL, "Read f0.txt, f1.txt and f2.txt one by one."],
                          cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)
