"""The wheel as a user of an old-glibc cluster or a laptop gets it.

`make wheel` builds one abi3 wheel tagged manylinux2014; `auditwheel show` must confirm that
tag. A fresh venv whose PATH has no cargo or rustc then installs it — with every dependency
at the newest version that still ships a manylinux2014 wheel, i.e. what pip picks on
RHEL/Rocky 7 (glibc 2.17), all of them as binary wheels — and replays a bundled trace and a
synthesized one there, stores them, queries them, and passes `tailcast doctor`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
DEV_BIN = Path(sys.executable).parent
OLD_GLIBC_PLATFORM = "manylinux2014_x86_64"
# Dependencies that PyPI serves only as a source archive of pure Python: no compiler needed,
# but pip resolves binary wheels only when asked for another platform, so they are left to
# the install itself.
PURE_PYTHON_SDISTS = {"python-hostlist"}
RUST_TOOLS = ("cargo", "rustc", "rustup")


def _run(
    argv: list[str],
    timeout: float = 600,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
    assert proc.returncode == 0, f"{argv[:4]} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    return proc


@dataclass(frozen=True)
class Dist:
    wheel: Path
    sdist: Path


@pytest.fixture(scope="module")
def dist() -> Dist:
    # `make test` built it before pytest started; run alone, make rebuilds only when stale —
    # unless the venv itself is stale: reinstalling it would replace the engine under this
    # very pytest process.
    stale = subprocess.run(["make", "-q", "install"], cwd=REPO, capture_output=True, timeout=60)
    if stale.returncode != 0:
        pytest.fail("the .venv is older than the sources: run `make install` first")
    _run(["make", "-s", "wheel"], cwd=REPO, timeout=1800)
    wheels = sorted((REPO / "dist").glob("tailcast-*.whl"))
    sdists = sorted((REPO / "dist").glob("tailcast-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted((REPO / "dist").iterdir())
    return Dist(wheels[0], sdists[0])


def test_auditwheel_confirms_manylinux2014(dist: Dist) -> None:
    out = _run([str(DEV_BIN / "auditwheel"), "show", str(dist.wheel)]).stdout
    text = " ".join(out.split())
    assert 'is consistent with the following platform tag: "manylinux_2_17_x86_64"' in text
    glibc = {tuple(int(x) for x in v.split(".")) for v in re.findall(r"GLIBC_([\d.]+)", out)}
    assert glibc and max(glibc) <= (2, 17), f"needs glibc {max(glibc)}"
    assert re.fullmatch(
        r"tailcast-[\d.]+-cp311-abi3-manylinux2014_x86_64\.manylinux_2_17_x86_64\.whl",
        dist.wheel.name,
    )


def test_wheel_and_sdist_carry_what_a_user_needs(dist: Dist) -> None:
    names = set(zipfile.ZipFile(dist.wheel).namelist())
    assert "tailcast/_core.abi3.so" in names
    for needed in (
        "tailcast/traces/capture/tailcast_pmpi.c",
        "tailcast/traces/capture/tailcast_pmpi_calls.h",
        "tailcast/traces/capture/tailcast_pmpi_colls.h",
        "tailcast/data/quickstart/halo-4rank.parquet",
        "tailcast/replay/fabrics/fat-tree-16.toml",
        "tailcast/agent/sbatch/agent.sbatch.j2",
    ):
        assert needed in names, needed
    with tarfile.open(dist.sdist) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    for needed in (
        "pyproject.toml",
        "Cargo.lock",
        "crates/replay-engine/Cargo.toml",
        "crates/replay-py/src/lib.rs",
        "src/tailcast/traces/capture/tailcast_pmpi.c",
    ):
        assert needed in members, needed
    assert not [m for m in members if m.endswith(".so")], "a compiled library in the sdist"


def _no_rust_path() -> str:
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    keep = [d for d in dirs if not any((Path(d) / t).exists() for t in RUST_TOOLS)]
    return os.pathsep.join(d for d in keep if Path(d).resolve() != DEV_BIN.resolve())


def _old_glibc_pins(wheel: Path, workdir: Path) -> dict[str, str]:
    """The versions pip installs on a glibc-2.17 machine: resolved for manylinux2014 with
    binary wheels only (`pip install --dry-run --platform …`)."""
    metadata = zipfile.ZipFile(wheel).read(
        next(n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".dist-info/METADATA"))
    )
    requirements = [
        line.split(":", 1)[1].strip()
        for line in metadata.decode().splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    binary = [r for r in requirements if re.split(r"[<>=!~ ;\[]", r)[0] not in PURE_PYTHON_SDISTS]
    report = workdir / "old-glibc.json"
    _run(
        [
            str(DEV_BIN / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--dry-run",
            "--ignore-installed",
            "--only-binary",
            ":all:",
            "--platform",
            OLD_GLIBC_PLATFORM,
            "--python-version",
            "3.11",
            "--implementation",
            "cp",
            "--target",
            str(workdir / "unused"),
            "--report",
            str(report),
            *binary,
        ]
    )
    installs = json.loads(report.read_text())["install"]
    return {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in installs}


@dataclass(frozen=True)
class UserVenv:
    bin: Path
    env: dict[str, str]
    cwd: Path
    pins: dict[str, str]

    def run(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return _run(list(args), timeout=timeout, env=self.env, cwd=self.cwd)

    def tailcast_json(self, *args: str) -> object:
        return json.loads(self.run(str(self.bin / "tailcast"), *args, "--json").stdout)


@pytest.fixture(scope="module")
def user_venv(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Iterator[UserVenv]:
    home = tmp_path_factory.mktemp("user")
    pins = _old_glibc_pins(dist.wheel, home)
    (home / "constraints.txt").write_text("".join(f"{n}=={v}\n" for n, v in pins.items()))
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in {
            "VIRTUAL_ENV",
            "PYTHONPATH",
            "CARGO_HOME",
            "RUSTUP_HOME",
            "CARGO",
            "RUSTC",
            "PYO3_PYTHON",
        }
    }
    venv = home / "venv"
    env["PATH"] = os.pathsep.join([str(venv / "bin"), _no_rust_path()])
    env["TAILCAST_HOME"] = str(home / "store")
    _run([sys._base_executable, "-m", "venv", str(venv)], env=env, cwd=home)
    # Binary wheels only (the pure-Python sdists aside): nothing is compiled on the way in.
    _run(
        [
            str(venv / "bin" / "pip"),
            "install",
            "-q",
            "--only-binary",
            ":all:",
            *(a for name in PURE_PYTHON_SDISTS for a in ("--no-binary", name)),
            "-c",
            str(home / "constraints.txt"),
            str(dist.wheel),
        ],
        env=env,
        cwd=home,
        timeout=1200,
    )
    yield UserVenv(venv / "bin", env, home, pins)


def test_user_venv_has_no_rust_and_the_old_glibc_dependency_set(user_venv: UserVenv) -> None:
    for tool in RUST_TOOLS:
        assert shutil.which(tool, path=user_venv.env["PATH"]) is None, tool
    code = (
        "import json, tailcast, tailcast._core as c, duckdb, numpy, pyarrow; "
        "print(json.dumps([c.__file__, duckdb.__version__, numpy.__version__, "
        "pyarrow.__version__]))"
    )
    core, duckdb, numpy, pyarrow = json.loads(
        user_venv.run(str(user_venv.bin / "python"), "-c", code).stdout
    )
    assert core.startswith(str(user_venv.bin.parent)), core
    # what a glibc-2.17 machine gets, not what this Debian 12 would pick
    assert (duckdb, numpy, pyarrow) == (
        user_venv.pins["duckdb"],
        user_venv.pins["numpy"],
        user_venv.pins["pyarrow"],
    )


def test_user_venv_replays_a_bundled_and_a_synthesized_trace(user_venv: UserVenv) -> None:
    site = user_venv.run(
        str(user_venv.bin / "python"),
        "-c",
        "import tailcast, pathlib; print(pathlib.Path(tailcast.__file__).parent)",
    ).stdout.strip()
    bundled = Path(site) / "data" / "quickstart" / "halo-4rank.parquet"
    halo = user_venv.tailcast_json("replay", "run", str(bundled), "--fabric", "crossbar")
    assert isinstance(halo, dict) and halo["ranks"] == 4 and halo["actions"] > 1000
    assert halo["total_time_us"] > 0 and len(halo["stored"]) >= 2

    synth = user_venv.cwd / "osu-allreduce.parquet"
    user_venv.run(
        str(user_venv.bin / "tailcast"),
        "trace",
        "synth",
        "osu",
        "--collective",
        "allreduce",
        "--ranks",
        "16",
        "--sizes",
        "8,64K",
        "--iterations",
        "20",
        "-o",
        str(synth),
    )
    osu = user_venv.tailcast_json("replay", "run", str(synth), "--fabric", "fat-tree-16")
    assert isinstance(osu, dict) and osu["ranks"] == 16 and osu["iterations"] == 40
    assert 0 < osu["iteration_p50_us"] <= osu["iteration_p99_us"]

    # The zig-linked engine simulates exactly what the developer build does.
    dev = subprocess.run(
        [
            sys.executable,
            "-m",
            "tailcast",
            "replay",
            "run",
            str(synth),
            "--fabric",
            "fat-tree-16",
            "--no-store",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    assert json.loads(dev.stdout)["total_time_us"] == osu["total_time_us"]

    rows = user_venv.tailcast_json("db", "sql", "SELECT count(*) AS n FROM replays")
    assert rows == [{"n": 2}]


def test_user_venv_doctor_says_offline_replay_works(user_venv: UserVenv) -> None:
    report = user_venv.tailcast_json("doctor")
    assert isinstance(report, dict) and report["offline_replay_works"] is True
    engine = next(c for c in report["checks"] if c["name"] == "engine")
    assert any("manylinux_2_17_x86_64" in tag for tag in engine["details"]["wheel_tags"])
