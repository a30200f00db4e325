"""A bandwidth run by tailcast.lab.bandwidth's method (OSU's osu_bw) that starts its timed
transfer only when told to, and records when each iteration ran.

    mpirun -np 2 python gated_bandwidth.py --size B --window W --iterations N \
        --ready READY --go GO --out RESULT.json

After the warm-up, rank 0 creates READY; both ranks wait for GO to exist, pass a barrier and
run the timed iterations. The network lab test starts two of these in separate Slurm jobs and
creates GO once both are ready: Slurm may start one job seconds after the other (its
`batch_sched_delay`, 3 s by default), and the two transfers must run side by side. Every
iteration's wall-clock start and end (time.time(): the lab's nodes share the host's clock)
go to RESULT.json, so the test can prove the overlap before it judges the rates.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from tailcast.lab.bandwidth import stream


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--window", type=int, required=True)
    parser.add_argument("--iterations", type=int, required=True)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--ready", type=Path, required=True)
    parser.add_argument("--go", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    assert comm.Get_size() == 2, "needs exactly two MPI processes"
    stream(MPI, comm, args.size, args.window, 0, args.warmup)
    if comm.Get_rank() == 0:
        args.ready.touch()
    while not args.go.exists():  # a sleeping wait: the two cores are shared
        time.sleep(0.01)
    comm.Barrier()
    spans = []
    for _ in range(args.iterations):
        start = time.time()
        seconds = float(stream(MPI, comm, args.size, args.window, 1, 0)[0])
        spans.append({"start": start, "end": time.time(), "seconds": seconds})
    hosts = comm.gather(os.environ.get("SLURMD_NODENAME", MPI.Get_processor_name()), root=0)
    if comm.Get_rank() == 0:
        doc = {"bytes_per_iteration": args.size * args.window, "hosts": hosts, "spans": spans}
        args.out.write_text(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
