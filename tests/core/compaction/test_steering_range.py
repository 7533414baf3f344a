"""Steering names a message of the history (issue 27): `pin(-1)`, `exclude(len(history))` and the like are
refused at the call with one clear line, and nothing is stored, emitted or journaled (stored, an index
outside the history made the saved state unreadable and a resumed session sent another request)."""

from __future__ import annotations

import pytest

from tui_agent.core import events as ev
from tui_agent.core.compaction import Compactor
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply
from tui_agent.core.agent.session import Session
from tui_agent.core.tools import ToolRegistry


async def two_messages(tmp_path) -> Session:
    session = Session(ScriptedProvider(replies=[text_reply("hello")]), ToolRegistry([]), tmp_path,
                      system_prompt_builder=lambda s: "test")
    async for _ in session.run_turn("hi"):
        pass
    assert len(session.history) == 2
    return session


@pytest.mark.parametrize("action", ["pin", "exclude", "expand"])
@pytest.mark.parametrize("index", [-1, -2, 2, 10**9, True])
async def test_steering_outside_the_history_is_refused_at_the_call(tmp_path, action: str, index: int) -> None:
    session = await two_messages(tmp_path)
    heard: list[object] = []
    session.listeners.append(heard.append)
    before = session.compactor.export_state()
    with pytest.raises(ValueError) as refused:
        getattr(session, action)(index)
    assert f"no message #{index}" in str(refused.value) and "0–1" in str(refused.value)
    assert "\n" not in str(refused.value)
    assert session.compactor.export_state() == before
    assert not [e for e in heard if isinstance(e, (ev.CompactionChanged, ev.NextRequestChanged))]


async def test_steering_inside_the_history_still_works(tmp_path) -> None:
    session = await two_messages(tmp_path)
    session.pin(1)
    session.exclude(0)
    session.expand(1)
    assert 1 in session.compactor.pins


async def test_an_empty_history_has_nothing_to_steer(tmp_path) -> None:
    session = Session(ScriptedProvider(), ToolRegistry([]), tmp_path, system_prompt_builder=lambda s: "test")
    with pytest.raises(ValueError, match="no messages yet"):
        session.pin(0)


@pytest.mark.parametrize("action", ["pin", "exclude", "expand"])
def test_the_compactor_refuses_a_negative_index(action: str) -> None:
    compactor = Compactor()
    with pytest.raises(ValueError):
        getattr(compactor, action)(-1)
    assert compactor.export_state() == Compactor().export_state()
