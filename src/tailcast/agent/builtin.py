"""Built-in mpi4py benchmark (for clusters without OSU, and for raw per-iteration samples).

Run as MPI ranks by the agent:  mpirun -np N python -m tailcast.agent.builtin --benchmark
bcast --size 1024 --iterations 1000 --warmup 100 --interval-ms 1 --out RESULT.npz

Method (OSU's, as seed 001 used it): warm-up iterations first; before *each* timed
iteration a barrier; every rank times its own call with MPI.Wtime; an optional pause after
each iteration (seed 001 ran iterations at 1 ms intervals). Nothing is averaged away: rank 0
gathers the full iterations × ranks matrix and writes it (atomically) to `--out`; the agent
derives per-iteration max-over-ranks (OSU's reported quantity) and mean-over-ranks.
Data are bytes (MPI_BYTE; reductions use MPI_SIGNED_CHAR, for which MPI_SUM is defined).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tailcast.collectors.benchmarks import BENCHMARKS
from tailcast.store.atomic import atomic_path


def _operation(mpi: Any, comm: Any, benchmark: str, size: int) -> Callable[[], float]:
    """A closure doing one timed call on this rank; returns its duration in µs."""
    rank, ranks = comm.Get_rank(), comm.Get_size()
    byte, schar = mpi.BYTE, mpi.SIGNED_CHAR
    wtime = mpi.Wtime
    send = np.ones(max(size, 1) * (ranks if benchmark == "alltoall" else 1), dtype=np.int8)
    recv = np.zeros(
        max(size, 1) * (ranks if benchmark in ("alltoall", "allgather") else 1), dtype=np.int8
    )

    def timed(call: Callable[[], None]) -> Callable[[], float]:
        def run() -> float:
            t0: float = wtime()
            call()
            t1: float = wtime()
            return (t1 - t0) * 1e6

        return run

    if benchmark == "bcast":
        return timed(lambda: comm.Bcast([send, size, byte], root=0))
    if benchmark == "reduce":
        return timed(lambda: comm.Reduce([send, size, schar], [recv, size, schar], mpi.SUM, 0))
    if benchmark == "allreduce":
        return timed(lambda: comm.Allreduce([send, size, schar], [recv, size, schar], mpi.SUM))
    if benchmark == "alltoall":
        return timed(lambda: comm.Alltoall([send, size, byte], [recv, size, byte]))
    if benchmark == "allgather":
        return timed(lambda: comm.Allgather([send, size, byte], [recv, size, byte]))
    if benchmark == "barrier":
        return timed(comm.Barrier)
    if benchmark == "latency":
        # OSU osu_latency: ranks 0 and 1 ping-pong, latency = half the round trip; other
        # ranks only join the barriers and record NaN.
        if rank == 0:

            def ping() -> None:
                comm.Send([send, size, byte], dest=1, tag=1)
                comm.Recv([recv, size, byte], source=1, tag=1)

            run = timed(ping)
            return lambda: run() / 2
        if rank == 1:

            def pong() -> None:
                comm.Recv([recv, size, byte], source=0, tag=1)
                comm.Send([send, size, byte], dest=0, tag=1)

            run = timed(pong)
            return lambda: run() / 2
        return lambda: float("nan")
    raise ValueError(f"unknown benchmark {benchmark!r}")


def measure(
    mpi: Any, comm: Any, benchmark: str, size: int, iterations: int, warmup: int, pause_s: float
) -> np.ndarray:
    """This rank's timings of `iterations` calls (µs), after `warmup` untimed ones."""
    op = _operation(mpi, comm, benchmark, size)
    times = np.empty(iterations, dtype=np.float64)
    for i in range(warmup + iterations):
        comm.Barrier()
        elapsed = op()
        if i >= warmup:
            times[i - warmup] = elapsed
        if pause_s > 0:
            time.sleep(pause_s)
    return times


def _write_npz_atomic(path: Path, **arrays: Any) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, **arrays)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tailcast.agent.builtin")
    parser.add_argument("--benchmark", choices=BENCHMARKS, required=True)
    parser.add_argument("--size", type=int, default=0, help="message size in bytes")
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--interval-ms", type=float, default=0.0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    from mpi4py import MPI  # initialises MPI: only in the worker, never on import

    comm = MPI.COMM_WORLD
    rank, ranks = comm.Get_rank(), comm.Get_size()
    if ranks < 2:
        if rank == 0:
            sys.stderr.write("tailcast builtin: needs at least two MPI processes\n")
        return 2
    times = measure(
        MPI,
        comm,
        args.benchmark,
        args.size,
        args.iterations,
        args.warmup,
        args.interval_ms / 1000.0,
    )
    gathered = np.empty((ranks, args.iterations), dtype=np.float64) if rank == 0 else None
    comm.Gather(times, gathered, root=0)
    hosts = comm.gather(MPI.Get_processor_name(), root=0)
    addrs = comm.gather(os.environ.get("SLURM_TOPOLOGY_ADDR", ""), root=0)
    if rank == 0:
        assert gathered is not None and hosts is not None and addrs is not None
        meta = {
            "mpi_library": MPI.Get_library_version().replace("\x00", "").strip().splitlines()[0],
            "mpi_standard": "{}.{}".format(*MPI.Get_version()),
            "mpi4py": __import__("mpi4py").__version__,
            "numpy": np.__version__,
            "python": sys.version.split()[0],
            "topology_addr_pattern": os.environ.get("SLURM_TOPOLOGY_ADDR_PATTERN", ""),
        }
        _write_npz_atomic(
            args.out,
            times_us=gathered.T,  # iterations × ranks
            hosts=np.array(hosts),
            topology_addrs=np.array(addrs),
            meta=np.array(json.dumps(meta)),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
