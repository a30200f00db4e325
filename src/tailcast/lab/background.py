"""A background job for the lab: repeats one alltoall until cancelled, at most one call per
`--period-ms`, and waits for each call by polling with short sleeps instead of spinning.

On the lab every node shares two CPU cores with every other: a spinning background rank
would take CPU from the measured job and make the CPU, not the links, the shared resource.
Sleeping between polls (`--poll-ms`) keeps a background job's CPU cost proportional to the
bytes it moves; Open MPI's TCP transport keeps the sockets full between polls as long as a
poll interval's worth of data fits in the socket buffers (1 ms at 1 Gbit/s = 125 kB).

Run as ranks inside a background job:
    mpirun python -m tailcast.lab.background --size 1048576 --period-ms 400 --status S.json
Rank 0 rewrites S.json about once a second: calls completed and seconds since the first.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from types import FrameType

import numpy as np


def _stop(signum: int, frame: FrameType | None) -> None:
    del signum, frame
    raise SystemExit(0)  # scancel's SIGTERM: leave without Open MPI's abort banner


def _status(path: Path, doc: dict[str, float | int]) -> None:
    tmp = path.with_name(f".tmp-{path.name}")
    tmp.write_text(json.dumps(doc))
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tailcast.lab.background")
    parser.add_argument("--size", type=int, default=1 << 20, help="bytes to each peer")
    parser.add_argument("--period-ms", type=float, default=0.0, help="at most one call per")
    parser.add_argument("--poll-ms", type=float, default=1.0)
    parser.add_argument("--status", type=Path, default=None)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)

    from mpi4py import MPI  # initialises MPI: only in the ranks, never on import

    comm = MPI.COMM_WORLD
    ranks, size = comm.Get_size(), max(args.size, 1)
    send = np.ones(size * ranks, dtype=np.int8)
    recv = np.zeros_like(send)
    period, poll = args.period_ms / 1000.0, args.poll_ms / 1000.0
    started = last_status = time.monotonic()
    calls = 0
    while True:
        t0 = time.monotonic()
        request = comm.Ialltoall([send, size, MPI.BYTE], [recv, size, MPI.BYTE])
        while not request.Test():
            time.sleep(poll)
        calls += 1
        now = time.monotonic()
        if args.status is not None and comm.Get_rank() == 0 and now - last_status >= 1.0:
            _status(
                args.status,
                {
                    "calls": calls,
                    "seconds": now - started,
                    "size_bytes": size,
                    "ranks": ranks,
                    "period_ms": args.period_ms,
                },
            )
            last_status = now
        if period > now - t0:
            time.sleep(period - (now - t0))


if __name__ == "__main__":
    sys.exit(main())
