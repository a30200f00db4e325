"""Running sweep points: one replay each, stored under a replay id fixed by the sweep and the
point (`ID-pNNNNNN`), so a point that runs twice (a task killed after its replay files but
before its point file, then resumed) replaces its files instead of duplicating them. The
point's `sweep_points` file is written last: a point is done when, and only when, it exists.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

import numpy as np

from tailcast import interrupts
from tailcast.errors import InputError, Interrupted
from tailcast.replay.run import replay_trace
from tailcast.store import ResultsDir
from tailcast.store.parquet_io import write_parquet_atomic
from tailcast.sweeps.plan import Plan, done_points, file_sha256, load_plan, point_path
from tailcast.sweeps.spec import point_inputs


@dataclass(frozen=True)
class PointDone:
    index: int
    cpu_s: float


def run_point(plan: Plan, index: int, results: ResultsDir, task: str) -> PointDone:
    """Replays point `index` and stores it (its files, then its sweep_points row)."""
    point = plan.points[index]
    trace = Path(point.trace)
    if not trace.is_file():
        raise InputError(trace, f"trace of sweep {plan.sweep_id} is gone")
    cpu0 = time.process_time()
    fabric, options = point_inputs(plan.spec, point, plan.fabrics)
    rid = f"{plan.sweep_id}-p{index:06d}"
    out = replay_trace(
        trace, fabric, options, results, replay_id=rid, store_ops=plan.spec.store_ops
    )
    lat = out.iteration_latency_us
    cpu = time.process_time() - cpu0
    row = {
        "sweep_id": plan.sweep_id,
        "point": index,
        "trace": str(trace),
        "trace_sha256": plan.traces.get(str(trace)),
        "fabric": fabric.name,
        "params": _params_json(point.params),
        "seed": point.seed,
        "replay_id": rid,
        "total_time_ns": round(out.total_time_ns),
        "iterations": len(lat),
        "iteration_mean_us": float(np.mean(lat)) if len(lat) else None,
        "iteration_p50_us": float(np.percentile(lat, 50)) if len(lat) else None,
        "iteration_p99_us": float(np.percentile(lat, 99)) if len(lat) else None,
        "actions": out.stats.get("actions", 0),
        "messages": out.stats.get("messages", 0),
        "background_messages": out.stats.get("background_messages", 0),
        "cpu_s": cpu,
        "task": task,
        "host": socket.gethostname(),
        "finished_at": datetime.now(UTC),
    }
    write_parquet_atomic("sweep_points", [row], point_path(results, plan.sweep_id, index))
    return PointDone(index, cpu)


def _params_json(params: dict[str, object]) -> str:
    import json

    return json.dumps(params, sort_keys=True)


def check_traces(plan: Plan) -> None:
    """The traces still have the content they had when the sweep was planned."""
    for path, sha in plan.traces.items():
        p = Path(path)
        if not p.is_file():
            raise InputError(p, f"trace of sweep {plan.sweep_id} is gone")
        if file_sha256(p) != sha:
            raise InputError(p, f"trace changed since sweep {plan.sweep_id} was planned")


_IN_POINT = [False]  # per worker process: whether a point is being replayed and stored
_UNWINDING = [False]  # per worker process: a signal is unwinding the point


def _worker_stop(signum: int, frame: FrameType | None) -> None:
    """A worker's SIGINT/SIGTERM: inside a point, unwind (its all_or_nothing removes what the
    point wrote) and then exit in `_worker`; between points, exit at once. Signals while
    unwinding are ignored: once one worker has exited, the pool terminates the others again
    (concurrent.futures' terminate_broken), and raising inside the cleanup left a whole
    `.tmp-` file behind (issue 41)."""
    del frame
    if _UNWINDING[0]:
        return
    if _IN_POINT[0]:
        _UNWINDING[0] = True
        interrupts.interrupt(signum)
    os._exit(128 + signum)


def _worker_init() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _worker_stop)


def _worker(home: str, sweep_id: str, index: int, task: str) -> PointDone:
    # One process per worker: the plan is read once per point, which is cheap next to a
    # replay, and nothing has to be pickled but ids.
    _IN_POINT[0] = True
    try:
        results = ResultsDir(home)
        return run_point(load_plan(sweep_id, results), index, results, task)
    except Interrupted as stop:
        os._exit(stop.exit_code)  # cleaned up; never take the next queued point
    finally:
        _IN_POINT[0] = False


def run_points(
    plan: Plan,
    indices: Iterable[int],
    results: ResultsDir,
    task: str,
    jobs: int = 1,
    progress: Callable[[PointDone], None] | None = None,
) -> list[PointDone]:
    """Runs the points of `indices` not done yet (in `jobs` processes); skips done ones."""
    check_traces(plan)
    todo = [i for i in indices if i not in done_points(plan, results)]
    finished: list[PointDone] = []
    if jobs <= 1:
        for i in todo:
            d = run_point(plan, i, results, task)
            finished.append(d)
            if progress:
                progress(d)
        return finished
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init)
    try:
        futures = [pool.submit(_worker, str(results.root), plan.sweep_id, i, task) for i in todo]
        for f in as_completed(futures):
            d = f.result()
            finished.append(d)
            if progress:
                progress(d)
    except BaseException:
        # Interrupted or failed: stop now, not after every queued point. Each worker removes
        # the files of the point it was in (_worker_stop); finished points stay.
        pool.shutdown(wait=False, cancel_futures=True)
        workers = multiprocessing.active_children()
        for proc in workers:
            proc.terminate()
        for proc in workers:
            proc.join(30)
        raise
    pool.shutdown()
    return finished


def default_jobs() -> int:
    """Worker processes for a local sweep: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def python_command() -> list[str]:
    """How array tasks start this tailcast (the same interpreter and package)."""
    return [sys.executable, "-m", "tailcast"]
