"""A b time series: snapshots every `interval` seconds (with jitter, so many watchers do not
hit slurmctld in step), flushed to Parquet at least every `flush_every` snapshots and when
the watch ends — including on SIGTERM/SIGINT, so no snapshot already taken is lost."""

from __future__ import annotations

import random
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from tailcast.collectors.snapshot import Snapshot, write_snapshots
from tailcast.errors import TailcastError, UsageError
from tailcast.store import ResultsDir

_TICK_S = 0.2  # sleep granularity: a signal is noticed within this time


@dataclass
class WatchResult:
    snapshots: list[Snapshot] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    stopped_by: int | None = None


def watch(
    take: Callable[[], Snapshot],
    interval_s: float,
    duration_s: float,
    flush_every: int = 10,
    jitter: float = 0.1,
    results: ResultsDir | None = None,
    report: Callable[[Snapshot], None] | None = None,
) -> WatchResult:
    """Calls `take` until `duration_s` has passed or a SIGTERM/SIGINT arrives."""
    if interval_s <= 0 or duration_s < 0 or flush_every < 1 or not 0 <= jitter < 1:
        raise UsageError("need interval > 0, duration ≥ 0, flush-every ≥ 1, 0 ≤ jitter < 1")
    results = results or ResultsDir()
    out = WatchResult()
    pending: list[Snapshot] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        del frame
        out.stopped_by = signum

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}

    def flush() -> None:
        if pending:
            out.files.extend(write_snapshots(pending, results))
            pending.clear()

    deadline = time.monotonic() + duration_s
    try:
        while out.stopped_by is None:
            try:
                snap = take()
            except TailcastError as exc:  # a failed poll is reported, the series goes on
                out.failures.append(str(exc))
                sys.stderr.write(f"tailcast collect watch: snapshot failed: {exc}\n")
            else:
                out.snapshots.append(snap)
                pending.append(snap)
                if report is not None:
                    report(snap)
                if len(pending) >= flush_every:
                    flush()
            pause = interval_s * (1 + random.uniform(-jitter, jitter))
            wake = min(time.monotonic() + pause, deadline)
            if time.monotonic() >= deadline:
                break
            while out.stopped_by is None and time.monotonic() < wake:
                time.sleep(min(_TICK_S, max(0.0, wake - time.monotonic())))
            if time.monotonic() >= deadline:
                break
    finally:
        flush()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return out
