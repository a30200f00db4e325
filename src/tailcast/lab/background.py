"""A background job for the lab: repeats one alltoall until cancelled, pausing after each
call (mean `--gap-ms`, fixed or exponentially distributed: `--gaps`, see tailcast.lab.gaps),
and waits for each call by polling with short sleeps instead of spinning.

On the lab every node shares two CPU cores with every other: a spinning background rank
would take CPU from the measured job and make the CPU, not the links, the shared resource.
Sleeping between polls (`--poll-ms`) keeps a background job's CPU cost proportional to the
bytes it moves; Open MPI's TCP transport keeps the sockets full between polls as long as a
poll interval's worth of data fits in the socket buffers (1 ms at 250 Mbit/s = 31 kB).
A pause after each call (not a fixed period) makes the job a closed loop a trace can
describe: the replay runs the same calls with pauses drawn the same way between them. Every
rank draws from the same `--seed`, so all ranks pause alike and the job stays in step.

Run as ranks inside a background job:
    mpirun python -m tailcast.lab.background --size 1048576 --gap-ms 300 --gaps exponential \
        --seed 7 --progress P.jsonl
Rank 0 appends {"t": unix seconds, "calls": completed calls} to P.jsonl about once a second,
so the calls made during any time window (a measured run) can be counted afterwards.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path
from types import FrameType

import numpy as np

from tailcast.lab.gaps import GAP_KINDS, gap_draws


def _stop(signum: int, frame: FrameType | None) -> None:
    del signum, frame
    raise SystemExit(0)  # scancel's SIGTERM: leave without Open MPI's abort banner


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tailcast.lab.background")
    parser.add_argument("--size", type=int, default=1 << 20, help="bytes to each peer")
    parser.add_argument("--gap-ms", type=float, default=0.0, help="mean pause after each call")
    parser.add_argument("--gaps", choices=GAP_KINDS, default="fixed")
    parser.add_argument("--seed", type=int, default=0, help="of the pauses (same on every rank)")
    parser.add_argument("--poll-ms", type=float, default=1.0)
    parser.add_argument("--progress", type=Path, default=None)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)

    from mpi4py import MPI  # initialises MPI: only in the ranks, never on import

    comm = MPI.COMM_WORLD
    ranks, size = comm.Get_size(), max(args.size, 1)
    send = np.ones(size * ranks, dtype=np.int8)
    recv = np.zeros_like(send)
    gaps, poll = gap_draws(args.gaps, args.gap_ms / 1000.0, args.seed), args.poll_ms / 1000.0
    log = open(args.progress, "a") if args.progress and comm.Get_rank() == 0 else None  # noqa: SIM115
    calls, last = 0, 0.0
    while True:
        request = comm.Ialltoall([send, size, MPI.BYTE], [recv, size, MPI.BYTE])
        while not request.Test():
            time.sleep(poll)
        calls += 1
        now = time.time()
        if log is not None and now - last >= 1.0:
            log.write(json.dumps({"t": now, "calls": calls}) + "\n")
            log.flush()
            last = now
        gap = next(gaps)
        if gap > 0:
            time.sleep(gap)


if __name__ == "__main__":
    sys.exit(main())
