"""The CLI in scripts (issue 41): `db sql --csv` output used in `$(…)`, and `agent submit
--dry-run` leaving the checkout and the working directory as they were."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.cli.running import tree

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
TAILCAST = shlex.join([sys.executable, "-m", "tailcast"])


def test_csv_lines_end_in_newline_and_feed_from_run(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(DATA / "bsweep-16node", home)  # the real 16-node b sweep's runs
    env = {**os.environ, "TAILCAST_HOME": str(home)}
    query = "SELECT run_id, b_before FROM runs ORDER BY b_before, run_id"
    csv = subprocess.run([*shlex.split(TAILCAST), "db", "sql", query, "--csv"],
                         capture_output=True, env=env, check=True).stdout  # fmt: skip
    assert b"\r" not in csv and csv.endswith(b"\n")
    assert csv.count(b"\n") == 1 + 168
    trace = tmp_path / "bcast4.parquet"
    subprocess.run([*shlex.split(TAILCAST), "trace", "synth", "osu", "-n", "4", "--collective",
                    "bcast", "--sizes", "4", "--iterations", "20", "-o", str(trace)],
                   check=True, capture_output=True, env=env)  # fmt: skip
    # The newcomer's line: the last run's id by command substitution, straight into --from-run.
    script = (
        f"{TAILCAST} replay run {shlex.quote(str(trace))} --fabric tree-2x2x4 --json "
        f"--from-run \"$({TAILCAST} db sql 'SELECT run_id FROM runs ORDER BY b_before, run_id'"
        ' --csv | tail -1)"'
    )
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    replay = json.loads(proc.stdout)
    last_id, last_b = csv.decode().splitlines()[-1].split(",")
    rows = subprocess.run(
        [*shlex.split(TAILCAST), "db", "sql", "--json",
         f"SELECT background_b, background FROM replays WHERE replay_id = '{replay['replay_id']}'"],
        capture_output=True, text=True, env=env, check=True,
    ).stdout  # fmt: skip
    stored = json.loads(rows)[0]
    assert stored["background_b"] == float(last_b) > 0
    assert json.loads(stored["background"])["from_run"] == last_id


def test_dry_run_writes_only_into_a_temporary_directory_it_prints(tmp_path: Path) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TAILCAST_HOME": str(tmp_path / "home"), "TMPDIR": str(temp)}
    checkout = tree(REPO / "slurm_jobs")
    for campaign in ("campaign.example.toml", "bsweep.example.toml"):
        proc = subprocess.run(
            [*shlex.split(TAILCAST), "agent", "submit", str(REPO / "slurm_jobs" / campaign),
             "--dry-run", "--json"],
            capture_output=True, text=True, env=env, cwd=cwd,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        out = Path(doc["out_dir"])
        assert out.parent == temp and f"temporary directory {out}" in proc.stderr
        assert doc["dry_run"] and doc["scripts"]
        assert sorted(doc["scripts"]) == sorted(str(p) for p in out.iterdir())
        assert all(Path(p).read_text().startswith("#!") for p in doc["scripts"])
    assert tree(REPO / "slurm_jobs") == checkout
    assert list(cwd.iterdir()) == []
    assert not (tmp_path / "home").exists()
