"""SIGKILL at random points of real tailcast commands (issue 19 §2): `collect watch`,
`replay run` and `replay sweep run` / `resume`, shared by tests/reliability/test_kill_commands.py
(a few trials) and bench/reliability_bench.py (100 per command).

Each trial starts the command in its own session and, after a random delay, kills the whole
session with SIGKILL (the command and any worker it started, as a node's death or
`scancel --signal=KILL` would). Afterwards the store is read the way every reader reads it
(store.Catalog) and checked: no unreadable file, nothing partial visible, and for sweeps that
a resume finishes every point exactly once."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tailcast.store import Catalog, ResultsDir


@dataclass
class KillCounts:
    trials: int = 0
    killed: int = 0  # trials the kill found still running (the others had finished)
    expected: int = 0  # results that must be there (finished commands / sweep points)
    found: int = 0
    duplicated: int = 0
    corrupt: int = 0  # files no reader can read
    incomplete: int = 0  # results visible without all their parts
    pending_hidden: int = 0  # parts of killed results, left out of every query


def kill_at_random(
    argv: Sequence[str], env: dict[str, str], rng: random.Random, max_delay_s: float
) -> bool:
    """Runs `argv`, SIGKILLs its session 0..max_delay_s later; True if it was still running."""
    proc = subprocess.Popen(
        list(argv),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        proc.wait(timeout=rng.uniform(0.0, max_delay_s))
        return False
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):  # the session may have ended meanwhile
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while _session_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)  # workers of the session die with it; wait until they have
    return proc.returncode == -signal.SIGKILL


def _session_alive(sid: int) -> bool:
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":  # field 6: session id
            return True
    return False


def _store_health(root: Path, counts: KillCounts) -> Catalog:
    catalog = Catalog(ResultsDir(root))
    counts.corrupt = sum(len(info.problems) for info in catalog.tables.values())
    counts.pending_hidden = sum(len(info.pending) for info in catalog.tables.values())
    return catalog


def check_replays(root: Path, counts: KillCounts, ops_per_replay: int) -> KillCounts:
    """Every visible replay has all its op rows; none is listed twice."""
    with _store_health(root, counts) as catalog:
        rows = catalog.rows("SELECT replay_id FROM replays")
        ops = {
            r["replay_id"]: r["n"]
            for r in catalog.rows("SELECT replay_id, count(*) AS n FROM replay_ops GROUP BY 1")
        }
    ids = [r["replay_id"] for r in rows]
    counts.found = len(set(ids))
    counts.duplicated = len(ids) - len(set(ids))
    counts.incomplete = sum(ops.get(i, 0) != ops_per_replay for i in set(ids))
    counts.incomplete += sum(i not in set(ids) for i in ops)
    return counts


def check_snapshots(root: Path, counts: KillCounts) -> KillCounts:
    """Every visible utilisation row has one `snapshots` row per job it counted."""
    with _store_health(root, counts) as catalog:
        util = catalog.rows(
            "SELECT snapshot_id, running_jobs + pending_jobs AS jobs FROM utilisation"
        )
        per = {
            r["snapshot_id"]: r["n"]
            for r in catalog.rows("SELECT snapshot_id, count(*) AS n FROM snapshots GROUP BY 1")
        }
    ids = [r["snapshot_id"] for r in util]
    counts.found = len(set(ids))
    counts.duplicated = len(ids) - len(set(ids))
    counts.incomplete = sum(per.get(r["snapshot_id"], 0) != r["jobs"] for r in util)
    counts.incomplete += sum(i not in set(ids) for i in per)
    return counts


def check_sweep(root: Path, sweep_id: str, points: int, counts: KillCounts) -> KillCounts:
    """After the final resume: each point's row once, each point's replay once."""
    with _store_health(root, counts) as catalog:
        done = catalog.sql(
            "SELECT count(*) AS n, count(DISTINCT point) AS d FROM sweep_points WHERE sweep_id = ?",
            [sweep_id],
        ).to_pylist()[0]
        replays = catalog.sql(
            "SELECT count(*) AS n, count(DISTINCT replay_id) AS d FROM replays "
            "WHERE starts_with(replay_id, ?)",
            [f"{sweep_id}-p"],
        ).to_pylist()[0]
    counts.expected = points
    counts.found = done["d"]
    counts.duplicated = (done["n"] - done["d"]) + (replays["n"] - replays["d"])
    counts.incomplete = abs(replays["d"] - done["d"])
    return counts
