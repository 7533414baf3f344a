"""One strategy's figures over a replayed session: what `StrategyRun` accumulates and every table reads.

Apart from the run itself (`economics.py`) because the tables, the report and the watch read these figures
without running anything; and per call it keeps enough to price the same requests at another price model
(`economics_table.cost_at`) when a strategy's decisions do not depend on the price.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tui_agent.core.recordings.coverage import Coverage

# one call's figures: request tokens, what a warm cache would read of them, a summary call's request and output
# tokens, the pings before the call, the seconds its cache had then been idle, the tokens those pings read
# together, and what an idle event wrote before the call (`StrategyResult.per_call`)
PerCall = tuple[float, float, float, float, int, "float | None", float, float]
# the wait after the last call: pings sent, the tokens they read together, what an idle event wrote
Tail = tuple[int, float, float]


@dataclass
class StrategyResult:
    strategy: str
    calls: int = 0
    over_window: int = 0
    peak: float = 0.0
    tokens: float = 0.0
    cost: float = 0.0
    cached: float = 0.0
    newest_intact: int = 0
    prompts_missing: int = 0
    paths_missing: int = 0
    invalid: int = 0
    events: int = 0
    times: list[float] = field(default_factory=list)
    # future-entity coverage (`core.coverage`, `shared/reference/coverage-measure.md`): the conversation's
    # own text only, and beside it with the recap, summaries and traces of what left counted too
    coverage: Coverage = field(default_factory=Coverage)
    coverage_recap: Coverage = field(default_factory=Coverage)
    summary_calls: int = 0  # calls a strategy made to summarise (priced into `cost`)
    # per call: (request tokens, the tokens its shared prefix would read from a warm cache, a summary
    # call's request tokens, its output tokens, the pings that kept the cache warm before it, the seconds
    # the cache was idle after them): enough to price the same requests at any other price
    # (`economics_table.cost_at`) without replaying a strategy whose decisions do not depend on it
    per_call: list[PerCall] = field(default_factory=list)
    expired: int = 0  # calls whose cached prefix had gone cold (idle past the cache's time to live)
    pings: int = 0  # requests that only kept the cache warm while the session was idle (priced into `cost`)
    tail: Tail = (0, 0.0, 0.0)  # the pings (and idle event) after the last call, priced into `cost` by `finish`
    tail_cost: float = 0.0
    idle_choices: dict[str, int] = field(default_factory=dict)  # the idle policy's decisions: ping/compact/cold

    @property
    def price(self) -> float:
        return self.cost / self.tokens if self.tokens else 0.0

    @property
    def average(self) -> float:
        return self.tokens / self.calls if self.calls else 0.0

    @property
    def hit_share(self) -> float:
        return self.cached / self.tokens if self.tokens else 0.0
