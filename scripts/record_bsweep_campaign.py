"""Records a b-sweep campaign on a private local Slurm (16 nodes) for training and validating
tail forecasts (`tailcast predict train / evaluate`).

    .venv/bin/python scripts/record_bsweep_campaign.py [--campaign slurm_jobs/bsweep.example.toml]
                                                       [--out tests/data/bsweep-16node]

Starts `scripts/slurm-local`, submits the campaign with `tailcast agent submit` (phases of
real background MPI jobs at planned b levels, one measurement job per phase), waits for every
job, copies the store's runs/samples/snapshots/utilisation to --out and stops the cluster.
The example campaign (28 phases) takes about half an hour on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TABLES = ("runs", "samples", "utilisation", "snapshots")


def _campaign_text(template: Path, home: Path) -> str:
    """The campaign file with this checkout's tailcast and a private TAILCAST_HOME."""
    text = template.read_text()
    exe = REPO / ".venv" / "bin" / "tailcast"
    text = re.sub(r'^tailcast = ".*"', f'tailcast = "{exe}"', text, flags=re.MULTILINE)
    env = (
        f'env = {{ OMPI_MCA_btl = "self,vader,tcp", TAILCAST_HOME = "{home}", '
        'OMPI_ALLOW_RUN_AS_ROOT = "1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = "1" }'
    )
    text = re.sub(r"^env = .*$", env, text, flags=re.MULTILINE)
    text = re.sub(
        r'^topology = ".*"',
        f'topology = "{REPO / "slurm_jobs" / "topology.example.toml"}"',
        text,
        flags=re.MULTILINE,
    )
    return text


def _active_jobs(env: dict[str, str]) -> int:
    out = subprocess.run(
        ["squeue", "-h", "-o", "%i"], env=env, capture_output=True, text=True, timeout=30
    )
    return len(out.stdout.split()) if out.returncode == 0 else -1


def compact(home: Path, out: Path) -> None:
    """Each table of the store as one Parquet file in `out` (a thousand small files would
    be mostly footers)."""
    import pyarrow as pa

    from tailcast.store import ResultsDir, read_table, write_parquet_atomic

    store = ResultsDir(home)
    for table in TABLES:
        parts = [read_table(f, table) for f in store.files(table)]
        target = out / table
        shutil.rmtree(target, ignore_errors=True)
        merged = pa.concat_tables(parts, promote_options="default")
        write_parquet_atomic(table, merged, target / "bsweep.parquet")
        print(f"{table}: {len(parts)} files, {merged.num_rows} rows", file=sys.stderr)


def record(campaign: Path, out: Path, timeout_s: float) -> None:
    cluster = Path(tempfile.mkdtemp(prefix="tailcast-bsweep-"))
    home, work = cluster / "home", cluster / "work"
    work.mkdir(parents=True)
    subprocess.run([str(REPO / "scripts" / "slurm-local"), "up", str(cluster)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_"))}
    env.update(json.loads((cluster / "cluster.json").read_text())["env"])
    try:
        camp = work / "campaign.toml"
        camp.write_text(_campaign_text(campaign, home))
        subprocess.run(
            [str(REPO / ".venv" / "bin" / "tailcast"), "agent", "submit", str(camp)],
            cwd=work,
            env=env,
            check=True,
        )
        deadline = time.monotonic() + timeout_s
        while (left := _active_jobs(env)) != 0:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{left} jobs still in the queue after {timeout_s:.0f} s")
            print(f"{left} jobs left", file=sys.stderr)
            time.sleep(30)
        compact(home, out)
        logs = sorted((work / "logs").glob("*.out"))
        failed = [p.name for p in logs if "Traceback" in p.read_text(errors="replace")]
        if failed:
            print(f"jobs with a traceback in their log: {failed}", file=sys.stderr)
    finally:
        subprocess.run([str(REPO / "scripts" / "slurm-local"), "down", str(cluster)], check=False)
        shutil.rmtree(cluster, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--campaign", type=Path, default=REPO / "slurm_jobs" / "bsweep.example.toml"
    )
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "data" / "bsweep-16node")
    parser.add_argument("--timeout", type=float, default=4 * 3600.0)
    parser.add_argument("--compact-only", type=Path, help="only merge an existing store")
    args = parser.parse_args()
    if args.compact_only:
        compact(args.compact_only, args.out.resolve())
        return 0
    record(args.campaign.resolve(), args.out.resolve(), args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
