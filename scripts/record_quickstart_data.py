"""Records the data `tailcast quickstart` ships with, on the real local Slurm + Open MPI.

    .venv/bin/python scripts/record_quickstart_data.py [--out src/tailcast/data/quickstart]

A 16-node local cluster (scripts/slurm-local) runs, in phases, 0 to 3 background MPI jobs
(alltoall loops on other nodes: they load the shared CPUs and loopback network, so they are
real background traffic here) while the measurement agent runs seed 001's collectives in a
same-group and a different-islands placement. Each phase gives a different b. A 4-rank
mpi4py halo + allreduce application is captured with tailcast's PMPI tracer under
`sbatch -N 4`. The store's tables and the trace are copied to --out (a few hundred kB).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
TABLES = ("runs", "samples", "utilisation", "snapshots")

NOISE = """
import numpy as np
from mpi4py import MPI
c = MPI.COMM_WORLD
buf = np.ones(1 << 16, dtype=np.uint8)
out = np.empty(c.size * (1 << 16), dtype=np.uint8)
send = np.ones(c.size * (1 << 16), dtype=np.uint8)
while True:
    c.Alltoall(send, out)
"""

HALO_APP = """
import numpy as np
from mpi4py import MPI
c = MPI.COMM_WORLD
r, p = c.rank, c.size
left, right = (r - 1) % p, (r + 1) % p
grid = np.random.default_rng(r).random(4096)
ghost = np.empty(512)
total = np.empty(1)
for step in range(200):
    c.Sendrecv(grid[:512], dest=left, recvbuf=ghost, source=right)
    c.Sendrecv(grid[-512:], dest=right, recvbuf=ghost, source=left)
    grid[1:-1] = 0.5 * grid[1:-1] + 0.25 * (grid[:-2] + grid[2:])
    c.Allreduce(np.array([grid.sum()]), total)
    if step % 50 == 0:
        c.Bcast(grid[:1024], root=0)
"""

PHASES = [  # background jobs as (nodes, hostlist) per phase
    [],
    [(2, "node[15-16]")],
    [(2, "node[15-16]"), (3, "node[10-12]")],
    [(2, "node[15-16]"), (3, "node[10-12]"), (4, "node[06-08],node14")],
]
PLACEMENTS = {"same_group": "node[01-04]", "different_islands": "node[01,05,09,13]"}


def sh(argv: list[str], env: dict[str, str], timeout: float = 120) -> str:
    res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0:
        raise RuntimeError(f"{argv}: {res.stderr.strip()}")
    return res.stdout


def wait_done(job: str, env: dict[str, str], timeout: float = 900) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = sh(["squeue", "-h", "-t", "all", "-j", job, "-o", "%T"], env).strip()
        if state in {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}:
            return state
        time.sleep(1)
    raise TimeoutError(job)


def sbatch(args: list[str], script: str, workdir: Path, env: dict[str, str]) -> str:
    path = workdir / f"job-{time.monotonic_ns()}.sh"
    path.write_text("#!/bin/bash\nexport OMPI_MCA_btl=self,tcp\n" + script)
    return sh(["sbatch", "--parsable", "-D", str(workdir), *args, str(path)], env).strip()


def record(out: Path, iterations: int) -> None:
    cluster = Path(tempfile.mkdtemp(prefix="tailcast-record-"))
    home = cluster / "home"
    work = cluster / "work"
    work.mkdir(parents=True)
    subprocess.run([str(REPO / "scripts" / "slurm-local"), "up", str(cluster)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_"))}
    env.update(json.loads((cluster / "cluster.json").read_text())["env"])
    env.update(
        OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", TAILCAST_HOME=str(home)
    )
    (work / "noise.py").write_text(NOISE)
    (work / "halo.py").write_text(HALO_APP)
    try:
        for phase, background in enumerate(PHASES):
            noise = [
                sbatch(
                    ["-N", str(n), "-w", nodes, "--ntasks-per-node=1"],
                    f"exec mpirun {PY} {work / 'noise.py'}\n",
                    work,
                    env,
                )
                for n, nodes in background
            ]
            time.sleep(3 if noise else 0)
            for placement, nodes in PLACEMENTS.items():
                job = sbatch(
                    [
                        "-N",
                        "4",
                        "-w",
                        nodes,
                        "--ntasks-per-node=1",
                        f"--export=ALL,TAILCAST_HOME={home}",
                    ],
                    f"exec {PY} -m tailcast.cli.main agent run --impl builtin "
                    f"--benchmarks bcast,reduce,alltoall --sizes 4,1K,32K "
                    f"--iterations {iterations} --warmup 20 --interval-ms 1 --json\n",
                    work,
                    env,
                )
                state = wait_done(job, env)
                print(
                    f"phase {phase} ({len(noise)} background jobs) {placement}: {state}",
                    file=sys.stderr,
                )
            if noise:
                sh(["scancel", *noise], env)
                for job in noise:
                    wait_done(job, env, 60)
        trace = out / "halo-4rank.parquet"
        job = sbatch(
            ["-N", "4", "-w", "node[01-04]", "--ntasks-per-node=1"],
            f"exec {PY} -m tailcast.cli.main trace capture -o {work / 'halo.parquet'} -- "
            f"mpirun -np 4 {PY} {work / 'halo.py'}\n",
            work,
            env,
        )
        print(f"capture: {wait_done(job, env)}", file=sys.stderr)
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy(work / "halo.parquet", trace)
        for table in TABLES:
            files = sorted((home / table).glob("*.parquet"))
            target = out / table
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir()
            for f in files:
                shutil.copy(f, target / f.name)
            print(f"{table}: {len(files)} files", file=sys.stderr)
    finally:
        subprocess.run([str(REPO / "scripts" / "slurm-local"), "down", str(cluster)], check=False)
        shutil.rmtree(cluster, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=REPO / "src" / "tailcast" / "data" / "quickstart"
    )
    parser.add_argument("--iterations", type=int, default=200)
    args = parser.parse_args()
    record(args.out.resolve(), args.iterations)
    return 0


if __name__ == "__main__":
    sys.exit(main())
