"""`tui-agent serve` without a browser: the command line each tab runs, the exposure warning, bad flags,
and the guard that keeps other web sites from driving the agent through the user's browser."""

from __future__ import annotations

import re
import shlex
import socket

import aiohttp
import pytest

from tests.faces.test_demo_and_headless import cli
from tests.ui.support import make_repo
from tests.web.support import Served
from tui_agent.faces.cli import main
from tui_agent.web.launch import app_command, exposure_warning
from tui_agent.web.server import is_loopback


def test_each_tab_runs_the_terminal_command_line(tmp_path):
    """The same `tui-agent -C DIR [flags]` a terminal user runs, so the session comes from the same factory."""
    workspace = tmp_path / "a dir with spaces"
    command = app_command(workspace, {"model": "demo", "max_turns": 5, "transcript": tmp_path / "t.jsonl"},
                          python="/usr/bin/python3")
    assert shlex.split(command) == ["/usr/bin/python3", "-m", "tui_agent", "-C", str(workspace), "--model", "demo",
                                    "--max-turns", "5", "--transcript", str(tmp_path / "t.jsonl")]


def test_session_flags_reach_serve_before_or_after_the_subcommand(tmp_path, monkeypatch):
    seen = {}
    monkeypatch.setattr("tui_agent.web.launch.serve", lambda workspace, **kw: seen.update(kw, workspace=workspace) or 0)
    assert main(["--model", "demo", "serve", "--port", "9001", "-C", str(tmp_path)]) == 0
    assert seen == {"workspace": tmp_path.resolve(), "host": "127.0.0.1", "port": 9001, "max_tabs": 8,
                    "session_flags": {"model": "demo"}}
    assert main(["-C", str(tmp_path), "serve", "--max-turns", "3", "--provider", "demo"]) == 0
    assert seen["session_flags"] == {"max_turns": 3, "provider": "demo"} and seen["port"] == 8000


@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("127.8.0.1", True), ("localhost", True),
                                            ("::1", True), ("[::1]", True), ("0.0.0.0", False), ("::", False),
                                            ("192.168.1.5", False), ("myhost.example", False)])
def test_loopback_hosts(host, loopback, tmp_path):
    assert is_loopback(host) is loopback
    warning = exposure_warning(host, 8000, tmp_path)
    assert (warning is None) is loopback
    if warning:
        assert "anyone who can reach port 8000 can open a session and run tools" in warning and str(tmp_path) in warning


def test_non_loopback_host_warns_before_binding(tmp_path):
    # 192.0.2.1 (TEST-NET-1) is on no machine: the warning comes first, then a one-line bind error.
    out = cli(["serve", "--host", "192.0.2.1", "--port", "8000", "-C", str(tmp_path)], tmp_path)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert lines[0].startswith("warning: listening on 192.0.2.1: anyone who can reach port 8000")
    assert lines[-1].startswith("error: cannot listen on 192.0.2.1:8000")


def test_bad_serve_flags_are_one_line_errors(tmp_path):
    out = cli(["serve", "--port", "0", "-C", str(tmp_path)], tmp_path)
    assert out.returncode == 2 and out.stderr.startswith("error: --port 0 is not a port")
    out = cli(["-p", "hi", "serve", "-C", str(tmp_path)], tmp_path)
    assert out.returncode == 2 and "-p and --allow-write do not apply" in out.stderr
    out = cli(["serve", "--transcript", str(tmp_path / "missing.jsonl"), "-C", str(tmp_path)], tmp_path)
    assert out.returncode == 2 and out.stderr.startswith("error: cannot read transcript")
    out = cli(["serve", "-C", str(tmp_path / "missing")], tmp_path)
    assert out.returncode == 2 and "not a directory" in out.stderr


def test_port_in_use_is_a_clear_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = cli(["serve", "--port", str(port), "-C", str(tmp_path)], tmp_path)
    assert out.returncode == 1 and out.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port}")


async def test_other_sites_cannot_drive_the_agent(tmp_path):
    """A page on another origin (or a DNS-rebinding name) is refused; the server's own page is served."""
    served = Served(make_repo(tmp_path), tmp_path / "config", "--model", "demo")
    try:
        line = served.wait_until_serving()
        assert re.search(rf"at {re.escape(served.base)}\?token=[\w-]{{20,}} ", line), line
        assert "warning" not in "".join(served.stderr)
        ws_url = served.base.replace("http:", "ws:") + f"ws?width=80&height=24&token={served.token}"
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as client:
            async with client.get(served.url) as page:
                html = await page.text()
                assert page.status == 200
            # Every URL the page names is on the server itself: no font CDN.
            urls = set(re.findall(r"""(?:https?|wss?)://[^\s"')]+""", html)) - {"http://www.w3.org/2000/svg"}
            assert urls and all(u.startswith((served.base, served.base.replace("http:", "ws:"))) for u in urls), urls
            async with client.get(served.url, headers={"Host": f"evil.example:{served.port}"}) as rebound:
                assert rebound.status == 403
            for origin in ("http://evil.example", "null", f"http://localhost:{served.port + 1}"):
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await client.ws_connect(ws_url, origin=origin)
                assert refused.value.status == 403
            async with client.ws_connect(ws_url, origin=served.base.rstrip("/")) as socket_ok:
                await socket_ok.send_json(["ping", "1"])
                reply = await socket_ok.receive_json(timeout=30)
                assert reply == ["pong", "1"]
        refusals = "".join(served.stderr)
        assert "Origin 'http://evil.example' is another site" in refusals and "Host 'evil.example" in refusals
    finally:
        assert served.stop() == 0
