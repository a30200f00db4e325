"""The native `squeue --json` scanner (tailcast._core.squeue_columns, crates/queue-scan)
behind parse_squeue_json: same jobs as a plain json.loads walk on the real Slurm 22.05.8
files, the newer shape, escapes, and errors that name the file and line."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

from tailcast._core import squeue_columns
from tailcast.collectors.jobs import expand_nodes
from tailcast.collectors.squeue import load_queue_file, parse_squeue_json
from tailcast.errors import InputError

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm-22.05"
RECORDED = ("squeue1.json", "squeue-mix.json", "squeue-shared.json")


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_files_match_a_plain_json_walk(name: str) -> None:
    text = (DATA / name).read_text()
    snap = parse_squeue_json(text)
    raw = json.loads(text)
    assert [j.raw_id for j in snap.jobs] == [str(j["job_id"]) for j in raw["jobs"]]
    for job, entry in zip(snap.jobs, raw["jobs"], strict=True):
        assert job.states == (entry["job_state"],)
        assert job.node_count == entry["node_count"] and job.user == entry["user_name"]
        if not job.finished:
            assert job.nodes == expand_nodes(entry["nodes"])
    assert snap.slurm_version == raw["meta"]["Slurm"]["release"] == "22.05.8"
    assert snap.cluster == raw["jobs"][0]["cluster"]


def test_columns_contract_and_shared_values() -> None:
    cols = squeue_columns((DATA / "squeue-mix.json").read_bytes())
    assert cols["job_id"] == list(range(1, 15))
    assert cols["release"] == ["22.05.8"] and cols["cluster"] == ["lab"]
    assert cols["errors"] == [] and cols["problems"] == []
    states = cols["job_state"]
    assert states[0] == ("COMPLETED",) and states[-1] == ("PENDING",)
    assert states[-1] is states[-2]  # one tuple per distinct state list
    assert cols["nodes"][-1] is None and cols["array_task_id"][0] is None


def test_newer_shape_with_escapes() -> None:
    doc = r"""{"jobs": [{"job_id": 41, "job_state": ["running", "COMPLETING"],
        "nodes": "node[01-02]", "user_name": "ren\u00e9e\/x",
        "node_count": {"set": true, "infinite": false, "number": 2},
        "array_job_id": {"set": true, "infinite": false, "number": 40},
        "array_task_id": {"set": true, "infinite": false, "number": 1},
        "command": "\/bin\/sh -c \"x\" \ud83d\ude00"}],
        "meta": {"slurm": {"release": "24.05.2", "cluster": "big"}}, "errors": []}"""
    snap = parse_squeue_json(doc)
    job = snap.jobs[0]
    assert (job.job_id, job.raw_id, job.user) == ("40_1", "41", "renée/x")
    assert job.states == ("RUNNING", "COMPLETING") and job.running
    assert job.nodes == ("node01", "node02") and job.node_count == 2
    assert (snap.slurm_version, snap.cluster) == ("24.05.2", "big")


def test_syntax_error_names_file_line_and_column(tmp_path: Path) -> None:
    lines = (DATA / "squeue1.json").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"nodes"' in line)
    lines[at] = lines[at].replace('"nodes": ', '"nodes": tru')
    bad = tmp_path / "bad.json"
    bad.write_text("\n".join(lines))
    with pytest.raises(InputError) as err:
        load_queue_file(bad)
    assert err.value.path == str(bad) and err.value.line == at + 1
    assert err.value.reason.startswith("not valid JSON: invalid literal")
    assert "(column " in err.value.reason


def test_unterminated_string_points_at_its_start(tmp_path: Path) -> None:
    bad = tmp_path / "cut.json"
    bad.write_text('{"jobs": [\n  {"job_id": 1,\n   "name": "abc')
    with pytest.raises(InputError, match="unterminated string") as err:
        load_queue_file(bad)
    assert err.value.line == 3


def test_bad_entry_names_index_id_and_line() -> None:
    doc = '{"jobs": [\n {"job_id": 1},\n {"job_id": 2, "node_count": [3]}\n]}'
    with pytest.raises(InputError) as err:
        parse_squeue_json(doc, "q.json")
    assert err.value.line == 3
    assert err.value.reason == "jobs[1] (job_id=2): node_count: expected a number, got [3]"
    with pytest.raises(InputError, match=r"jobs\[0\] \(job_id=None\): job entry has no job_id"):
        parse_squeue_json('{"jobs": [{"nodes": "n1"}]}')


def test_bad_hostlist_before_a_bad_entry_is_reported_first() -> None:
    doc = '{"jobs": [{"job_id": 1, "nodes": "n[1-", "job_state": "RUNNING"}, 7]}'
    with pytest.raises(InputError, match=r"jobs\[0\] \(job_id=1\).*hostlist"):
        parse_squeue_json(doc)


def test_squeue_errors_and_wrong_shapes() -> None:
    with pytest.raises(InputError, match="squeue reported errors"):
        parse_squeue_json('{"jobs": [], "errors": [{"error": "Invalid user"}]}')
    with pytest.raises(InputError, match="not squeue --json output") as err:
        parse_squeue_json('[{"jobs": []}]', "x.json")
    assert err.value.line == 1 and err.value.path == "x.json"
    with pytest.raises(InputError, match="no top-level 'jobs'"):
        parse_squeue_json('{"jobs": {}}')


def test_scan_releases_the_gil() -> None:
    # With a long switch interval, the counting thread can only run while the main thread
    # is inside the scan if the scan released the GIL (and never does otherwise). The first
    # round is skipped: the thread may still be due a switch requested under the old, short
    # interval. Any later round counts: on a busy machine the thread may not be scheduled
    # within one short scan.
    job = json.dumps({"job_id": 1, "padding": ["x" * 200] * 20})
    data = ('{"jobs": [' + ",".join([job] * 3000) + "]}").encode()
    count = [0]
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            count[0] += 1

    thread = threading.Thread(target=spin)
    thread.start()
    interval = sys.getswitchinterval()
    progress = []
    try:
        while count[0] == 0:
            pass
        sys.setswitchinterval(0.25)
        for _ in range(6):
            before = count[0]
            squeue_columns(data)
            progress.append(count[0] - before)
    finally:
        stop.set()
        sys.setswitchinterval(interval)
        thread.join()
    assert max(progress[1:]) > 0
