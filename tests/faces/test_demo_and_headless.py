"""The demo model drives the real tools like an agent, and the headless CLI prints it as promised."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


from tests.turns import turn_events
from tui_agent.core import events as ev
from tui_agent.core.agent.factory import build_session
from tui_agent.core.messages import protocol_errors


def make_repo(root: Path) -> Path:
    """A small repository with a README, a manifest and a few large source files (fixed mtimes)."""
    files = {
        "README.md": "# Widget Factory\n\nBuilds widgets from YAML recipes.\n" + "More prose.\n" * 50,
        "pyproject.toml": '[project]\nname = "widgets"\n',
        "src/widgets/core.py": '"""Core widget assembly."""\n' + "".join(
            f"def assemble_{i}(part):\n    return part * {i}  # widget step\n\n" for i in range(400)),
        "src/widgets/recipes.py": '"""Recipe parsing."""\n' + "".join(
            f"RECIPE_{i} = 'widget recipe number {i}'\n" for i in range(600)),
        "src/widgets/cli.py": '"""Command line for widgets."""\n' + "print('widget')\n" * 300,
        "docs/guide.md": "# Guide\n\n" + "How to build a widget.\n" * 400,
        "tests/test_core.py": "def test_widget():\n    assert True\n" * 100,
        ".gitignore": "build/\n",
        "build/ignored.py": "IGNORED = True\n",
    }
    for i, (name, text) in enumerate(sorted(files.items())):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))
    return root


run = turn_events


async def test_demo_behaves_like_an_agent(tmp_path):
    repo = make_repo(tmp_path)
    session, notices = build_session(repo, model="demo", headless=True)
    events = await run(session, "how are widget recipes parsed?")
    tools = [e.name for e in events if isinstance(e, ev.ToolStarted)]
    assert tools[0] == "Glob" and tools.count("Read") >= 3 and "Grep" in tools
    assert events[-1].reason == "completed"
    text = "".join(e.text for e in events if isinstance(e, ev.TextDelta))
    assert text.startswith("*Demo model (offline)")
    assert "`README.md`" in text and "recipes" in text
    assert not any(e.is_error for e in events if isinstance(e, ev.ToolFinished))
    assert protocol_errors(session.history) == []
    reports = [e.plan for e in events if isinstance(e, ev.CompactionReported)]
    # issue 17, "no loss without pressure" (replaces "one request over large files already truncates older
    # rounds", the old cut-on-read-always rule): the first prompt stays under the high mark, so nothing is cut
    assert reports and all(r.estimated_tokens <= r.high_tokens for r in reports)
    assert not any(r.cuts[i] for r in reports for i in r.cuts if r.is_sent(i)), "under the high mark nothing the agent may need is cut"
    assert "build/ignored.py" not in text


async def test_a_few_prompts_drop_old_turns(tmp_path):
    repo = make_repo(tmp_path)
    session, _ = build_session(repo, model="demo", headless=True, context_window=16_000)  # a small repo: a small window
    dropped, reads = [], []
    prompts = ("how are widget recipes parsed?", "how does assembly work?", "where are the tests?",
               "how is the command line built?", "what does the guide explain?")
    for prompt in prompts:
        events = await run(session, prompt)
        assert events[-1].reason == "completed"
        dropped += [e.plan.dropped_count for e in events if isinstance(e, ev.CompactionReported)]
        reads.append([e.input["file_path"] for e in events if isinstance(e, ev.ToolStarted) and e.name == "Read"])
    assert max(dropped) > 0
    assert len(session.history) >= len(prompts) * 11  # a question about the code: five tool rounds and an answer
    assert protocol_errors(session.history) == []
    # The second prompt reads files the first did not.
    assert not set(reads[1][:2]) & set(reads[0])
    assert all(len(r) >= 3 for r in reads)


async def test_demo_is_deterministic(tmp_path):
    repo = make_repo(tmp_path)
    texts = []
    for _ in range(2):
        session, _ = build_session(repo, model="demo", headless=True)
        events = await run(session, "what is in this repo?")
        texts.append("".join(e.text for e in events if isinstance(e, ev.TextDelta)))
    assert texts[0] == texts[1]


def cli(args, cwd, env_extra=None, stdin=None):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "tui_agent", *args], cwd=cwd, env=env, input=stdin,
                          capture_output=True, text=True, timeout=60)


def second_prompt(repo, flags, env_extra=None):
    """A second `-p` prompt that continues the first (`--continue`): an unasked event takes nothing of the
    turn in progress (issue 28 §3), so an event of the first prompt's results comes at the second's call."""
    first = cli(["-p", "how are widget recipes parsed?", *flags], repo, env_extra)
    assert first.returncode == 0, first.stderr
    return cli(["--continue", "-p", "how does assembly work?", *flags], repo, env_extra)


def test_headless_answers_with_the_demo_model(tmp_path):
    repo = make_repo(tmp_path)
    out = cli(["-p", "what is in this repo?"], repo)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith("*Demo model (offline)")
    assert "ANTHROPIC_API_KEY" in out.stdout.splitlines()[0]
    assert "[tool] Glob: *" in out.stderr and "[tool] Read: README.md" in out.stderr
    assert "Here is what I found." in out.stdout
    assert "[tool]" not in out.stdout


def test_trace_prints_compact_run_with_consistent_numbers(tmp_path):
    repo = make_repo(tmp_path)
    # a window the one prompt overflows: compaction runs under pressure (under the high mark nothing is cut)
    out = second_prompt(repo, ["--context-window", "15000"], {"TRACE": "1"})
    assert out.returncode == 0, out.stderr
    lines = [l for l in out.stderr.splitlines() if "compact.run" in l]
    assert lines, out.stderr
    pattern = re.compile(r"^\[trace\] compact\.run before=(\d+) after=(\d+) droppedMessages=(\d+) truncatedBlocks=(\d+)"
                         r" ts=\S+Z session=\S+$")
    for line in lines:
        before, after, dropped, truncated = map(int, pattern.match(line).groups())
        # the dropped messages leave, one recap message stands for them (a drop happens under pressure now)
        assert before - dropped + (1 if dropped else 0) == after and (dropped or truncated)
    assert "[trace] cli.start mode=headless" in out.stderr
    sessions = {l.rsplit("session=", 1)[1] for l in out.stderr.splitlines() if l.startswith("[trace]")}
    assert len(sessions) == 1 and "-" not in sessions  # every line, cli.start included, names the session
    assert "widget" not in "\n".join(l for l in out.stderr.splitlines() if l.startswith("[trace]"))


def test_prompt_from_stdin(tmp_path):
    repo = make_repo(tmp_path)
    for args in (["-p", "-"], ["-p"]):
        out = cli(args, repo, stdin="what is in this repo?\n")
        assert out.returncode == 0, out.stderr
        assert "Here is what I found." in out.stdout


def test_headless_failures_are_one_line_and_non_zero(tmp_path):
    repo = make_repo(tmp_path)
    out = cli(["-p", ""], repo)
    assert out.returncode == 2 and out.stderr.startswith("error: no prompt")
    out = cli(["-p", "look around", "--max-turns", "1"], repo)
    assert out.returncode == 3 and "--max-turns" in out.stderr  # stopped early: not a usage error
    out = cli(["-p", "hi", "--no-such-flag"], repo)
    assert out.returncode == 2 and "unrecognized arguments" in out.stderr
    out = cli(["-p", "hi", "-C", str(repo / "missing")], repo)
    assert out.returncode == 2 and "not a directory" in out.stderr


def test_headless_transcript_says_what_it_loaded(tmp_path):
    repo = make_repo(tmp_path / "repo")
    log = tmp_path / "session.jsonl"
    log.write_text('{"type":"user","message":{"role":"user","content":"hi"}}\nnot json\n[1]\n'
                   '{"type":"assistant","message":{"id":"m1","role":"assistant","content":"hello"}}\n')
    out = cli(["-p", "what did we do so far?", "--transcript", str(log)], repo)
    assert out.returncode == 0, out.stderr
    assert "[info] Loaded 2 messages from session.jsonl (2 unreadable lines skipped)." in out.stderr.splitlines()
    assert "Loaded" not in out.stdout


def test_exit_codes_are_distinct_and_documented():
    """Scripts branch on the code: each meaning has its own, and the manual's table (docs/usage.md) matches the module."""
    from tui_agent.faces import exit_codes

    codes = [code for code, _ in exit_codes.TABLE]
    assert len(set(codes)) == len(codes)
    assert exit_codes.USAGE == 2 and exit_codes.MAX_TURNS not in (2, exit_codes.DENIED)
    readme = (Path(__file__).resolve().parents[2] / "docs" / "usage.md").read_text()  # the manual holds the table
    documented = dict(re.findall(r"^\| (\d+) \| (.+) \|$", readme, flags=re.MULTILINE))
    assert sorted(int(c) for c in documented) == sorted(codes)
    assert "--max-turns" in documented[str(exit_codes.MAX_TURNS)] and "denied" in documented[str(exit_codes.DENIED)]


def test_version_and_help(tmp_path):
    from tui_agent import __version__

    out = cli(["--version"], tmp_path)
    assert out.stdout.strip() == f"tui-agent {__version__}"
    out = cli(["--help"], tmp_path)
    assert "-p" in out.stdout and "--max-turns" in out.stdout and "ANTHROPIC_API_KEY" in out.stdout
    assert "exit codes:" in out.stdout and "stopped early at --max-turns" in out.stdout


def test_version_does_not_import_heavy_modules():
    code = ("import sys\nfrom tui_agent.faces import cli\n"
            "try:\n    cli.main(['--version'])\nexcept SystemExit:\n    pass\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'textual','rich','anthropic','openai','mcp',"
            "'aiohttp','textual_serve','jinja2'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().endswith("[]")


async def test_demo_uses_agents_md_and_skills(tmp_path):
    repo = make_repo(tmp_path)
    (repo / "AGENTS.md").write_text("Always mention widgets.\n")
    skill = repo / ".agents" / "skills" / "review"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: review\ndescription: Review a change\n---\n# Review workflow\n")
    session, _ = build_session(repo, model="demo", headless=True)
    events = await run(session, "how are widget recipes parsed?")
    text = "".join(e.text for e in events if isinstance(e, ev.TextDelta))
    assert "AGENTS.md" in text
    skill_results = [e for e in events if isinstance(e, ev.ToolFinished) and e.name == "Skill"]
    assert skill_results and "# Review workflow" in skill_results[0].content
    assert events[-1].reason == "completed"
    events = await run(session, "/review the parser")
    first_tool = next(e for e in events if isinstance(e, ev.ToolStarted))
    assert first_tool.name == "Skill" and first_tool.input == {"skill": "review", "args": "the parser"}
    assert events[-1].reason == "completed"
    assert protocol_errors(session.history) == []


async def test_the_demo_window_shows_every_tier_within_a_few_prompts(tmp_path):
    """Issue 17: masks reach the request, cuts wait for pressure, and the demo's 24k window still shows
    cut, mask, a drop that keeps the head, and the summary within five prompts."""
    repo = make_repo(tmp_path)
    session, _ = build_session(repo, model="demo", headless=True)
    plans = []
    for prompt in ("how are widget recipes parsed?", "how does assembly work?", "where are the tests?",
                   "how is the command line built?", "what does the guide explain?"):
        events = await run(session, prompt)
        assert events[-1].reason == "completed"
        plans += [e.plan for e in events if isinstance(e, ev.CompactionReported)]
    kinds = {kind for p in plans if p.event is not None for kind in p.event.kinds}
    assert {"cut", "mask", "drop"} <= kinds
    assert any(p.is_sent(i) for p in plans for i in p.masks), "a masked result is sent as its placeholder"
    dropping = [p for p in plans if p.event is not None and "drop" in p.event.kinds]
    assert dropping[0].drop_from > 0, "the drop keeps the head of the conversation"
    assert any(p.recap is not None and p.recap.summary for p in plans), "the summary replaces the recap"
    assert all(p.estimated_tokens <= p.high_tokens for p in plans if p.event is None or not p.event.major)
