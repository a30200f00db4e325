"""Records the data `tailcast quickstart` ships with, on the real local Slurm + Open MPI in
the network lab (scripts/slurm-local up --network lab), so the quickstart's measured tails
come from a network whose topology and rates its `lab` fabric describes.

    .venv/bin/python scripts/record_quickstart_data.py [--out src/tailcast/data/quickstart]
    .venv/bin/python scripts/record_quickstart_data.py --campaign slurm_jobs/lab-validation.toml \
        --no-app --out src/tailcast/data/lab-validation

1. The lab campaign slurm_jobs/lab-quickstart.toml (`tailcast lab campaign`): bcast, reduce
   and alltoall at 4 B, 32 KiB and 1 MiB, same group and across islands, beside 0-2 placed
   background alltoall jobs (phases of b = 0, 0.25, 0.5 sharing the island link, and 0.5
   sharing no link).
2. A 4-rank mpi4py halo + allreduce application captured with tailcast's PMPI tracer under
   `sbatch -N 4`.
The store's tables (runs, samples, utilisation, snapshots, lab_runs) and the trace are copied
to --out. `--campaign` records another campaign on the same lab (`--no-app`: without the
application capture).
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
TABLES = ("runs", "samples", "utilisation", "snapshots", "lab_runs")
CAMPAIGN = REPO / "slurm_jobs" / "lab-quickstart.toml"

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


def capture_app(work: Path, env: dict[str, str], out: Path) -> None:
    """The halo application captured with the PMPI tracer under `sbatch -N 4`."""
    (work / "halo.py").write_text(HALO_APP)
    (work / "capture.sh").write_text(
        "#!/bin/bash\nexport OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
        f"exec {PY} -m tailcast trace capture -o {work / 'halo.parquet'} -- "
        f"mpirun -np 4 {PY} {work / 'halo.py'}\n"
    )
    job = sh(
        ["sbatch", "--parsable", "-N", "4", "-w", "node[01-04]", "--ntasks-per-node=1",
         "-D", str(work), str(work / "capture.sh")],
        env,
    ).strip()  # fmt: skip
    print(f"capture: {wait_done(job, env)}", file=sys.stderr)
    shutil.copy(work / "halo.parquet", out / "halo-4rank.parquet")


def record(out: Path, campaign: Path, iterations: int | None, app: bool) -> None:
    cluster = Path(tempfile.mkdtemp(prefix="tailcast-record-"))
    home = cluster / "home"
    work = cluster / "work"
    work.mkdir(parents=True)
    os.chmod(cluster, 0o755)
    script = REPO / "scripts" / "slurm-local"
    subprocess.run([str(script), "up", str(cluster), "--network", "lab"], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_"))}
    env.update(json.loads((cluster / "cluster.json").read_text())["env"])
    env.update(
        OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", TAILCAST_HOME=str(home)
    )
    spec = campaign
    if iterations is not None:  # a shorter recording for trying the script out
        spec = work / campaign.name
        text = campaign.read_text().replace("iterations = 200", f"iterations = {iterations}")
        spec.write_text(text)
    try:
        subprocess.run(
            [PY, "-m", "tailcast", "lab", "campaign", str(spec), "--workdir", str(work)],
            env=env,
            check=True,
        )
        out.mkdir(parents=True, exist_ok=True)
        if app:
            capture_app(work, env, out)
        for table in TABLES:
            files = sorted((home / table).glob("*.parquet"))
            target = out / table
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir()
            for f in files:
                shutil.copy(f, target / f.name)
            print(f"{table}: {len(files)} files", file=sys.stderr)
    finally:
        subprocess.run([str(script), "down", str(cluster)], check=False)
        shutil.rmtree(cluster, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=REPO / "src" / "tailcast" / "data" / "quickstart"
    )
    parser.add_argument("--campaign", type=Path, default=CAMPAIGN, help="the lab campaign")
    parser.add_argument(
        "--iterations", type=int, default=None, help="override the campaign's 200 (a trial)"
    )
    parser.add_argument("--no-app", action="store_true", help="no application capture")
    args = parser.parse_args()
    record(args.out.resolve(), args.campaign.resolve(), args.iterations, not args.no_app)
    return 0


if __name__ == "__main__":
    sys.exit(main())
