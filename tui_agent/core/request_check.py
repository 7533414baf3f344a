"""Is a request valid for the Messages API? The same rules as `messages.protocol_errors`, answered from
per-message facts computed once per message object.

A replay checks every strategy's request at every call (`StrategyResult.invalid`): on a 433-call log that
was a third of `replay --report`, because each check walks every block of a few hundred messages that
were already walked at the call before. A request is mostly the same message objects from one call to
the next (history is append-only; compaction reuses its copies), so the facts a check needs (role, blank
text, tool_use ids, tool_result ids, results first) are kept per object and the check itself is a walk
over small tuples. `tests/core/test_request_check.py` holds it to `protocol_errors` on real sessions.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_agent.core.messages import Message, blocks, is_blank_text, tool_results, tool_uses


@dataclass(frozen=True)
class MessageFacts:
    role: object
    blank: bool  # some text block is whitespace only
    use_ids: tuple[object, ...]  # tool_use ids (assistant messages)
    result_ids: frozenset[object]  # the tool_use ids its tool_results answer (user messages)
    has_results: bool
    results_first: bool  # every tool_result comes before any other block


def facts_of(message: Message) -> MessageFacts:
    content = blocks(message)
    results = tool_results(message)
    first_other = next((j for j, b in enumerate(content) if b.get("type") != "tool_result"), len(content))
    return MessageFacts(
        message.get("role"), any(is_blank_text(b) for b in content), tuple(b.get("id") for b in tool_uses(message)),
        frozenset(b.get("tool_use_id") for b in results), bool(results),
        not any(b.get("type") == "tool_result" for b in content[first_other:]))


class RequestCheck:
    """`valid(messages)` ≡ `not protocol_errors(messages)`, with each message's facts made once."""

    def __init__(self) -> None:
        self._facts: dict[int, tuple[Message, MessageFacts]] = {}  # id → (message kept alive, its facts)

    def facts(self, message: Message) -> MessageFacts:
        known = self._facts.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        found = facts_of(message)
        self._facts[id(message)] = (message, found)
        return found

    def valid(self, messages: list[Message], *, allow_pending: bool = False) -> bool:
        if not messages:
            return False
        facts = [self.facts(m) for m in messages]
        if facts[0].role != "user":
            return False
        seen: set[object] = set()
        last = len(facts) - 1
        for i, f in enumerate(facts):
            if f.role not in ("user", "assistant") or f.blank:
                return False
            for use_id in f.use_ids:
                if not use_id or use_id in seen:
                    return False
                seen.add(use_id)
            if f.has_results:
                if not f.results_first:
                    return False
                asked = set(facts[i - 1].use_ids) if i > 0 else set()
                if not f.result_ids <= asked:
                    return False
            if f.use_ids:
                if i == last:
                    if not allow_pending:
                        return False
                    continue
                answered = facts[i + 1].result_ids
                if any(use_id not in answered for use_id in f.use_ids):
                    return False
        return True
