"""One tool round of the query loop: run the model's tool calls, ask the permission gate, record outcomes.

Consecutive auto-allowed, concurrency-safe calls run together; the rest run in order, each one asking the
permission gate first. Every call ends in a `ToolOutcome` (its result, and whether the user or a rule
refused it), filled in as results arrive so a cancel mid-round can still answer every call.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Protocol

from tui_agent.core import events as ev
from tui_agent.core import trace
from tui_agent.core.messages import Block, result_text, tool_result_block
from tui_agent.core.access.gate import REJECT_MESSAGE, SKIPPED_MESSAGE, PermissionDecision, PermissionPolicy
from tui_agent.core.tools.base import ToolContext, ToolOutput, ToolRegistry, validate_input

CUT_OFF_MESSAGE = ("Not run: the reply was cut off by the output limit before this call was complete; "
                   "its input may be truncated. Send the call again, shorter if needed.")


class RoundConfig(Protocol):
    """What a tool round reads of the loop's configuration (`LoopConfig` is one): the tools, the permission
    gate, and whether a denial's result goes back to the model (headless) or stops the round."""

    @property
    def tools(self) -> ToolRegistry: ...

    @property
    def permissions(self) -> PermissionPolicy: ...

    @property
    def answer_denials(self) -> bool: ...


@dataclass(frozen=True)
class ToolOutcome:
    """How one tool call of the round ended: its result content, and whether it was refused (by the
    user or a deny rule: interactive turns stop there, headless ones let the model answer)."""

    content: Any
    is_error: bool
    denied: bool = False

    def block(self, tool_use_id: str) -> Block:
        return tool_result_block(tool_use_id, self.content, self.is_error)


async def run_tools(
    uses: list[dict[str, Any]],
    config: RoundConfig,
    ctx: ToolContext,
    finished: dict[str, ToolOutcome],
    cut_off: set[str] = frozenset(),  # type: ignore[assignment]
) -> AsyncIterator[ev.EngineEvent]:
    """Run this round's tools: consecutive auto-allowed read-only calls together, others in order.

    Fills `finished[tool_use_id]` as results arrive, so a cancel can answer the rest.
    """
    # Validate and classify each call once per round (not again per batch scan and per execution).
    problems = [CUT_OFF_MESSAGE if use["id"] in cut_off else _problem(use, config) for use in uses]
    parallel = [_auto_parallel(use, problem, config, ctx) for use, problem in zip(uses, problems)]
    stop = False
    i = 0
    while i < len(uses):
        use = uses[i]
        if stop:
            _finish(finished, use, SKIPPED_MESSAGE, True)
            yield _finished_event(use, finished, 0.0)
            i += 1
            continue
        j = i + 1
        while parallel[i] and j < len(uses) and parallel[j]:
            j += 1
        if j - i > 1:
            batch = uses[i:j]
            for item in batch:
                yield _started_event(item, config)
            started = time.monotonic()
            outputs = await asyncio.gather(*(_execute(item, None, config, ctx) for item in batch))
            for item, output in zip(batch, outputs):
                _finish(finished, item, output.content, output.is_error)
                yield _finished_event(item, finished, time.monotonic() - started)
            i += len(batch)
            continue
        yield _started_event(use, config)
        started = time.monotonic()
        tool = config.tools.get(use["name"])
        tool_input: dict[str, Any] = use["input"] if isinstance(use.get("input"), dict) else {}
        problem = problems[i]
        if problem is None and tool is not None:
            try:
                decision = config.permissions.decide(tool, tool_input, ctx)
            except Exception as error:  # noqa: BLE001 - e.g. a symlink loop in a path: this call's error only
                problem = _error_text(error)
        if problem is None and tool is not None:
            if decision.behavior == "ask":
                future: asyncio.Future = asyncio.get_running_loop().create_future()
                yield ev.PermissionRequested(tool.name, tool_input, _safely(tool.summary, tool_input),
                                             _safely(tool.permission_preview, tool_input, ctx), future, id=use["id"])
                answer = await future
                yield ev.PermissionAnswered(use["id"], tool.name, str(getattr(answer, "value", answer)))
                if answer == PermissionDecision.ALLOW_SESSION:
                    config.permissions.remember(tool, tool_input)
                decision_ok = answer in (PermissionDecision.ALLOW_ONCE, PermissionDecision.ALLOW_SESSION)
                if not decision_ok:
                    _finish(finished, use, REJECT_MESSAGE, True, denied=True)
                    stop = True
            elif decision.behavior == "deny":
                _finish(finished, use, decision.message, True, denied=True)
                stop = not config.answer_denials
        if use["id"] not in finished:
            output = await _execute(use, problem, config, ctx)
            _finish(finished, use, output.content, output.is_error)
        yield _finished_event(use, finished, time.monotonic() - started)
        i += 1


def _problem(use: dict[str, Any], config: RoundConfig) -> str | None:
    tool = config.tools.get(use.get("name", ""))
    if tool is None:
        return f"Unknown tool: {use.get('name')}. Available tools: {', '.join(config.tools.names())}."
    return validate_input(tool, use.get("input"))


def _auto_parallel(use: dict[str, Any], problem: str | None, config: RoundConfig, ctx: ToolContext) -> bool:
    """A valid, concurrency-safe call the permission gate allows without asking."""
    tool = config.tools.get(use.get("name", ""))
    if tool is None or problem is not None:
        return False
    tool_input = use["input"]
    try:
        if not tool.is_concurrency_safe(tool_input):
            return False
        return config.permissions.decide(tool, tool_input, ctx).behavior == "allow"
    except Exception:  # noqa: BLE001 - decided (and reported) again when the call runs on its own
        return False


async def _execute(use: dict[str, Any], problem: str | None, config: RoundConfig, ctx: ToolContext) -> ToolOutput:
    """Call one already-validated tool (`problem` is its validation error, if any); every failure becomes
    an error output, never an exception."""
    name = use.get("name", "")
    trace.trace("tool.start", name=name, id=use.get("id"))
    if problem is not None:
        output = ToolOutput(problem, True)
    else:
        tool = config.tools.get(name)
        assert tool is not None
        try:
            output = await tool.call(use["input"], ctx)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - a tool failure is a result, not a crash
            output = ToolOutput(_error_text(error), True)
    trace.trace("tool.end", name=name, id=use.get("id"), ok=str(not output.is_error).lower())
    return output


def _error_text(error: Exception) -> str:
    from tui_agent.core.tools.base import ToolError

    text = str(error) if isinstance(error, ToolError) else f"{type(error).__name__}: {error}"
    return text or type(error).__name__


def _safely(describe: Callable[..., str], *args: Any) -> str:
    """A tool's summary or preview; one that raises (a bad path) shows nothing rather than end the round."""
    try:
        return describe(*args)
    except Exception:  # noqa: BLE001
        return ""


def _finish(finished: dict[str, ToolOutcome], use: dict[str, Any], content: Any, is_error: bool,
            denied: bool = False) -> None:
    finished[use["id"]] = ToolOutcome(content, is_error, denied)


def _started_event(use: dict[str, Any], config: RoundConfig) -> ev.ToolStarted:
    tool = config.tools.get(use.get("name", ""))
    tool_input: dict[str, Any] = use["input"] if isinstance(use.get("input"), dict) else {}
    summary = _safely(tool.summary, tool_input) if tool is not None else ""
    return ev.ToolStarted(use["id"], use.get("name", ""), tool_input, summary)


def _finished_event(use: dict[str, Any], finished: dict[str, ToolOutcome], duration: float) -> ev.ToolFinished:
    done = finished[use["id"]]
    return ev.ToolFinished(use["id"], use.get("name", ""), done.content, done.is_error, duration,
                           len(result_text(done.block(use["id"]))))
