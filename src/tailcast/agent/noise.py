"""Background traffic for b-sweep campaigns: an MPI job that repeats one collective until it
is cancelled, so the jobs around a measurement are real communicating multi-node jobs, the
kind seed 001 §5.1 counts in b.

Run as ranks by `tailcast agent noise` inside a background job:
    mpirun -np N python -m tailcast.agent.noise --pattern alltoall --size 65536 --pause-ms 2
The pause between calls keeps a shared test machine usable (on the local cluster every
"node" is a process on the same few cores); 0 makes the ranks communicate back to back.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from types import FrameType

import numpy as np

NOISE_PATTERNS = ("alltoall", "allreduce", "bcast")


def _stop(signum: int, frame: FrameType | None) -> None:
    del signum, frame
    raise SystemExit(0)  # scancel's SIGTERM: leave without Open MPI's abort banner


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tailcast.agent.noise")
    parser.add_argument("--pattern", choices=NOISE_PATTERNS, default="alltoall")
    parser.add_argument("--size", type=int, default=65536, help="bytes per peer (alltoall)")
    parser.add_argument("--pause-ms", type=float, default=2.0)
    parser.add_argument("--iterations", type=int, default=0, help="stop after N calls; 0 = never")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)

    from mpi4py import MPI  # initialises MPI: only in the ranks, never on import

    comm = MPI.COMM_WORLD
    ranks = comm.Get_size()
    size = max(args.size, 1)
    send = np.ones(size * (ranks if args.pattern == "alltoall" else 1), dtype=np.int8)
    recv = np.zeros_like(send)
    pause = args.pause_ms / 1000.0
    done = 0
    # A call count, not a clock: every rank must leave after the same collective.
    while args.iterations <= 0 or done < args.iterations:
        done += 1
        if args.pattern == "alltoall":
            comm.Alltoall([send, size, MPI.BYTE], [recv, size, MPI.BYTE])
        elif args.pattern == "allreduce":
            comm.Allreduce([send, size, MPI.SIGNED_CHAR], [recv, size, MPI.SIGNED_CHAR], MPI.SUM)
        else:
            comm.Bcast([send, size, MPI.BYTE], root=0)
        if pause > 0:
            time.sleep(pause)
    return 0


if __name__ == "__main__":
    sys.exit(main())
