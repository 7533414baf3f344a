"""The strategies a replay prices, by the names the bench and `replay --report` use: which compactor (or
peer, or none) each name makes, how its session waits between calls, and the policy they all run under.

Its own concept because it is a catalogue, not a run: `economics.py` steps whatever it is handed call by
call and prices each request; this module says what `v2-ping`, `cc-idle+warm` or `server-clear` means. The
append-only conversation (`none`) has no compactor; the peers (`peers.py`, `server_peers.py`) are made
on the session's ruler, our own strategies through the sessions' one factory (`make_compactor`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.core.compaction import CompactorProtocol, CompactPolicy, make_compactor

if TYPE_CHECKING:
    from tui_agent.core.recordings.peers import Peer

STRATEGIES = ("none", "seed-v1", "v1", "v2")


# the bench's names for the compaction modes: `v2` waits by the priced idle policy (`core/idle.py`, auto),
# `v2-ping` keeps warm by the fixed rule, `v2-compact` compacts while idle, `v2-cold` never pings
STRATEGY_MODES = {"seed-v1": "seed", "v1": "v1", "v2": "v2", "v2-cold": "v2", "v2-ping": "v2", "v2-compact": "v2"}
# how each strategy's session waits (`idle_replay.IdleReplay`); a name ending in `+warm` (a peer, or
# `none+warm`: the append-only conversation) keeps warm by the fixed rule any client could follow
IDLE_MODES = {"seed-v1": "fixed", "v1": "fixed", "v2": "auto", "v2-ping": "fixed", "v2-compact": "compact"}
WARM_SUFFIX = "+warm"


def idle_mode(name: str) -> str:
    """How strategy `name`'s session waits: never pings unless it is ours or named `…+warm`."""
    return "fixed" if name.endswith(WARM_SUFFIX) else IDLE_MODES.get(name, "never")


def make_strategy(name: str, policy: CompactPolicy, baseline_estimate: int,
                  ruler: object | None = None) -> "CompactorProtocol | Peer | None":
    """By bench name, from the sessions' one factory (`none`, the append-only conversation, has none);
    the peers (`core.peers`) measure their thresholds on the session's ruler."""
    name = name.removesuffix(WARM_SUFFIX)
    if name == "none":
        return None
    if name in ("server-clear", "server-compact"):  # the API's own, as our server strategies send it
        from tui_agent.core.recordings.server_peers import make_server_peer

        return make_server_peer(name, policy, ruler)
    if name not in STRATEGY_MODES:
        from tui_agent.core.recordings.peers import make_peer

        return make_peer(name, policy, ruler)
    return make_compactor(STRATEGY_MODES[name], policy.context_window, policy.max_output_tokens, policy=policy,
                          baseline_tokens=baseline_estimate)


DEFAULT_REPLAY_WINDOW = 200_000
MAX_OUTPUT_SHARE = 4  # a replayed window keeps at most a quarter of itself for the reply (32k at most)


def default_policy(context_window: int = DEFAULT_REPLAY_WINDOW) -> CompactPolicy:
    """The policy a replay compacts with: the recorded model's window (`replay --context-window`)."""
    return CompactPolicy(context_window=context_window, max_output_tokens=min(32_000, context_window // MAX_OUTPUT_SHARE),
                         enabled=True)
