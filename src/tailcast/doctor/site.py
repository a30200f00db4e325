"""Doctor checks of what the site provides: Slurm (client, controller, topology plugin),
pyslurm, the MPI compiler wrapper and launcher, mpi4py's MPI, the OSU binaries and SimGrid.
None of them is needed for offline replay; each one missing turns features off."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

from tailcast.doctor.probe import Check, ProbeResult, Status, run_probe

SLURM_FEATURES = (
    "collect snapshot / watch / topology on the live queue",
    "agent run / submit",
    "predict tail without --b",
)
PYSLURM_FEATURES = ("the pyslurm queue backend (collect falls back to squeue)",)
MPICC_FEATURES = ("trace capture (the PMPI tracer is compiled with mpicc)", "trace build-tracer")
MPIRUN_FEATURES = ("agent run outside srun", "trace capture -- mpirun …")
MPI4PY_FEATURES = ("agent run --impl builtin", "tracing mpi4py programs")
OSU_FEATURES = ("agent run --impl osu",)
# The blocking collectives and the pt2pt latency test the agent's campaigns use.
OSU_PROBED = ("bcast", "reduce", "allreduce", "alltoall", "allgather", "barrier", "latency")
SIMGRID_FEATURES = ("side-by-side SimGrid replays (smpirun -replay of `trace convert --to tit`)",)
SLURM_HINT = "load Slurm's client tools (e.g. `module load slurm`)"
_VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)*)")


def _major_minor(version: str) -> tuple[int, int] | None:
    """Slurm's 22.05.8 and pyslurm's 22.5.3 both → (22, 5)."""
    parts = re.findall(r"\d+", version)
    return (int(parts[0]), int(parts[1])) if len(parts) >= 2 else None


def slurm_client_version(timeout: float) -> tuple[ProbeResult, str]:
    """`sinfo --version` ("slurm-wlm 22.05.8" on Debian, "slurm 23.11.4" upstream)."""
    probe = run_probe([shutil.which("sinfo") or "sinfo", "--version"], timeout)
    found = _VERSION.search(probe.stdout) if probe.ok else None
    return probe, found.group(1) if found else ""


def slurm_check(timeout: float) -> Check:
    probe, version = slurm_client_version(timeout)
    if not probe.found:
        return Check("slurm", Status.MISSING, "sinfo not on PATH", SLURM_FEATURES, hint=SLURM_HINT)
    if not version:
        return Check(
            "slurm",
            Status.ERROR,
            probe.why(),
            SLURM_FEATURES,
            hint="Slurm's client has no configuration here: set $SLURM_CONF to "
            "the cluster's slurm.conf",
        )
    details: dict[str, object] = {"version": version, "sinfo": shutil.which("sinfo")}
    ping = run_probe(["scontrol", "ping"], timeout)
    up = re.search(r"Slurmctld\(primary\) at (\S+) is UP", ping.stdout)
    details["controller_reachable"] = bool(up)
    details["controller"] = up.group(1) if up else None
    config = run_probe(["scontrol", "show", "config"], timeout)
    topo = re.search(r"^TopologyPlugin\s*=\s*(\S+)", config.stdout, re.MULTILINE)
    details["topology_plugin"] = topo.group(1) if topo else None
    if not up:
        # scontrol's first line says it ("… is DOWN"); a banner of asterisks follows
        said = ping.stdout.strip().splitlines()[0] if ping.stdout.strip() else ping.why()
        return Check(
            "slurm",
            Status.ERROR,
            f"client {version}; controller not reachable ({said})",
            SLURM_FEATURES,
            details=details,
            hint="check $SLURM_CONF and that slurmctld runs",
        )
    topology = details["topology_plugin"] or "unknown"
    return Check(
        "slurm",
        Status.OK,
        f"client {version}; slurmctld reachable at {up.group(1)}; topology plugin {topology}",
        SLURM_FEATURES,
        details=details,
    )


# Run in a child: importing pyslurm initialises libslurm, which exits the process when it
# finds no configuration.
_PYSLURM_PROBE = (
    "import json, pyslurm\n"
    "api = getattr(pyslurm, 'slurm_api_version', None)\n"
    "print(json.dumps({'version': pyslurm.__version__, 'api': list(api()) if api else []}))\n"
)


def pyslurm_check(timeout: float) -> Check:
    import json

    probe = run_probe([sys.executable, "-c", _PYSLURM_PROBE], timeout)
    if not probe.ok:
        if "No module named 'pyslurm'" in probe.stderr:
            return Check(
                "pyslurm",
                Status.MISSING,
                "not importable",
                PYSLURM_FEATURES,
                hint="pip install the pyslurm release matching this Slurm (22.5.x for Slurm 22.05)",
            )
        return Check(
            "pyslurm",
            Status.ERROR,
            f"import fails: {probe.why()}",
            PYSLURM_FEATURES,
            hint="importing pyslurm needs $SLURM_CONF",
        )
    info = json.loads(probe.stdout.strip().splitlines()[-1])
    pyslurm_version = str(info["version"])
    _ping, slurm_version = slurm_client_version(timeout)
    details = {"version": pyslurm_version, "api": info["api"], "slurm": slurm_version}
    ours, theirs = _major_minor(pyslurm_version), _major_minor(slurm_version)
    if ours and theirs and ours != theirs:
        return Check(
            "pyslurm",
            Status.ERROR,
            f"{pyslurm_version} is for Slurm "
            f"{ours[0]}.{ours[1]:02d}, this Slurm is {slurm_version}",
            PYSLURM_FEATURES,
            details=details,
            hint=f"install pyslurm {theirs[0]}.{theirs[1]}.x",
        )
    matching = f"matches Slurm {slurm_version}" if theirs else "Slurm version unknown"
    return Check(
        "pyslurm", Status.OK, f"{pyslurm_version}, {matching}", PYSLURM_FEATURES, details=details
    )


def mpicc_check(timeout: float) -> Check:
    from tailcast.mpicc import MISSING_HINT, identify, which_mpicc

    path = which_mpicc()
    if not path:
        return Check(
            "mpicc",
            Status.MISSING,
            "no MPI compiler wrapper ($MPICC or mpicc)",
            MPICC_FEATURES,
            hint=MISSING_HINT,
        )
    compiler = identify(path, timeout)
    # The builder's module, imported only here: this check is the one that needs it.
    from tailcast.traces.capture.build import tracer_path

    tracer = tracer_path(compiler)
    state = (
        f"PMPI tracer built ({tracer})"
        if tracer.is_file()
        else "PMPI tracer not built yet (the first `trace capture` builds it)"
    )
    return Check(
        "mpicc",
        Status.OK,
        f"{compiler.label} ({path}); {state}",
        MPICC_FEATURES,
        details={
            "path": path,
            "library": compiler.library,
            "version": compiler.version,
            "tracer": str(tracer),
            "tracer_built": tracer.is_file(),
        },
    )


def mpirun_check(timeout: float) -> Check:
    path = shutil.which("mpirun")
    if not path:
        return Check(
            "mpirun",
            Status.MISSING,
            "mpirun not on PATH",
            MPIRUN_FEATURES,
            hint="load your site's MPI (e.g. `module load openmpi`); inside "
            "an allocation srun may launch instead",
        )
    probe = run_probe([path, "--version"], timeout)
    if not probe.ok:
        return Check("mpirun", Status.ERROR, probe.why(), MPIRUN_FEATURES)
    first = probe.stdout.strip().splitlines()[0] if probe.stdout.strip() else "?"
    found = _VERSION.search(first)
    return Check(
        "mpirun",
        Status.OK,
        f"{first} ({path})",
        MPIRUN_FEATURES,
        details={"path": path, "version": found.group(1) if found else "", "banner": first},
    )


def mpi4py_check(timeout: float) -> Check:
    """Which MPI library mpi4py actually loads (an MPI singleton in a child process)."""
    code = "from mpi4py import MPI\nprint(MPI.Get_library_version().strip().splitlines()[0])\n"
    probe = run_probe([sys.executable, "-c", code], timeout)
    if not probe.ok:
        if "No module named 'mpi4py'" in probe.stderr:
            return Check(
                "mpi4py",
                Status.MISSING,
                "not importable",
                MPI4PY_FEATURES,
                hint="pip install mpi4py",
            )
        return Check(
            "mpi4py",
            Status.ERROR,
            probe.why(),
            MPI4PY_FEATURES,
            hint="mpi4py finds no working MPI library: load your MPI",
        )
    library = " ".join(probe.stdout.split("\n")[0].replace("\0", " ").split())
    return Check("mpi4py", Status.OK, library, MPI4PY_FEATURES, details={"library": library})


def osu_check(osu_dir: Path | None, timeout: float) -> Check:
    from tailcast.collectors.osu_run import find_osu_binary, osu_version
    from tailcast.collectors.proc import RetryPolicy
    from tailcast.errors import TailcastError

    found: dict[str, str] = {}
    for benchmark in OSU_PROBED:
        try:
            found[benchmark] = str(find_osu_binary(benchmark, osu_dir))
        except TailcastError:
            continue
    home = os.environ.get("OSU_HOME")
    searched = [f"--osu-dir {osu_dir}"] if osu_dir else []
    where = ", ".join([*searched, *([f"$OSU_HOME={home}"] if home else []), "PATH"])
    if not found:
        return Check(
            "osu",
            Status.MISSING,
            f"no OSU benchmark binary in {where}",
            OSU_FEATURES,
            hint="point --osu-dir or $OSU_HOME at your site's OSU build",
            details={"searched": where},
        )
    first = Path(next(iter(found.values())))
    try:
        version = osu_version(first, RetryPolicy(attempts=1, timeout_s=timeout))
    except TailcastError as exc:
        version = f"unknown ({exc})"
    missing = [b for b in OSU_PROBED if b not in found]
    tail = f"; not found: {', '.join(missing)}" if missing else ""
    return Check(
        "osu",
        Status.OK,
        f"OSU {version}: {len(found)} of {len(OSU_PROBED)} benchmarks under "
        f"{os.path.commonpath(list(found.values()))}{tail}",
        OSU_FEATURES,
        details={"version": version, "binaries": found, "missing": missing, "searched": where},
    )


def simgrid_check(timeout: float) -> Check:
    path = shutil.which("smpirun")
    if not path:
        return Check(
            "simgrid",
            Status.MISSING,
            "smpirun not on PATH",
            SIMGRID_FEATURES,
            hint="install SimGrid (Debian: simgrid / libsimgrid-dev)",
        )
    probe = run_probe([path, "-version"], timeout)
    found = re.search(r"SimGrid version (\S+)", probe.stdout + probe.stderr)
    if not found:
        return Check(
            "simgrid",
            Status.ERROR,
            probe.why() if not probe.ok else "smpirun -version printed no SimGrid version",
            SIMGRID_FEATURES,
        )
    return Check(
        "simgrid",
        Status.OK,
        f"SimGrid {found.group(1)} ({path})",
        SIMGRID_FEATURES,
        details={"path": path, "version": found.group(1)},
    )
