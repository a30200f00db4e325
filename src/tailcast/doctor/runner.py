"""Runs every doctor check at once (each probe has its own deadline, so a hung controller
costs one timeout, not the sum) and decides whether offline replay works."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import tailcast.doctor.local as local
import tailcast.doctor.site as site
from tailcast.doctor.probe import Check, Status

# Checks whose failure means offline replay does not work (also when the check crashed).
ESSENTIAL = frozenset({"python", "packages", "engine", "replay", "store"})
# The replay check starts a Python child that imports the data stack and the engine.
REPLAY_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class DoctorReport:
    checks: list[Check]

    @property
    def offline_replay_works(self) -> bool:
        return all(c.ok for c in self.checks if c.essential)

    def to_dict(self) -> dict[str, Any]:
        return {
            "offline_replay_works": self.offline_replay_works,
            "turned_off": sorted({f for c in self.checks if not c.ok for f in c.needed_for}),
            "checks": [c.to_dict() for c in self.checks],
        }


def run_checks(osu_dir: Path | None = None, timeout: float = 10.0) -> DoctorReport:
    """All checks, in report order; a check that crashes is reported, never raised."""
    checks: list[tuple[str, Callable[[], Check]]] = [
        ("python", local.python_check),
        ("packages", local.packages_check),
        ("engine", local.engine_check),
        ("replay", partial(local.replay_check, max(timeout, REPLAY_TIMEOUT_S))),
        ("store", local.store_check),
        ("slurm", partial(site.slurm_check, timeout)),
        ("pyslurm", partial(site.pyslurm_check, timeout)),
        ("mpicc", partial(site.mpicc_check, timeout)),
        ("mpirun", partial(site.mpirun_check, timeout)),
        ("mpi4py", partial(site.mpi4py_check, timeout)),
        ("osu", partial(site.osu_check, osu_dir, timeout)),
        ("simgrid", partial(site.simgrid_check, timeout)),
    ]
    with ThreadPoolExecutor(max_workers=len(checks)) as pool:
        futures = [(name, pool.submit(fn)) for name, fn in checks]
        results = []
        for name, future in futures:
            try:
                results.append(future.result())
            except Exception as exc:  # a bug in one check must not hide the others
                summary = f"the check itself failed: {type(exc).__name__}: {exc}"
                results.append(Check(name, Status.ERROR, summary, (), essential=name in ESSENTIAL))
    return DoctorReport(results)
