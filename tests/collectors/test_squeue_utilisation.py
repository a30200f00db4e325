"""Queue parsing and the b heuristic on real `squeue --json` output of Slurm 22.05.8
(tests/data/slurm-22.05, copied from shared/data). Every expected count is worked out by
hand from the job list written in the comments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tailcast.collectors.jobs import QueueJob
from tailcast.collectors.snapshot import snapshot_of, write_snapshots
from tailcast.collectors.squeue import (
    load_queue_file,
    parse_squeue_format,
    parse_squeue_json,
)
from tailcast.collectors.utilisation import b_accepted, compute_b
from tailcast.errors import InputError, UsageError
from tailcast.store import ResultsDir, read_table

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm-22.05"

# squeue1.json, all RUNNING, N_t = 16:
#   1 node[01-02] (2)   2 node[01-03] (3)   3 node[03-06] (4)   4 node[04-09] (6)
#   5 node07 (1)        6 node10 (1)        7 node[08-09,11-16] (8)   8 node[11-14] (4)
# multi-node: 1,2,3,4,7,8. Unique nodes: 01..09 and 11..16 = 15 (node10 only in job 6).
# N_c' = 2+3+4+6+8+4 = 27; N_a = 27 + 1 + 1 = 29.
# squeue-mix.json: 1-4 finished (COMPLETED/FAILED), 10-14 PENDING, running:
#   5 node[01-02] (2)  6 node[05-07] (3)  7 node[09-12] (4)  8 node[03-04,13-16] (6)
#   9 node08 (1)
# multi-node: 5,6,7,8, disjoint: N_c = 15 = N_c'; N_a = 16.


def load(name: str) -> list[QueueJob]:
    return list(load_queue_file(DATA / name).jobs)


def test_squeue1_parses_every_job_with_expanded_nodes() -> None:
    snap = parse_squeue_json((DATA / "squeue1.json").read_text())
    assert [j.job_id for j in snap.jobs] == [str(i) for i in range(1, 9)]
    assert snap.slurm_version == "22.05.8"
    assert snap.cluster == "lab"
    job7 = snap.jobs[6]
    assert job7.nodes == ("node08", "node09", *(f"node{i}" for i in range(11, 17)))
    assert job7.node_count == 8 and job7.running and job7.user == "root"


def test_b_squeue1_by_hand() -> None:
    u = compute_b(load("squeue1.json"), n_t=16)
    assert (u.n_c, u.n_c_dup, u.n_a_dup, u.n_t) == (15, 27, 29, 16)
    assert u.b_simple == pytest.approx(15 / 16)
    assert u.b == pytest.approx((15 / 16) * (27 / 29))
    assert (u.running_jobs, u.pending_jobs, u.multi_node_jobs) == (8, 0, 6)
    assert u.own_job_excluded is False


def test_b_squeue1_own_job_excluded_and_included() -> None:
    jobs = load("squeue1.json")
    # Own job 4 = node[04-09]: without it the multi-node jobs are 1,2,3,7,8;
    # unique nodes 01..06, 08, 09, 11..16 = 14; N_c' = 2+3+4+8+4 = 21; N_a = 21+1+1 = 23.
    ex = compute_b(jobs, 16, own_job_id="4", exclude_own=True)
    assert (ex.n_c, ex.n_c_dup, ex.n_a_dup) == (14, 21, 23)
    assert ex.b == pytest.approx((14 / 16) * (21 / 23))
    assert ex.own_job_excluded and ex.own_job_id == "4"
    inc = compute_b(jobs, 16, own_job_id="4", exclude_own=False)
    assert (inc.n_c, inc.n_c_dup, inc.n_a_dup) == (15, 27, 29)
    assert not inc.own_job_excluded and inc.own_job_id == "4"


def test_b_squeue_mix_ignores_finished_pending_and_single_node_jobs() -> None:
    jobs = load("squeue-mix.json")
    assert [j.job_id for j in jobs] == [str(i) for i in range(5, 15)]  # 1-4 finished: dropped
    u = compute_b(jobs, 16)
    assert (u.n_c, u.n_c_dup, u.n_a_dup) == (15, 15, 16)
    assert u.b_simple == pytest.approx(15 / 16)
    assert u.b == pytest.approx((15 / 16) * (15 / 16))
    assert (u.running_jobs, u.pending_jobs, u.multi_node_jobs) == (5, 5, 4)


def test_finished_jobs_would_change_b_if_not_dropped() -> None:
    # Guards the client-side filter: the raw 22.05 file holds COMPLETED job 1 on node[01-04].
    raw = parse_squeue_json((DATA / "squeue-mix.json").read_text())
    assert raw.jobs[0].state == "COMPLETED" and raw.jobs[0].finished
    assert not raw.jobs[0].running  # so even unfiltered it never enters b
    assert len(raw.active().jobs) == len(raw.jobs) - 4


def _newer_shape(doc: dict) -> dict:  # type: ignore[type-arg]
    """The same real jobs in the 23.02+ shape: state lists and {set, number} objects."""
    for job in doc["jobs"]:
        job["job_state"] = [job["job_state"]]
        job["node_count"] = {"set": True, "infinite": False, "number": job["node_count"]}
        job["array_job_id"] = {"set": True, "infinite": False, "number": 0}
        job["array_task_id"] = {"set": False, "infinite": False, "number": 0}
        job["job_id"] = job["job_id"]
    doc["meta"] = {"slurm": {"release": "23.11.4", "cluster": "lab"}}
    return doc


def test_newer_json_shape_gives_same_b() -> None:
    doc = _newer_shape(json.loads((DATA / "squeue-mix.json").read_text()))
    snap = parse_squeue_json(json.dumps(doc)).active()
    assert snap.slurm_version == "23.11.4"
    u = compute_b(snap.jobs, 16)
    assert (u.n_c, u.n_c_dup, u.n_a_dup, u.pending_jobs) == (15, 15, 16, 5)


def test_array_task_id_shown_and_own_job_matched_by_raw_id() -> None:
    doc = json.loads((DATA / "squeue1.json").read_text())
    doc["jobs"][0]["array_job_id"] = 1
    doc["jobs"][0]["array_task_id"] = 3
    doc["jobs"][0]["job_id"] = 9
    snap = parse_squeue_json(json.dumps(doc))
    assert snap.jobs[0].job_id == "1_3" and snap.jobs[0].raw_id == "9"
    u = compute_b(snap.jobs, 16, own_job_id="9")
    assert u.n_c_dup == 27 - 2


def test_shared_node_counts_once_per_job() -> None:
    # Two 2-node jobs sharing node01 (nodes have 2 CPUs): N_c = 3, N_c' = 4.
    jobs = [
        QueueJob("1", "1", "u", ("RUNNING",), 2, ("node01", "node02")),
        QueueJob("2", "2", "u", ("RUNNING",), 2, ("node01", "node03")),
        QueueJob("3", "3", "u", ("RUNNING",), 1, ("node01",)),
    ]
    u = compute_b(jobs, 16)
    assert (u.n_c, u.n_c_dup, u.n_a_dup) == (3, 4, 5)
    assert u.b == pytest.approx(3 / 16 * 4 / 5)


def test_empty_queue_b_is_zero_and_bad_n_t_is_usage_error() -> None:
    assert compute_b([], 16).b == 0.0
    with pytest.raises(UsageError):
        compute_b([], 0)


def test_acceptance_threshold_is_strict() -> None:
    assert b_accepted(0.50, 0.54)
    assert not b_accepted(0.50, 0.55 + 1e-12)
    assert not b_accepted(0.60, 0.50, threshold=0.05)
    assert b_accepted(0.60, 0.50, threshold=0.2)


def test_truncated_json_names_file_and_line(tmp_path: Path) -> None:
    text = (DATA / "squeue1.json").read_text()
    bad = tmp_path / "cut.json"
    bad.write_text(text[: len(text) // 2])
    with pytest.raises(InputError) as err:
        load_queue_file(bad)
    assert err.value.path == str(bad) and err.value.line is not None and err.value.line > 1


def test_bad_hostlist_in_job_names_job(tmp_path: Path) -> None:
    doc = json.loads((DATA / "squeue1.json").read_text())
    doc["jobs"][2]["nodes"] = "node[03-"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"jobs\[2\] \(job_id=3\).*hostlist"):
        load_queue_file(bad)


def test_json_without_jobs_list_is_input_error() -> None:
    with pytest.raises(InputError, match="no top-level 'jobs'"):
        parse_squeue_json('{"meta": {}}', "x.json")


def test_format_output_parses_and_malformed_line_is_named() -> None:
    text = "5|5|RUNNING|2|node[01-02]|root\n10|10|PENDING|1||root\n"
    snap = parse_squeue_format(text)
    assert snap.jobs[0].nodes == ("node01", "node02") and snap.jobs[1].pending
    assert snap.jobs[1].nodes == ()
    with pytest.raises(InputError) as err:
        parse_squeue_format(text + "11|11|RUNNING|x|node01|root\n", "q.txt")
    assert err.value.line == 3 and "node count" in err.value.reason
    with pytest.raises(InputError) as err:
        parse_squeue_format("5|5|RUNNING|2\n", "q.txt")
    assert err.value.line == 1


def test_snapshot_written_to_store(results_home: Path) -> None:
    snap = snapshot_of(load_queue_file(DATA / "squeue-mix.json"), 16)
    paths = write_snapshots([snap])
    assert len(paths) == 2
    util = read_table(ResultsDir().files("utilisation")[0], "utilisation").to_pylist()
    assert util[0]["n_c"] == 15 and util[0]["b"] == pytest.approx(225 / 256)
    jobs = read_table(ResultsDir().files("snapshots")[0], "snapshots").to_pylist()
    assert len(jobs) == 10 and jobs[0]["nodes"] == ["node01", "node02"]
    assert {j["snapshot_id"] for j in jobs} == {snap.snapshot_id}
