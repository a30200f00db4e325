#!/usr/bin/env python3
"""Records the real OSU 7.4 outputs tests/data/osu-7.4/recorded/ holds (one per output format
the parser knows), with the OSU build of scripts/build-third-party and the local Open MPI:

    .venv/bin/python scripts/record_osu_outputs.py [--out tests/data/osu-7.4/recorded]

Each run leaves NAME.txt (stdout), NAME.stderr.txt (stderr, when not empty) and NAME.rc (the
exit status). Names: benchmark, ranks, options (as in shared/data/osu-7.4).
With `--timing` it records instead, into tests/data/osu-7.4/timing/NAME/, a few runs under
the PMPI tracer's timing mode: the ranks' rank-*.bin files and OSU's stdout.txt of that run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
SMALL = ["-i", "50", "-x", "5"]

# name -> (ranks, binary under libexec/.../mpi or "omb-py:<benchmark>", arguments)
RUNS: dict[str, tuple[int, str, list[str]]] = {
    "osu_bw_np2__z": (2, "pt2pt/osu_bw", ["-m", "1:1024", *SMALL, "-z"]),
    "osu_bibw_np2__default": (2, "pt2pt/osu_bibw", ["-m", "1:1024", *SMALL]),
    "osu_mbw_mr_np2__V": (2, "pt2pt/osu_mbw_mr", ["-m", "1:8", "-i", "10", "-x", "1", "-V"]),
    "osu_mbw_mr_np2__c_z": (2, "pt2pt/osu_mbw_mr", ["-m", "1:64", *SMALL, "-c", "-z"]),
    "osu_ibcast_np4__f_c_z": (4, "collective/osu_ibcast", ["-m", "1:64", *SMALL, "-f", "-c",
                                                           "-z"]),
    "osu_ibarrier_np4__default": (4, "collective/osu_ibarrier", SMALL),
    "osu_iallgather_np4__default": (4, "collective/osu_iallgather", ["-m", "1:64", *SMALL]),
    "osu_put_latency_np2__s_pscw_w_create": (2, "one-sided/osu_put_latency",
                                             ["-m", "1:64", *SMALL, "-s", "pscw", "-w",
                                              "create"]),
    "osu_get_bw_np2__z": (2, "one-sided/osu_get_bw", ["-m", "1:64", *SMALL, "-z"]),
    "osu_cas_latency_np2__default": (2, "one-sided/osu_cas_latency", SMALL),
    "osu_init_np2__default": (2, "startup/osu_init", []),
    "osu_hello_np2__default": (2, "startup/osu_hello", []),
    "osu_bcast_np2__T_all_f": (2, "collective/osu_bcast", ["-m", "1:16", *SMALL, "-T", "all",
                                                           "-f"]),
    "osu_bcast_np2__D_vect": (2, "collective/osu_bcast", ["-m", "1:64", *SMALL, "-D",
                                                          "vect:2:1"]),
    "osu_bcast_np2__G_tty": (2, "collective/osu_bcast", ["-m", "1:2", "-i", "20", "-x", "2",
                                                         "-G", "tty"]),
    "osu_bcast_np2__T_mpi_int__m_1-2": (2, "collective/osu_bcast", ["-m", "1:2", *SMALL, "-T",
                                                                    "mpi_int"]),
    "osu_latency_np2__m_64-8": (2, "pt2pt/osu_latency", ["-m", "64:8", *SMALL]),
    "osu_multi_lat_np2__c_z": (2, "pt2pt/osu_multi_lat", ["-m", "1:16", *SMALL, "-c", "-z"]),
    "osu_latency_mt_np2__default": (2, "pt2pt/osu_latency_mt", ["-m", "1:16", *SMALL]),
    "osu_neighbor_allgather_np4__f": (4, "collective/osu_neighbor_allgather",
                                      ["-m", "1:16", *SMALL, "-f"]),
    "osu_bw_fan_in_np2__default": (2, "congestion/osu_bw_fan_in", SMALL),
    "osu_bcast_np2__c__corrupted_from_8": (2, "collective/osu_bcast", ["-m", "1:64", *SMALL,
                                                                       "-c", "-f"]),
    "osu_bcast_np2__killed": (2, "collective/osu_bcast", ["-m", "1:4194304", "-i", "20000",
                                                          "-x", "10", "-f"]),
    "omb_py__bcast_np2": (2, "omb-py:bcast", ["--min", "1", "--max", "64"]),
    "omb_py__bw_np2": (2, "omb-py:bw", ["--min", "1", "--max", "64"]),
    "omb_py__allreduce_np2": (2, "omb-py:allreduce", ["--min", "1", "--max", "64"]),
    "omb_py__barrier_np2": (2, "omb-py:barrier", []),
}  # fmt: skip


# name -> (ranks, binary, arguments) of the timing-mode recordings
TIMED: dict[str, tuple[int, str, list[str]]] = {
    "osu_bcast_np4__m_1024": (4, "collective/osu_bcast", ["-m", "1024:1024", "-i", "40", "-x",
                                                          "5", "-f", "-z"]),
    "osu_ibcast_np4__m_64": (4, "collective/osu_ibcast", ["-m", "64:64", "-i", "40", "-x", "5",
                                                         "-f"]),
    "osu_latency_np2__m_8": (2, "pt2pt/osu_latency", ["-m", "8:8", "-i", "40", "-x", "5", "-z"]),
    "osu_bw_np2__m_4096": (2, "pt2pt/osu_bw", ["-m", "4096:4096", "-i", "40", "-x", "5", "-z"]),
}  # fmt: skip


def record_timing(mpi: Path, out: Path) -> None:
    tracer = subprocess.run(
        [sys.executable, "-c", "from tailcast.traces.capture import build_tracer as b; print(b())"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    for name, (ranks, what, extra) in TIMED.items():
        target = out / name
        target.mkdir(parents=True, exist_ok=True)
        for old in target.glob("rank-*.bin"):
            old.unlink()
        argv = ["mpirun", "-np", str(ranks), "--oversubscribe", "-x", f"LD_PRELOAD={tracer}",
                "-x", f"TAILCAST_TRACE_DIR={target}", "-x", "TAILCAST_TRACE_MODE=timing",
                str(mpi / what), *extra]  # fmt: skip
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=True,
                              env={**os.environ, **ROOT_ENV})  # fmt: skip
        (target / "stdout.txt").write_text(proc.stdout)
        print(f"{name}: {len(list(target.glob('rank-*.bin')))} rank files")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--timing", action="store_true")
    args = parser.parse_args()
    home = Path(
        subprocess.run(
            [str(REPO / "scripts/build-third-party"), "osu"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    mpi = home / "libexec/osu-micro-benchmarks/mpi"
    if args.timing:
        record_timing(mpi, args.out or REPO / "tests/data/osu-7.4/timing")
        return 0
    args.out = args.out or REPO / "tests/data/osu-7.4/recorded"
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        shim = Path(tmp) / "corrupt.so"
        subprocess.run(
            [
                "mpicc",
                "-shared",
                "-fPIC",
                "-o",
                str(shim),
                str(REPO / "tests/collectors/programs/corrupt_bcast.c"),
            ],
            check=True,
        )
        for name, (ranks, what, extra) in RUNS.items():
            if what.startswith("omb-py:"):
                program = [
                    sys.executable,
                    str(home / "python/run.py"),
                    "--benchmark",
                    what.split(":")[1],
                    "--iterations",
                    "20",
                    "--skip",
                    "2",
                    *extra,
                ]
            else:
                program = [str(mpi / what), *extra]
            launch = ["mpirun", "-np", str(ranks), "--oversubscribe"]
            if "corrupted" in name:
                launch += ["-x", f"LD_PRELOAD={shim}", "-x", "CORRUPT_FROM_BYTES=8"]
            env = {**os.environ, **ROOT_ENV}
            try:
                proc = subprocess.run(
                    [*launch, *program],
                    capture_output=True,
                    text=True,
                    env=env,
                    timeout=4 if "killed" in name else 300,
                )
                out, err, rc = proc.stdout, proc.stderr, proc.returncode
            except subprocess.TimeoutExpired as exc:  # the "killed" run: what it printed
                out = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else ""
                err, rc = "", -9
            (args.out / f"{name}.txt").write_text(out)
            (args.out / f"{name}.rc").write_text(f"{rc}\n")
            if err.strip():
                (args.out / f"{name}.stderr.txt").write_text(err)
            print(f"{name}: status {rc}, {len(out.splitlines())} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
