"""Per-iteration times of a real OSU benchmark run, from the PMPI tracer's timing mode.

Every rank's calls are split into the iterations of OSU's loop (warm-up ones first), one
group of calls per iteration, as the OMB 7.4 sources make them:
- blocking collectives (osu_bcast.c …): `t_start = MPI_Wtime(); MPI_Bcast(); t_stop =
  MPI_Wtime()` — the call between two MPI_Wtime readings;
- non-blocking collectives (osu_ibcast.c …), first (pure communication) loop: `MPI_Wtime();
  MPI_Ibcast(); MPI_Wait(); MPI_Wtime()`. The second loop, with dummy compute, is left out:
  it measures overlap, not latency;
- osu_latency: rank 0 `MPI_Send(); MPI_Recv()`, rank 1 `MPI_Recv(); MPI_Send()`, a round trip
  per iteration, halved as OSU halves it;
- osu_bw: rank 0 a window of `MPI_Isend`s, `MPI_Waitall`, the acknowledgement `MPI_Recv`;
  rank 1 `MPI_Irecv`s, `MPI_Waitall`, `MPI_Send`. Bandwidth = size × window / time.
An iteration's time is OSU's own: the difference of the MPI_Wtime values around the group
when OSU read the clock there (the intervals OSU averages into its summary), else the time
from the group's first call's start to its last call's end (warm-ups of pt2pt tests, OSU
versions that time whole loops).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tailcast.collectors.osu_suite import (
    BLOCKING,
    NONBLOCKING,
    PT2PT_BANDWIDTH,
    PT2PT_LATENCY,
    OsuBenchmark,
)
from tailcast.errors import InputError
from tailcast.traces.capture.timing import CODE, RankCalls

_WTIME = CODE["MPI_Wtime"]
_WAITS = {CODE[n] for n in ("MPI_Wait", "MPI_Waitall")}


@dataclass(frozen=True)
class IterationTimes:
    """µs per iteration and rank (NaN: the rank takes no part, e.g. ranks ≥ 2 of osu_bw)."""

    warmup_us: np.ndarray  # warmup × ranks
    timed_us: np.ndarray  # iterations × ranks
    bytes_per_iteration: int | None = None  # bandwidth tests: size × window
    complete: bool = True  # False: a partial run, fewer iterations than asked for

    def bandwidth_mb_s(self, timed: bool = True) -> np.ndarray | None:
        """Rank 0's bandwidth per iteration in MB/s (10^6 B/s, OSU's unit)."""
        if self.bytes_per_iteration is None:
            return None
        times = (self.timed_us if timed else self.warmup_us)[:, 0]
        return self.bytes_per_iteration / times  # bytes/µs = MB/s


Group = tuple[int, int]  # first and last record index of one iteration's calls


def _groups_single(calls: np.ndarray, code: int) -> list[Group]:
    """Blocking collective: each call of `code` that OSU timed (MPI_Wtime on both sides)."""
    found = []
    for i in np.nonzero(calls == code)[0]:
        if 0 < i < len(calls) - 1 and calls[i - 1] == _WTIME and calls[i + 1] == _WTIME:
            found.append((int(i), int(i)))
    return found


def _groups_nonblocking(calls: np.ndarray, code: int) -> list[Group]:
    """First loop of a non-blocking test: the I-call directly followed by its MPI_Wait."""
    found = []
    for i in np.nonzero(calls == code)[0]:
        if (
            0 < i < len(calls) - 2
            and calls[i - 1] == _WTIME
            and calls[i + 1] == CODE["MPI_Wait"]
            and calls[i + 2] == _WTIME
        ):
            found.append((int(i), int(i) + 1))
    return found


def _groups_pairs(calls: np.ndarray, first: int, second: int) -> list[Group]:
    """Ping-pong: `first` directly followed by `second`."""
    at = np.nonzero((calls[:-1] == first) & (calls[1:] == second))[0]
    return [(int(i), int(i) + 1) for i in at]


def _groups_windows(calls: np.ndarray, post: int, close: int) -> list[Group]:
    """Bandwidth window: a run of `post` calls, MPI_Waitall, then `close`."""
    found = []
    for w in np.nonzero(calls == CODE["MPI_Waitall"])[0]:
        start = int(w)
        while start > 0 and calls[start - 1] == post:
            start -= 1
        if start < w and w + 1 < len(calls) and calls[w + 1] == close:
            found.append((start, int(w) + 1))
    return found


def _duration_us(rec: np.ndarray, group: Group) -> float:
    first, last = group
    calls = rec["call"]
    if first > 0 and last + 1 < len(rec) and calls[first - 1] == _WTIME == calls[last + 1]:
        clock = rec["bytes"].view(np.float64)  # the values MPI_Wtime returned, in s
        return float(clock[last + 1] - clock[first - 1]) * 1e6
    return float(rec["t_end"][last] - rec["t_start"][first]) / 1e3


def _finder(bench: OsuBenchmark, rank: int) -> Callable[[np.ndarray], list[Group]] | None:
    """How rank `rank` groups its calls into iterations; None: it takes no part."""
    c = CODE
    if bench.loop == BLOCKING:
        return lambda calls: _groups_single(calls, c[str(bench.call)])
    if bench.loop == NONBLOCKING:
        return lambda calls: _groups_nonblocking(calls, c[str(bench.call)])
    if bench.loop == PT2PT_LATENCY and rank in (0, 1):
        send, recv = c["MPI_Send"], c["MPI_Recv"]
        return lambda calls: _groups_pairs(calls, *((send, recv) if rank == 0 else (recv, send)))
    if bench.loop == PT2PT_BANDWIDTH and rank in (0, 1):
        if rank == 0:
            return lambda calls: _groups_windows(calls, c["MPI_Isend"], c["MPI_Recv"])
        return lambda calls: _groups_windows(calls, c["MPI_Irecv"], c["MPI_Send"])
    if bench.loop in (PT2PT_LATENCY, PT2PT_BANDWIDTH):
        return None
    raise ValueError(f"OSU benchmark {bench.name!r} has no per-iteration sampler")


def iteration_times(
    bench: OsuBenchmark,
    ranks: Sequence[RankCalls],
    warmup: int,
    iterations: int,
    size_bytes: int,
    source: str = "<tracer output>",
    partial: bool = False,
) -> IterationTimes:
    """Splits each rank's calls into OSU's warmup + iterations loop (one message size, one
    datatype, no -c). A count that differs from what OSU's loop makes is an InputError
    naming the rank, unless the run is `partial` (then the iterations every rank finished)."""
    want = warmup + iterations
    columns: list[np.ndarray] = []
    window: int | None = None
    for rc in ranks:
        finder = _finder(bench, rc.rank)
        if finder is None:
            columns.append(np.full(want, np.nan))
            continue
        calls = rc.records["call"]
        groups = finder(calls)
        if len(groups) != want and not (partial and len(groups) < want):
            raise InputError(
                source,
                f"rank {rc.rank}: {len(groups)} timed {bench.call} iterations, but OSU's loop "
                f"makes {warmup} warm-up + {iterations} = {want}",
            )
        times = np.full(want, np.nan)
        times[: len(groups)] = [_duration_us(rc.records, g) for g in groups]
        if bench.loop == PT2PT_LATENCY:
            times /= 2  # OSU reports half the round trip
        if bench.loop == PT2PT_BANDWIDTH and rc.rank == 0 and groups:
            window = groups[0][1] - groups[0][0] - 1  # the Isends before Waitall, Recv
        columns.append(times)
    matrix = np.column_stack(columns)
    done = int(np.min(np.sum(~np.isnan(matrix), axis=0), initial=want, where=_takes_part(matrix)))
    matrix = matrix[:done]
    return IterationTimes(
        warmup_us=matrix[:warmup],
        timed_us=matrix[warmup:],
        bytes_per_iteration=size_bytes * window if window is not None else None,
        complete=done == want,
    )


def _takes_part(matrix: np.ndarray) -> np.ndarray:
    """Columns of ranks that have any time at all (pt2pt tests leave the others NaN)."""
    return np.asarray(~np.all(np.isnan(matrix), axis=0))
