"""Issue 40: the demo answers what was asked. A named path that is not here is looked for and said not to
exist (never answered by reading unrelated files); "read the data files" reads them; the counts an answer
gives are of what the demo did, even after compaction took reads out of the request; the extractive
summary's focus names the files that hold it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.faces.test_demo_and_headless import make_repo, run
from tui_agent.core import events as ev
from tui_agent.core.agent.factory import build_session
from tui_agent.core.compaction.recap import build_recap, facts_of
from tui_agent.core.compaction.summary import extractive_summary, summary_messages
from tui_agent.core.messages import protocol_errors, tool_result_block, user_text



def tools_of(events) -> list[tuple[str, dict]]:
    return [(e.name, e.input) for e in events if isinstance(e, ev.ToolStarted)]


def text_of_turn(events) -> str:
    return "".join(e.text for e in events if isinstance(e, ev.TextDelta))


def reads_of(events) -> list[str]:
    return [str(i["file_path"]) for name, i in tools_of(events) if name == "Read"]


def with_data(root: Path) -> Path:
    repo = make_repo(root)
    files = {"data/stations.csv": "station,temp\nA,12.5\nB,9.1\n", "data/config.json": '{"units": "celsius"}\n',
             "fixtures/recipes.yaml": "recipes:\n  - bolt\n", "data/big.parquet": "PAR1\x00\x00binary",
             "package.json": '{"name": "x"}\n', ".github/workflows/ci.yml": "on: push\n"}
    for i, (name, text) in enumerate(sorted(files.items())):
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (1_700_000_100 + i, 1_700_000_100 + i))
    return repo


async def test_a_missing_path_is_looked_for_and_said_not_to_exist(tmp_path):
    session, _ = build_session(make_repo(tmp_path), model="demo", headless=True)
    events = await run(session, "what does src/app.py do?")
    assert tools_of(events) == [("Glob", {"pattern": "**/*app*"}), ("Glob", {"pattern": "src/*"})], \
        "a look for it (its name anywhere, its folder), no unrelated reads"
    text = text_of_turn(events)
    assert "There is no `src/app.py` in this repository, and no file's name is like it" in text
    assert "Globs for `**/*app*` and `src/*` found none" in text
    assert "I read" not in text and events[-1].reason == "completed"


async def test_a_missing_path_offers_the_closest_and_reads_a_file_of_that_name(tmp_path):
    session, _ = build_session(make_repo(tmp_path), model="demo", headless=True)
    events = await run(session, "what does lib/recipes.py do?")
    assert tools_of(events)[0] == ("Glob", {"pattern": "**/*recipes*"})
    assert reads_of(events) == ["src/widgets/recipes.py"], "the file of that very name, nothing else"
    text = text_of_turn(events)
    assert "There is no `lib/recipes.py` in this repository" in text
    assert "the file named `recipes.py` is `src/widgets/recipes.py`" in text and "I read 1 file:" in text
    events = await run(session, "and what about src/widgets/cores.py?")  # no file of that name: the closest
    assert reads_of(events) == []
    text = text_of_turn(events)
    assert "no file here is named `cores.py`" in text
    assert "The closest files (Globs for `**/*cores*` and `src/widgets/*`): `src/widgets/core.py`" in text
    assert protocol_errors(session.history) == []


async def test_the_data_files_are_read_when_asked_with_the_overview(tmp_path):
    session, _ = build_session(with_data(tmp_path), model="demo", headless=True)
    events = await run(session, "what is in this repo? read the data files")
    reads = reads_of(events)
    assert {"data/config.json", "data/stations.csv", "fixtures/recipes.yaml"} <= set(reads)
    assert "data/big.parquet" not in reads and "package.json" not in reads and ".github/workflows/ci.yml" not in reads
    text = text_of_turn(events)
    assert "The layout:" in text and "Data files: 4 files found, 3 read" in text
    assert "- `data/stations.csv` (3 lines shown): station,temp" in text
    assert "Not read, binary (1 file; Read shows only text): `data/big.parquet`" in text
    assert not any(e.is_error for e in events if isinstance(e, ev.ToolFinished))


async def test_read_the_data_files_alone_reads_them_and_says_when_there_are_none(tmp_path):
    session, _ = build_session(with_data(tmp_path / "a"), model="demo", headless=True)
    events = await run(session, "read the data files")
    assert [name for name, _ in tools_of(events)][:2] == ["Glob", "Glob"]
    assert sorted(reads_of(events)) == ["data/config.json", "data/stations.csv", "fixtures/recipes.yaml"]
    plain, _ = build_session(make_repo(tmp_path / "b"), model="demo", headless=True)
    text = text_of_turn(await run(plain, "read the data files"))
    assert "I found no data files here" in text


async def test_the_count_of_files_read_is_true_after_compaction_took_some(tmp_path):
    """One question reads five files and a small window masks some within the turn: the answer said "I read
    1 file" after four. It counts every read now, and says which compaction took out since."""
    session, _ = build_session(make_repo(tmp_path), model="demo", headless=True, context_window=12_000)
    events = await run(session, "how are widget recipes parsed?")
    reads = list(dict.fromkeys(reads_of(events)))
    masked = [e for e in events if isinstance(e, ev.CompactionReported) and e.plan.masks]
    assert len(reads) >= 4 and masked, "the scene: several reads, some masked before the answer"
    text = text_of_turn(events)
    count = re.search(r"I read (\d+) files?:", text)
    assert count and int(count.group(1)) == len(reads), text
    assert all(f"`{path}`" in text.split("I read", 1)[1] for path in reads)
    assert "since taken out of my context by compaction" in text


async def test_reads_a_recap_took_within_the_turn_are_named_not_left_out(tmp_path):
    """A window so small that the turn's first reads were dropped behind a recap: the answer names them from
    the recap before the prompt and counts the reads since (it said "I read 1 file" after three)."""
    session, _ = build_session(make_repo(tmp_path), model="demo", headless=True, context_window=10_000)
    events = await run(session, "how are widget recipes parsed?")
    text = text_of_turn(events)
    assert reads_of(events)[:2] == ["README.md", "pyproject.toml"]
    assert "The recap before your prompt lists 2 files read earlier: `README.md`, `pyproject.toml`." in text
    assert "Since then, I read 1 file:" in text


async def test_the_recap_answer_and_the_biggest_files_say_only_what_happened(tmp_path):
    """In a small repository nothing was compacted: "what did we do so far?" said that compaction dropped
    older turns, and the biggest files' answer called three-line files "large results like these"."""
    repo = tmp_path / "tiny"
    (repo / "src").mkdir(parents=True)
    (repo / "README.md").write_text("# tiny\n\nA tiny tool.\n")
    (repo / "src" / "tool.py").write_text("def run():\n    return 1\n")
    session, _ = build_session(repo, model="demo", headless=True)
    biggest = text_of_turn(await run(session, "what are the biggest files?"))
    assert "`src/tool.py`: 2 lines" in biggest and "Large results like these" not in biggest
    recap = text_of_turn(await run(session, "what did we do so far?"))
    assert "Nothing has been compacted away yet: every earlier turn is still sent to me whole." in recap
    assert "compaction dropped" not in recap
    big, _ = build_session(make_repo(tmp_path / "big"), model="demo", headless=True)
    assert "Large results like these" in text_of_turn(await run(big, "what are the biggest files?"))


def _read(k: int, path: str, text: str) -> list[dict]:
    return [{"role": "assistant", "content": [{"type": "tool_use", "id": f"r{k}", "name": "Read",
                                               "input": {"file_path": path}}]},
            {"role": "user", "content": [tool_result_block(f"r{k}", text)]}]


def test_the_summary_focus_names_a_file_whose_text_holds_it_and_one_the_recap_lists():
    """"no file named it" was said for a file it had read: the focus words were in its text, not its path."""
    history = [user_text("how are stations read?"),
               *_read(1, "src/weather.py", "1\tdef load(path):\n2\t    # the station rule: skip blank rows"),
               {"role": "assistant", "content": [{"type": "text", "text": "It reads CSVs."}]}]
    summary = extractive_summary(summary_messages(history, 2, focus="keep the station rule"))
    assert summary.splitlines()[1] == "Focus (station rule): src/weather.py", summary
    assert "- # the station rule: skip blank rows" in summary
    _, recap = build_recap([facts_of(m) for m in history], 3, frozenset(), prompt_chars=2000, prompt_max_chars=500, call=2)
    later = [recap, user_text("and the units?")]
    summary = extractive_summary(summary_messages(later, 1, focus="keep the weather module"))
    assert summary.splitlines()[1] == "Focus (weather module): no file I read names or holds it", summary
    summary = extractive_summary(summary_messages(later, 1, focus="keep weather"))
    assert summary.splitlines()[1] == "Focus (weather): src/weather.py", "read before the event: the recap lists it"


async def test_the_recap_answer_tells_cut_or_masked_results_from_dropped_turns(tmp_path):
    """The demo reads its request: a placeholder or a cut result is 'some results only in part', a recap
    is 'older turns dropped', neither is 'nothing compacted'."""
    from tui_agent.core.compaction.mask import placeholder_text
    from tui_agent.core.providers.base import ModelRequest
    from tui_agent.core.providers.demo import DemoProvider

    read = {"file_path": "README.md"}
    masked = [user_text("what does README.md say?"),
              {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": read}]},
              {"role": "user", "content": [tool_result_block("t1", placeholder_text("Read", read, 1_800))]},
              {"role": "assistant", "content": [{"type": "text", "text": "It says hello."}]},
              user_text("what did we do so far?")]
    said = ""
    request = ModelRequest(model="demo", system="", messages=masked, tools=[], max_tokens=1_000)
    async for event in DemoProvider(workspace=make_repo(tmp_path)).stream(request):
        said += getattr(event, "text", "")
    assert "some long tool results only in part (cut or masked by compaction)" in said, said
