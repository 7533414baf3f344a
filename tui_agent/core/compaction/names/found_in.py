"""Which of many strings occur in one long text: one pass over the text, however many strings.

Why: an event's loss report asks, of every prompt and path that left the request, whether it is still
somewhere in it (the recap, another message). Resuming a long session plans its first request with the
whole history at once; 100,000 prompts, each searched for in a request of a few hundred KB with `in`,
took a minute and more. An Aho-Corasick automaton (pyahocorasick, the maintained C implementation) finds
them all in one walk over the text."""

from __future__ import annotations

from collections.abc import Iterable


def found_in(text: str, needles: Iterable[str]) -> set[str]:
    """The needles that occur in `text` (the empty string always does)."""
    import ahocorasick  # a C extension: imported on the first event that loses something, not at start-up

    wanted = set(needles)
    found = {""} & wanted
    wanted.discard("")
    if not wanted or not text:
        return found
    automaton = ahocorasick.Automaton()
    for needle in wanted:
        automaton.add_word(needle, needle)
    automaton.make_automaton()
    for _, needle in automaton.iter(text):
        found.add(needle)
    return found
