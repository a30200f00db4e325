"""Resuming a campaign job (issue 19 §2): the points an earlier run of the same job already
stored, so a rerun (a requeued, killed or resubmitted job) measures only the rest.

A job's runs carry its resume key (`versions_json.resume_key`, the campaign job's name); a
point is done when a complete `runs` row with that key, benchmark, size and implementation
exists. Runs are stored all or nothing (store/results.py), so a run cut short leaves no row
and is measured again; a run the benchmark itself marked partial is measured again too."""

from __future__ import annotations

from tailcast.store import Catalog, ResultsDir

_DONE = (
    "SELECT DISTINCT benchmark, msg_size_bytes FROM runs "
    "WHERE json_extract_string(versions_json, '$.resume_key') = ? "
    "AND implementation = ? AND NOT coalesce(partial, false)"
)


def stored_points(results: ResultsDir, resume_key: str, impl: str) -> set[tuple[str, int]]:
    """(benchmark, message size) of every complete run stored under `resume_key`."""
    with Catalog(results) as catalog:
        rows = catalog.sql(_DONE, [resume_key, impl]).to_pylist()
    return {(r["benchmark"], int(r["msg_size_bytes"])) for r in rows}
