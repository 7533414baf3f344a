"""What a recap's span holds, summed message by message, and extended when the span grows.

Why: a recap lists every prompt, path, command and tool of the span it stands for. The span is the
dropped part of the history, which only grows (drops move its end on; history is append-only), and
each event built it again from its first message: on a 30,000-message watch an event's recaps took
tens of milliseconds, more than all the calls between two events. A `Tally` of a span is kept (the
newest few, bounded) and the next recap of the same facts from the same start, skipping the same
messages below the old end, adds only the messages after it. The tally is never changed once handed
out (a longer span is a copy extended), so a candidate span tried and given up costs nothing kept.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Protocol

class MessageFacts(Protocol):
    """What a tally reads of one message (`recap.MessageFacts`)."""

    @property
    def prompt(self) -> str | None: ...
    @property
    def paths(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def commands(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def tools(self) -> tuple[str, ...]: ...
    @property
    def failed(self) -> tuple[str, ...]: ...
    @property
    def chars(self) -> int: ...


KEEP = 8  # tallies kept (a compactor's span, a preview's, the candidates an event tries)


@dataclass
class Tally:
    """The sums of messages [start, until) of `facts`, less the `skipped` (kept or excluded) ones."""

    facts: Sequence[MessageFacts]  # the facts summed (kept alive: a tally is found by their identity)
    start: int
    until: int
    skipped: frozenset[int]  # the skipped indices below `until`
    dropped: int = 0
    chars: int = 0
    prompts: list[tuple[int, str]] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # path → how (a write or edit outranks a read)
    commands: list[tuple[str, str]] = field(default_factory=list)
    tools: dict[str, int] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)

    def extended(self, until: int, skip: Collection[int]) -> Tally:
        """A copy of this tally summed on to `until`, skipping the indices in `skip`."""
        twin = Tally(self.facts, self.start, until, self.skipped | {i for i in skip if self.until <= i < until},
                     self.dropped, self.chars, list(self.prompts), dict(self.files), list(self.commands),
                     dict(self.tools), set(self.failed))
        twin._add(range(self.until, until), skip)
        return twin

    def _add(self, indices: range, skip: Collection[int]) -> None:
        files, tools = self.files, self.tools
        for i in indices:  # one pass, touching only what a message has (most have no paths or commands)
            if i in skip:
                continue
            fact = self.facts[i]
            self.dropped += 1
            self.chars += fact.chars
            if fact.prompt:
                self.prompts.append((i, fact.prompt))
            if fact.failed:
                self.failed.update(fact.failed)
            for path, how in fact.paths:
                if files.get(path) not in ("written", "edited") or how in ("written", "edited"):
                    files.pop(path, None)
                    files[path] = how
            for name in fact.tools:
                tools[name] = tools.get(name, 0) + 1
            if fact.commands:
                self.commands.extend(fact.commands)


_kept: list[Tally] = []


def tally(facts: Sequence[MessageFacts], start: int, until: int, skip: Collection[int]) -> Tally:
    """The tally of [start, until) less `skip`: a kept tally of the same facts and start extended when its
    skipped messages below its end are those of `skip`, else summed from `start`."""
    base = None
    for kept in reversed(_kept):
        if kept.facts is facts and kept.start == start and kept.until <= until and (
                kept.skipped == {i for i in skip if start <= i < kept.until}):
            base = kept
            break
    if base is None:
        base = Tally(facts, start, start, frozenset())
    made = base if base.until == until else base.extended(until, skip)
    if made is not base:
        _kept.append(made)
        del _kept[:-KEEP]
    return made
