"""Issue 40 on the local Slurm: inside one `sbatch -N 2` job, `agent noise-profile` stores
one profile per node of the allocation, then two agent runs of a 32 KiB bcast through Open
MPI's TCP BTL, the second with `OMPI_MCA_btl_tcp_eager_limit=4096`, record their protocol
and the profiles; `replay run --from-run` replays each run's 32 KiB message eagerly under
the default limit and with the rendezvous handshake under the 4 KiB one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tailcast.collectors.mpi_protocol import MpiProtocol
from tailcast.store import ResultsDir, read_table
from tailcast.traces.io import write_trace
from tailcast.traces.synth.osu import osu_trace

pytestmark = [pytest.mark.slurm, pytest.mark.mpi, pytest.mark.slow]

TAILCAST = f"{sys.executable} -m tailcast"
RUN = "agent run --impl builtin --benchmarks bcast --sizes 32K --iterations 20 --warmup 2"


def _table(home: Path, name: str) -> list[dict[str, Any]]:
    return [r for f in ResultsDir(home).files(name) for r in read_table(f, name).to_pylist()]


@pytest.fixture(scope="module")
def recorded(slurm_cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    slurm_cluster.cancel_all()
    workdir = tmp_path_factory.mktemp("protocol")
    home = workdir / "home"
    # Set in the script: sbatch --export splits values at commas ("self,tcp").
    script = (
        "#!/bin/bash\nset -e\nexport OMPI_MCA_btl=self,tcp\n"
        f"{TAILCAST} agent noise-profile --seconds 0.5 --json > noise.json\n"
        f"{TAILCAST} {RUN} --json --timeout 240 > default.json\n"
        f"OMPI_MCA_btl_tcp_eager_limit=4096 {TAILCAST} {RUN} --json --timeout 240 > small.json\n"
    )
    job = slurm_cluster.sbatch(
        ["-N", "2", "-w", "node[01-02]", "--ntasks-per-node=1", "--time=10",
         f"--export=ALL,TAILCAST_HOME={home}"],
        script,
        workdir,
    )  # fmt: skip
    state = slurm_cluster.wait_state(job, {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}, 600)
    log = workdir / f"slurm-{job}.out"
    assert state == "COMPLETED", log.read_text() if log.exists() else state
    runs = {}
    for name in ("default", "small"):
        (summary,) = json.loads((workdir / f"{name}.json").read_text())
        runs[name] = summary["run_id"]
    return {"job": job, "home": home, "workdir": workdir, "runs": runs,
            "noise": json.loads((workdir / "noise.json").read_text())}  # fmt: skip


def test_one_noise_profile_per_node_recorded_with_the_runs(recorded: dict[str, Any]) -> None:
    home = recorded["home"]
    profiles = _table(home, "noise_profiles")
    assert sorted(p["node"] for p in profiles) == ["node01", "node02"]
    assert {p["slurm_job_id"] for p in profiles} == {recorded["job"]}
    assert all(p["quanta"] > 0 and p["window_ns"] > 0.4e9 for p in profiles)
    assert sorted(s["node"] for s in recorded["noise"]) == ["node01", "node02"]
    by_node = {p["node"]: p["profile_id"] for p in profiles}
    for run in _table(home, "runs"):
        assert json.loads(run["noise_profiles"]) == by_node


def test_runs_record_the_tcp_btl_and_its_eager_limit(recorded: dict[str, Any]) -> None:
    runs = {r["run_id"]: r for r in _table(recorded["home"], "runs")}
    limits = {}
    for name, run_id in recorded["runs"].items():
        run = runs[run_id]
        assert run["mpi_transport"] == "ob1/tcp"
        protocol = MpiProtocol.from_json(run["protocol_json"])
        assert protocol.library == "Open MPI 4.1.4" and protocol.inter_node == "tcp"
        assert protocol.params["btl"] == "self,tcp (environment)"
        limits[name] = protocol.eager_limits["tcp"]
    assert limits == {"default": 65536, "small": 4096}
    small = MpiProtocol.from_json(runs[recorded["runs"]["small"]]["protocol_json"])
    assert small.params["btl_tcp_eager_limit"] == "4096 (environment)"


@pytest.mark.parametrize(("name", "kind"), [("default", "eager"), ("small", "rendezvous")])
def test_from_run_replays_32k_with_the_runs_protocol(
    recorded: dict[str, Any], name: str, kind: str
) -> None:
    home, workdir = recorded["home"], recorded["workdir"]
    trace = workdir / "bcast-32k.parquet"
    if not trace.exists():
        table, meta = osu_trace("bcast", 2, [32768], 5, 1)
        write_trace(table, trace, meta)
    out = subprocess.run(
        [sys.executable, "-m", "tailcast", "replay", "run", str(trace), "--fabric", "lab",
         "--from-run", recorded["runs"][name], "--messages", "--json"],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "TAILCAST_HOME": str(home)},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    replay_id = json.loads(out.stdout)["replay_id"]
    messages = [m for m in _table(home, "replay_messages") if m["replay_id"] == replay_id]
    assert {m["kind"] for m in messages if m["bytes"] == 32768} == {kind}
