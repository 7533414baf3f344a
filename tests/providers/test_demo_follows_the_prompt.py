"""The demo model follows a first-try prompt: named paths, "biggest" files by real size, small talk and
recaps from the conversation, Markdown-safe quotes, and a notice that agrees with the key warning."""

from __future__ import annotations

from markdown_it import MarkdownIt

from tui_agent.core import events as ev
from tui_agent.core.agent.factory import build_session
from tui_agent.core.messages import protocol_errors
from tui_agent.core.providers.demo import md_escape
from tests.faces.test_demo_and_headless import cli, make_repo, run


def tools_of(events) -> list[tuple[str, dict]]:
    return [(e.name, e.input) for e in events if isinstance(e, ev.ToolStarted)]


def text_of_turn(events) -> str:
    return "".join(e.text for e in events if isinstance(e, ev.TextDelta))


async def test_a_path_named_in_the_prompt_is_read_first(tmp_path):
    session, _ = build_session(make_repo(tmp_path), model="demo", headless=True)
    events = await run(session, "what does src/widgets/cli.py do with recipes?")
    tools = tools_of(events)
    assert tools[0] == ("Read", {"file_path": "src/widgets/cli.py"})
    assert "Glob" not in [name for name, _ in tools]
    assert ("Grep", {"pattern": "recipes", "output_mode": "content", "-n": True, "head_limit": 20, "-i": True}) in tools
    assert "`src/widgets/cli.py`" in text_of_turn(events) and events[-1].reason == "completed"


async def test_biggest_files_are_ranked_by_their_real_size(tmp_path):
    repo = make_repo(tmp_path)
    # Named to sort first and short of content: a choice by name or listing order would pick it.
    (repo / "aaa_tiny.py").write_text("x = 1\n")
    session, _ = build_session(repo, model="demo", headless=True)
    events = await run(session, "which are the biggest files here?")
    tools = tools_of(events)
    assert [name for name, _ in tools[:2]] == ["Glob", "Grep"] and tools[1][1]["output_mode"] == "count"
    reads = [i["file_path"] for name, i in tools if name == "Read"]
    assert reads == ["src/widgets/core.py", "src/widgets/recipes.py"]  # 1,201 and 601 lines
    text = text_of_turn(events)
    assert "`src/widgets/core.py`: 1,201 lines" in text and "`src/widgets/recipes.py`: 601 lines" in text
    assert text.index("core.py`: 1,201") < text.index("recipes.py`: 601") < text.index("guide.md`: 402")
    assert "aaa_tiny.py" not in text
    assert protocol_errors(session.history) == []


async def test_a_greeting_and_a_recap_answer_from_the_conversation(tmp_path):
    session, _ = build_session(make_repo(tmp_path), model="demo", headless=True)
    events = await run(session, "hello!")
    assert tools_of(events) == [] and "Hello" in text_of_turn(events)
    await run(session, "how does __init__ assembly work?")
    events = await run(session, "what did we do so far?")
    assert tools_of(events) == [], "a recap needs no exploring"
    text = text_of_turn(events)
    assert "“hello!”" in text and "“how does \\_\\_init\\_\\_ assembly work?”" in text
    assert "`README.md`" in text  # the files it read, from the tool calls it was sent
    assert events[-1].reason == "completed" and protocol_errors(session.history) == []


def rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


def test_quoted_text_is_markdown_safe():
    html = rendered("- `main.py`: " + md_escape('if __name__ == "__main__": run(*args, [x])'))
    assert "<strong>" not in html and "<em>" not in html
    assert "__name__" in html and "*args" in html and "[x]" in html
    assert md_escape("def handler_0(request):") == "def handler_0(request):"  # stays clean in plain output


async def test_a_file_quote_with_dunder_names_renders_literally(tmp_path):
    repo = make_repo(tmp_path)
    (repo / "main.py").write_text('if __name__ == "__main__":\n    main()\n')
    session, _ = build_session(repo, model="demo", headless=True)
    html = rendered(text_of_turn(await run(session, "what does main.py do?")))
    assert "__name__" in html and "<strong>" not in html


def test_the_notice_agrees_with_the_missing_key_warning(tmp_path):
    repo = make_repo(tmp_path)
    out = cli(["-p", "hello", "--model", "claude-sonnet-4-5"], repo)
    assert out.returncode == 0, out.stderr
    warning = next(line for line in out.stderr.splitlines() if line.startswith("[warning]"))
    notice = out.stdout.splitlines()[0]
    assert "No API key set" in warning and "ANTHROPIC_API_KEY" in warning and "OPENAI_API_KEY" in warning
    assert "--model" not in notice, "the user did pass --model claude-…: it cannot be the fix"
    assert "ANTHROPIC_API_KEY" in notice and "OPENAI_API_KEY" in notice
    chosen = cli(["-p", "hello", "--model", "demo"], repo).stdout.splitlines()[0]
    assert "chosen with `--model demo`" in chosen and "API_KEY" not in chosen


async def test_grep_for_each_term_in_a_folder(tmp_path):
    """Issue 18: "grep for X and Y" greps both (one search per term), in the folder named after `in`."""
    repo = make_repo(tmp_path)
    (repo / "src" / "widgets" / "todo.py").write_text("# TODO: parse\n# FIXME: later\n")
    session, _ = build_session(repo, model="demo", headless=True)
    events = await run(session, "grep for TODO, FIXME or XXX in src/widgets")
    greps = [(i["pattern"], i.get("path"), i["-i"]) for name, i in tools_of(events) if name == "Grep"]
    assert greps == [("TODO", "src/widgets", False), ("FIXME", "src/widgets", False), ("XXX", "src/widgets", False)]
    text = text_of_turn(events)
    assert "`TODO`: 1 matching line in 1 file" in text and "`XXX`: 0 matching lines" in text
    events = await run(session, "find where recipes are parsed")  # a question, not a search for its words
    assert [name for name, _ in tools_of(events)][:1] == ["Glob"]
