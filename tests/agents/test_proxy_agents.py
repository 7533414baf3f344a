"""The real agents through `tui-agent proxy`: Claude Code and the Codex CLI (npm, cached) each complete a
multi-call turn with the proxy in front of a strict loopback fake of their API; the fake receives exactly the
requests the proxy recorded from the agent, `--json` prints one line per call with the fake's usage, and
`replay` reads the recording as one step per call of the conversation."""

from __future__ import annotations

import json

import pytest

from tests.agents.claude_run import ClaudeCodeFake, run_claude_turn, workspace
from tests.agents.codex_run import fake_for_codex, run_codex_turn
from tests.agents.proxy_run import ProxyProcess
from tests.npm_agents import claude_env, npm_agent, rollouts
from tui_agent.core.recordings.replay import open_replay


def _bodies(items) -> list[str]:
    return sorted(json.dumps(b, sort_keys=True) for b in items)


def test_claude_code_completes_a_turn_through_the_proxy_and_the_fake_gets_its_exact_requests(tmp_path):
    files = workspace(tmp_path / "work")
    fake = ClaudeCodeFake(files)
    with fake:
        proxy = ProxyProcess(fake.origin, tmp_path / "rec")
        try:
            done = run_claude_turn(npm_agent("claude-code"), claude_env(tmp_path / "home", tmp_path / "work",
                                                                        proxy.base), tmp_path / "work")
        finally:
            lines = proxy.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    assert "3 files" in done.stdout
    assert fake.violations == []
    exchanges = proxy.exchanges()
    assert _bodies(e["request"] for e in exchanges) == _bodies(r["body"] for r in fake.requests)
    calls = [e for e in exchanges if e["call"]]
    assert len(lines) == len(calls) == len([r for r in fake.requests if r["path"].startswith("/v1/messages?")
                                            or r["path"] == "/v1/messages"])
    given = {json.dumps(body, sort_keys=True): usage for body, usage in fake.usage_by_body}
    by_call = {e["call"]: e for e in calls}
    for line in lines:
        exchange = by_call[line["call"]]
        assert line["usage"]["input_tokens"] == given[json.dumps(exchange["request"], sort_keys=True)]["input_tokens"]
        assert (line["api"], line["status"]) == ("anthropic-messages", 200)
        assert line["messages"] == len(exchange["request"]["messages"])
    main = [e for e in calls if any(t.get("name") == "Read" for t in e["request"].get("tools") or [])]
    assert len(main) == 4  # three Reads and the answer
    replay = open_replay(proxy.recording(), ("none", "v2"))
    assert [replay.step(k).real_tokens for k in range(replay.calls)] == [
        e["usage"]["input_tokens"] for e in sorted(main, key=lambda e: e["call"])]


def test_codex_completes_a_turn_through_the_proxy_and_the_fake_gets_its_exact_requests(tmp_path):
    fake, given = fake_for_codex()
    with fake:
        proxy = ProxyProcess(fake.origin, tmp_path / "rec")
        try:
            done = run_codex_turn(tmp_path / "home", tmp_path / "work", proxy.base + "/v1")
        finally:
            lines = proxy.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    assert fake.violations == []
    exchanges = proxy.exchanges()
    assert _bodies(e["request"] for e in exchanges) == _bodies(r["body"] for r in fake.requests)
    assert [line["usage"] for line in lines] == given
    assert all(line["api"] == "openai-responses" and line["status"] == 200 for line in lines)
    # the recording and Codex's own rollout tell the same calls
    replay = open_replay(proxy.recording(), ("none", "v2"))
    [rollout] = rollouts(tmp_path / "home")
    from_rollout = open_replay(rollout, ("none",))
    assert replay.calls == from_rollout.calls == len(given)
    assert [replay.step(k).real_tokens for k in range(replay.calls)] == [u["input_tokens"] for u in given]
    assert any(c.kind == "boundary" for c in replay.agent_compactions)  # Codex's compaction, seen in the requests
    from tui_agent.core.recordings.call_figures import FiguresRun

    run = FiguresRun()
    costs = [run.figures(replay, replay.step(k)).recorded_cost_usd for k in range(replay.calls)]
    assert all(cost is not None and cost > 0 for cost in costs)  # gpt-5-codex has a price now


def test_claude_codes_side_calls_through_the_proxy_leave_the_step_timeline_whole(tmp_path):
    """With its nonessential traffic allowed, Claude Code also asks for a session title (before its first
    real call): a side call, listed as one, and the replay is still one step per Read and the answer."""
    from tui_agent.core.recordings.codex_logs import read_log

    files = workspace(tmp_path / "work")
    fake = ClaudeCodeFake(files)
    with fake:
        proxy = ProxyProcess(fake.origin, tmp_path / "rec")
        try:
            env = claude_env(tmp_path / "home", tmp_path / "work", proxy.base)
            env.pop("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC")
            done = run_claude_turn(npm_agent("claude-code"), env, tmp_path / "work")
        finally:
            proxy.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    calls = [e for e in proxy.exchanges() if e["call"]]
    main = [e["call"] for e in calls if any(t.get("name") == "Read" for t in e["request"].get("tools") or [])]
    reader = read_log(proxy.recording()).reader
    assert len(main) == 4 and reader.step_calls == sorted(main)
    assert sorted([s.call for s in reader.side] + main) == sorted(e["call"] for e in calls)
    assert reader.side  # the title request (at least)
    assert open_replay(proxy.recording(), ("none", "v2")).agent_compactions == []


@pytest.mark.slow
def test_opencode_completes_a_turn_through_the_proxy_and_its_title_request_is_a_side_call(tmp_path):
    """opencode (npm `opencode-ai`, offline) through the proxy in front of the Messages fake: the fake gets
    the requests the proxy recorded; its title request (small model, no tools) is a side call, and the
    replay is one step per read and the answer."""
    from tests.agents.opencode_run import OpencodeFake, run_opencode_turn
    from tui_agent.core.recordings.codex_logs import read_log

    fake = OpencodeFake()
    with fake:
        proxy = ProxyProcess(fake.origin, tmp_path / "rec")
        try:
            done = run_opencode_turn(npm_agent("opencode"), tmp_path, proxy.base)
        finally:
            lines = proxy.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    assert "I read 3 files." in done.stdout
    assert fake.violations == []
    exchanges = proxy.exchanges()
    assert _bodies(e["request"] for e in exchanges) == _bodies(r["body"] for r in fake.requests)
    assert len(lines) == len(exchanges) == len(fake.requests)
    main = [e["call"] for e in exchanges if any(t.get("name") == "read" for t in e["request"].get("tools") or [])]
    reader = read_log(proxy.recording()).reader
    assert len(main) == 4 and reader.step_calls == sorted(main)
    assert [s.why for s in reader.side] == ["no tools"]  # the title, asked before the first real call
    replay = open_replay(proxy.recording(), ("none", "v2"))
    assert replay.agent_compactions == [] and [replay.step(k).real_tokens for k in range(4)] == [
        e["usage"]["input_tokens"] for e in sorted(exchanges, key=lambda e: e["call"]) if e["call"] in main]


@pytest.mark.slow  # (the server-side form runs in the default suite: test_proxy_launch's Codex test)
@pytest.mark.parametrize("mode", ["remote", "local"])
def test_codexs_compactions_are_compaction_lines_in_json_and_replay_lists_them(tmp_path, mode):
    """Codex compacting ten times through `tui-agent proxy --json`: each request that asks to compact (the
    server's `compaction_trigger`, or its own summary prompt) is a `compaction` line, and the request after it
    says `compacted`; the replay of the recording lists ten compactions."""
    from tests.agents.codex_compactions import COMPACTIONS, compacting_fake, run_compacting_session

    fake = compacting_fake()
    with fake:
        proxy = ProxyProcess(fake.origin, tmp_path / "rec")
        try:
            done = run_compacting_session(mode, tmp_path / "home", tmp_path / "work", proxy.base + "/v1")
        finally:
            lines = proxy.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    assert fake.violations == []
    asked = [line for line in lines if line["kind"] == "compaction"]
    assert len(asked) == COMPACTIONS and {line["compaction"] for line in asked} == {
        "server" if mode == "remote" else "summary"}
    assert sum(line["compacted"] for line in lines) == COMPACTIONS
    assert len(open_replay(proxy.recording(), ("none",)).agent_compactions) == COMPACTIONS
