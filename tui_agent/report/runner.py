"""The per-session tasks of a report, run on every core of this machine or on a Ray cluster.

A task is one session's path and the report's settings; its result is that session's `SessionFigures` or
one line saying why it could not be read (a log that cannot be read never stops the report). The same
function (`run_task`) runs in either place, so the figures, and the table made from them, are the same
bytes wherever they were computed. Results come back as they finish (`done` is called in this process for
each, for the progress bar and the cache) and are small, so what a run holds does not grow with the
sessions' sizes; on Ray only a few tasks per CPU are submitted at a time.

Locally: a `multiprocessing` pool of `jobs` processes started by a fork server that has imported the
engine once (`jobs` 1: in this process). On Ray (`pip install 'tui-agent[ray]'`): `ray.init(address)`,
one remote task per session; its workers read the logs by path, so a cluster's nodes must see the same
paths (the team's shared store of recordings).
"""

from __future__ import annotations

import logging
import os
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core.recordings.session_figures import SessionFigures

ENGINE = "tui_agent.core.recordings.session_figures"
IN_FLIGHT_PER_WORKER = 2


@dataclass(frozen=True)
class Task:
    index: int  # the session's place in the report's list
    path: str
    idle: str = "auto"
    window: int | None = None


@dataclass(frozen=True)
class Outcome:
    index: int
    figures: SessionFigures | None
    error: str = ""


Done = Callable[[Outcome], None]


def run_task(task: Task) -> Outcome:
    """One session's figures, or the one line that says why there are none."""
    from tui_agent.core.recordings.session_figures import session_figures

    try:
        return Outcome(task.index, session_figures(task.path, task.idle, task.window))
    except Exception as error:  # noqa: BLE001 - a log that cannot be read is one line of the report, never a stop
        return Outcome(task.index, None, error_line(error))


def error_line(error: BaseException) -> str:
    """A short line: the error's kind and its message (an OSError's words), no traceback, no controls."""
    from tui_agent.core.sanitize import strip_controls

    if isinstance(error, OSError) and error.strerror:
        words = error.strerror
    else:
        words = str(error) or type(error).__name__
    if isinstance(error, RecursionError):
        words = "nested too deeply to read"
    line = " ".join(strip_controls(words).split())
    return line if len(line) <= 200 else line[:199] + "…"


def cores() -> int:
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return max(os.cpu_count() or 1, 1)


def run_local(tasks: Sequence[Task], jobs: int, done: Done) -> None:
    """Run `tasks` on `jobs` processes (1: here), calling `done` with each outcome as it comes."""
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            done(run_task(task))
        return
    import multiprocessing

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([ENGINE, __name__])  # each worker starts with the engine imported
    with context.Pool(min(jobs, len(tasks))) as pool:
        for outcome in pool.imap_unordered(run_task, tasks, chunksize=1):
            done(outcome)


PROBE_SECONDS = 5.0


def _probe(address: str) -> str:
    """Why `HOST:PORT` (or `ray://HOST:PORT`) takes no connection, "" when it does or for `auto`/`local`:
    Ray itself retries an unreachable head for minutes before it gives up."""
    import socket

    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return ""
    try:
        socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=PROBE_SECONDS).close()
    except OSError as error:
        return error.strerror or str(error) or "no answer"
    return ""


def _token_auth(address: str) -> None:
    """Ray 2.5x+ clusters that `ray start` brought up where a token exists (`~/.ray/auth_token`) require it,
    but a driver joining one only sends it when `RAY_AUTH_MODE=token` says so: say so, as `ray start` did
    (a driver told otherwise, or a cluster without a token file here, is left as it is)."""
    if address != "local" and "RAY_AUTH_MODE" not in os.environ and (Path.home() / ".ray" / "auth_token").is_file():
        os.environ["RAY_AUTH_MODE"] = "token"


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached (one line)."""


def run_ray(tasks: Sequence[Task], address: str, done: Done) -> None:
    """Run `tasks` as Ray tasks on the cluster at `address` (`auto`, `HOST:6379`, `ray://HOST:10001`)."""
    _token_auth(address)  # before Ray is imported: it reads its settings then
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--ray needs Ray: pip install 'tui-agent[ray]'") from None
    unreachable = _probe(address)
    if unreachable:
        raise RayUnavailable(f"cannot reach the Ray cluster at {address}: {unreachable}")
    try:
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
    except Exception as error:  # noqa: BLE001 - ConnectionError, ValueError…: told in one line
        raise RayUnavailable(f"cannot reach the Ray cluster at {address}: {error_line(error)}") from None
    try:
        remote = ray.remote(num_cpus=1, max_retries=1)(run_task)
        limit = max(int(ray.cluster_resources().get("CPU", 1)), 1) * IN_FLIGHT_PER_WORKER
        waiting = deque(tasks)
        pending: dict = {}  # object ref → its task's index
        while waiting or pending:
            while waiting and len(pending) < limit:
                task = waiting.popleft()
                pending[remote.remote(task)] = task.index
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                index = pending.pop(ref)
                try:
                    done(ray.get(ref))
                except ray.exceptions.RayError as error:  # the worker died (killed, out of memory)
                    done(Outcome(index, None, f"the Ray task failed: {error_line(error)}"))
    finally:
        ray.shutdown()
