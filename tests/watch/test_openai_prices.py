"""OpenAI models have prices: a Codex rollout and a proxy recording of Responses calls get a dollar figure per
call, from the usage as logged (cached input at a tenth of the input price, no charge to write the cache)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tui_agent.core.models import for_model
from tui_agent.core.providers.base import UsageInfo
from tui_agent.core.models import cost_usd, model_info
from tui_agent.core.recordings.call_figures import FiguresRun
from tui_agent.core.recordings.replay import open_replay

ROLLOUT = Path(__file__).resolve().parents[1] / "data" / "codex-rollout.jsonl"


@pytest.mark.parametrize(("model", "input_price", "output_price"), [
    ("gpt-5-codex", 1.25, 10.0), ("gpt-5.1-codex-max", 1.25, 10.0), ("gpt-5.1-codex-mini", 0.25, 2.0),
    ("gpt-5.2-codex", 1.75, 14.0), ("gpt-5.3-codex", 1.75, 14.0), ("gpt-5.4", 2.5, 15.0), ("gpt-5.5", 5.0, 30.0),
    ("gpt-5-2025-08-07", 1.25, 10.0), ("gpt-5.2-2026-01-10", 1.75, 14.0)])
def test_the_models_codex_uses_have_list_prices(model, input_price, output_price):
    info = model_info(model)
    assert (info.input_price, info.output_price) == (input_price, output_price)
    assert info.cache_read_price() == pytest.approx(input_price / 10)
    price = for_model(model)
    assert (price.read, price.write) == (0.1, 1.0)  # OpenAI charges nothing to write its cache


def test_a_call_of_an_openai_model_costs_its_usage_at_list_price():
    usage = UsageInfo(input_tokens=10_000, output_tokens=1_000, cache_creation_input_tokens=0,
                      cache_read_input_tokens=90_000)
    assert cost_usd("gpt-5.2-codex", usage) == pytest.approx((10_000 * 1.75 + 90_000 * 0.175 + 1_000 * 14) / 1e6)


def _recorded_costs(path: Path) -> list[tuple[str, float | None]]:
    replay = open_replay(path, ("none", "v2"))
    run = FiguresRun()
    out = []
    for k in range(replay.calls):
        figures = run.figures(replay, replay.step(k))
        out.append((figures.model, figures.recorded_cost_usd))
    return out


def test_a_codex_rollout_gets_a_dollar_figure_per_call():
    usages = []
    for line in ROLLOUT.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "token_usage_record":
            usages.append(record["payload"]["usage"])
    costs = _recorded_costs(ROLLOUT)
    assert len(costs) == len(usages) == 5
    for (model, cost), usage in zip(costs, usages):
        cached = usage.get("cached_input_tokens", 0)
        assert model == "gpt-5-codex"
        assert cost == pytest.approx(((usage["input_tokens"] - cached) * 1.25 + cached * 0.125) / 1e6)


def test_responses_calls_through_the_proxy_get_a_dollar_figure(tmp_path):
    path = tmp_path / "proxy.jsonl"
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list the files"}]}
    call = {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{\"cmd\": \"ls\"}"}
    out = {"type": "function_call_output", "call_id": "c1", "output": "a.py"}
    usage = [{"input_tokens": 4000, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 50},
             {"input_tokens": 4100, "input_tokens_details": {"cached_tokens": 3968}, "output_tokens": 20}]
    lines = [{"type": "tui-agent-proxy", "version": 1, "started": 1.0}]
    for n, (items, reply) in enumerate([([user], [call]), ([user, call, out], [{"type": "text", "text": "a.py"}])]):
        lines.append({"type": "exchange", "call": n + 1, "api": "openai-responses", "method": "POST",
                      "path": "/v1/responses", "time": 10.0 + n, "status": 200, "model": "gpt-5.1-codex-max",
                      "usage": usage[n], "request": {"model": "gpt-5.1-codex-max", "input": items,
                                                     "tools": [{"type": "function", "name": "shell"}]},
                      "reply": [{"type": "tool_use", "id": "c1", "name": "shell", "input": {"cmd": "ls"}}]
                      if n == 0 else reply})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    costs = _recorded_costs(path)
    assert costs == [("gpt-5.1-codex-max", pytest.approx(4000 * 1.25 / 1e6)),
                     ("gpt-5.1-codex-max", pytest.approx((132 * 1.25 + 3968 * 0.125) / 1e6))]
