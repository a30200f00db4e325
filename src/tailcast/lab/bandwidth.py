"""Streaming bandwidth between two MPI ranks by OSU's osu_bw method (OSU 7.4,
c/mpi/pt2pt/standard/osu_bw.c): per iteration, rank 0 posts `window` MPI_Isend of `size`
bytes, waits for all, then receives a 1-byte acknowledgement that rank 1 sends after its
`window` MPI_Irecv completed. Bandwidth = size × window / iteration time; OSU reports the
total over all timed iterations, this also keeps every iteration's figure. Rank 0 also
times MPI_Reduce_local (MPI_SUM, MPI_SIGNED_CHAR) on `size` bytes: the reduction cost per
byte a replay's gamma stands for.

    mpirun -np 2 python -m tailcast.lab.bandwidth --size 1048576 --window 16 \
        --iterations 10 --warmup 2 --out RESULT.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from tailcast.store.atomic import atomic_path


def stream(mpi: Any, comm: Any, size: int, window: int, iterations: int, warmup: int) -> np.ndarray:
    """Seconds per timed iteration, measured on rank 0 (zeros elsewhere)."""
    rank = comm.Get_rank()
    buf = np.ones(max(size, 1), dtype=np.uint8)
    ack = np.zeros(1, dtype=np.uint8)
    times = np.zeros(iterations)
    for i in range(warmup + iterations):
        comm.Barrier()
        t0 = mpi.Wtime()
        if rank == 0:
            mpi.Request.Waitall([comm.Isend([buf, size, mpi.BYTE], 1, 100) for _ in range(window)])
            comm.Recv([ack, 1, mpi.BYTE], 1, 101)
        elif rank == 1:
            mpi.Request.Waitall([comm.Irecv([buf, size, mpi.BYTE], 0, 100) for _ in range(window)])
            comm.Send([ack, 1, mpi.BYTE], 0, 101)
        if i >= warmup:
            times[i - warmup] = mpi.Wtime() - t0
    return times


def reduce_ns_per_byte(mpi: Any, size: int, repeats: int = 20) -> float:
    """This rank's cost of combining `size` bytes with MPI_SUM on MPI_SIGNED_CHAR (what the
    built-in reduce benchmark reduces), by MPI_Reduce_local: the median of `repeats`."""
    a = np.ones(max(size, 1), dtype=np.int8)
    b = np.ones_like(a)
    times = []
    for _ in range(repeats):
        t0 = mpi.Wtime()
        mpi.SUM.Reduce_local([a, mpi.SIGNED_CHAR], [b, mpi.SIGNED_CHAR])
        times.append(mpi.Wtime() - t0)
    return float(np.median(times)) * 1e9 / max(size, 1)


def _write_atomic(path: Path, doc: dict[str, Any]) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(doc))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tailcast.lab.bandwidth")
    parser.add_argument("--size", type=int, default=1 << 20)
    parser.add_argument("--window", type=int, default=64)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)

    from mpi4py import MPI  # initialises MPI: only in the ranks, never on import

    comm = MPI.COMM_WORLD
    if comm.Get_size() != 2:
        if comm.Get_rank() == 0:
            sys.stderr.write("tailcast.lab.bandwidth: needs exactly two MPI processes\n")
        return 2
    times = stream(MPI, comm, args.size, args.window, args.iterations, args.warmup)
    gamma = reduce_ns_per_byte(MPI, args.size) if comm.Get_rank() == 0 else 0.0
    hosts = comm.gather(os.environ.get("SLURMD_NODENAME", MPI.Get_processor_name()), root=0)
    if comm.Get_rank() == 0:
        sent = args.size * args.window
        _write_atomic(
            args.out,
            {
                "size_bytes": args.size,
                "window": args.window,
                "iterations": args.iterations,
                "warmup": args.warmup,
                "hosts": hosts,
                "seconds": times.tolist(),
                # OSU's figure: all timed bytes over all timed seconds, in bit/s
                "rate_bit_s": 8.0 * sent * args.iterations / float(times.sum()),
                "iteration_rate_bit_s": (8.0 * sent / times).tolist(),
                "reduce_local_ns_per_byte": gamma,
            },
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
