"""The OSU parser on real OSU 7.4 outputs recorded on this machine by
scripts/record_osu_outputs.py (tests/data/osu-7.4/recorded: stdout, stderr, exit status):
one file per output format — bandwidth, message rate matrices, non-blocking, one-sided,
start-up, OMB-Py, -T/-D/-G/-c/-z, a failed validation, a killed run, runs with no rows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tailcast.collectors.osu_errors import OsuError, OsuNoRowsError, OsuValidationError
from tailcast.collectors.osu_output import OsuOutput, result_rows
from tailcast.collectors.osu_parse import parse_osu_output, split_header
from tests.collectors.osu_checks import assert_exact, assert_osu_words

DATA = Path(__file__).resolve().parents[1] / "data" / "osu-7.4" / "recorded"
NAMES = sorted(p.name.removesuffix(".txt") for p in DATA.glob("*.txt") if ".stderr" not in p.name)
# Runs that end in a typed error (OSU's words) instead of rows.
ERRORS = {
    "osu_bw_fan_in_np2__default": "Please run this benchmark on more than 1 node",
    "omb_py__allreduce_np2": "TypeError: 'float' object cannot be interpreted as an integer",
    "osu_bcast_np2__c__corrupted_from_8": "exited with status 1 on message size 8",
    # A header and no row (exit status 0): no size in the range, no size holding a whole
    # MPI_INT. A run that measured nothing is an error, not an output of zero rows.
    "osu_latency_np2__m_64-8": "# Size       Avg Latency(us)",
    "osu_bcast_np2__T_mpi_int__m_1-2": "# Size       Avg Latency(us)",
}


def _load(name: str) -> tuple[str, str, int]:
    stderr = DATA / f"{name}.stderr.txt"
    return (
        (DATA / f"{name}.txt").read_text(),
        stderr.read_text() if stderr.exists() else "",
        int((DATA / f"{name}.rc").read_text()),
    )


def _parse(name: str) -> OsuOutput:
    stdout, stderr, rc = _load(name)
    return parse_osu_output(stdout, f"{name}.txt", stderr, returncode=rc)


def test_recorded_set_is_complete() -> None:
    assert len(NAMES) == 27 and all((DATA / f"{n}.rc").exists() for n in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_exact_values_or_osu_error(name: str) -> None:
    stdout, stderr, rc = _load(name)
    if name in ERRORS:
        with pytest.raises(OsuError) as err:
            _parse(name)
        assert ERRORS[name] in err.value.osu_text
        assert_osu_words(err.value, stdout, stderr)
        return
    out = _parse(name)
    assert_exact(out, stdout)
    assert out.partial == (rc != 0), (out.partial, out.partial_reason)


def test_bandwidth_has_its_own_columns() -> None:
    out = _parse("osu_bw_np2__z")
    assert out.columns[1:] == [
        "Bandwidth (MB/s)",
        "P50 Tail BW(MB/s)",
        "P90 Tail BW(MB/s)",
        "P99 Tail BW(MB/s)",
    ]
    for row in out.rows:
        assert row.avg_latency_us is None and not row.tail_latency_us
        assert row.bandwidth_mb_s is not None and set(row.tail_bandwidth_mb_s) == {50, 90, 99}
    stored = result_rows(out, "bw")
    assert all(r["avg_latency_us"] is None and r["p50_latency_us"] is None for r in stored)
    assert [r["bandwidth_mb_s"] for r in stored] == [r.bandwidth_mb_s for r in out.rows]


def test_header_with_single_space_before_tail_column() -> None:
    text = "Size      Bandwidth (MB/s) P50 Tail BW(MB/s) P90 Tail BW(MB/s)"
    assert split_header(text) == ["Size", "Bandwidth (MB/s)", "P50 Tail BW(MB/s)",
                                  "P90 Tail BW(MB/s)"]  # fmt: skip


def test_message_rate_matrices() -> None:
    out = _parse("osu_mbw_mr_np2__V")
    windows = [1, 2, 4, 8, 16, 32, 64, 128]
    bandwidth = [r for r in out.rows if r.bandwidth_mb_s is not None]
    rate = [r for r in out.rows if r.messages_per_s is not None]
    assert len(bandwidth) == len(rate) == 4 * len(windows)
    assert [r.window_size for r in bandwidth[:8]] == windows
    first = bandwidth[0]
    assert (first.size_bytes, first.window_size, first.bandwidth_mb_s) == (1, 1, 0.71)
    assert (rate[-1].size_bytes, rate[-1].window_size, rate[-1].messages_per_s) == (
        8,
        128,
        9269652.75,
    )
    rated = _parse("osu_mbw_mr_np2__c_z")
    assert all(r.messages_per_s and r.bandwidth_mb_s and r.validation == "Pass" for r in rated.rows)


def test_non_blocking_full_validated_tails() -> None:
    row = _parse("osu_ibcast_np4__f_c_z").rows[0]
    # 1  1.18 0.69 0.28 0.00 0.10 0.42 0.29 0.54 0.00 Pass 1.15 1.18 1.40
    assert (row.overall_us, row.compute_us, row.init_us, row.test_us, row.wait_us) == (
        1.18, 0.69, 0.28, 0.0, 0.10,
    )  # fmt: skip
    assert (row.pure_comm_us, row.min_comm_us, row.max_comm_us, row.overlap_pct) == (
        0.42, 0.29, 0.54, 0.0,
    )  # fmt: skip
    assert row.validation == "Pass" and row.tail_latency_us == {50: 1.15, 90: 1.18, 99: 1.40}
    assert row.avg_latency_us is None
    barrier = _parse("osu_ibarrier_np4__default")
    assert barrier.rows[0].size_bytes is None and barrier.rows[0].overall_us is not None


def test_datatypes_ddt_and_no_rows_is_an_error() -> None:
    typed = _parse("osu_bcast_np2__T_all_f")
    assert [r.datatype for r in typed.rows] == ["MPI_CHAR"] * 5 + ["MPI_INT"] * 3 + [
        "MPI_FLOAT"
    ] * 3
    assert [r.size_bytes for r in typed.rows if r.datatype == "MPI_INT"] == [4, 8, 16]
    ddt = _parse("osu_bcast_np2__D_vect")
    assert all(r.transmit_size_bytes is not None for r in ddt.rows)
    assert ddt.rows[-1].transmit_size_bytes == 32  # vect:2:1 sends every other byte of 64
    with pytest.raises(OsuNoRowsError, match="no result row"):  # no size holds an MPI_INT
        _parse("osu_bcast_np2__T_mpi_int__m_1-2")


def test_validation_failure_names_benchmark_and_size_rows_kept() -> None:
    with pytest.raises(OsuValidationError) as err:
        _parse("osu_bcast_np2__c__corrupted_from_8")
    assert (err.value.benchmark, err.value.size_bytes) == ("osu_bcast", 8)
    assert "osu_bcast" in str(err.value) and "8 bytes" in str(err.value)
    kept = err.value.output
    assert kept is not None
    assert [(r.size_bytes, r.validation) for r in kept.rows] == [
        (1, "Pass"), (2, "Pass"), (4, "Pass"), (8, "Fail"),
    ]  # fmt: skip
    assert [r.size_bytes for r in kept.failed_validation()] == [8]


def test_killed_and_crashed_runs_keep_rows_marked_partial() -> None:
    killed = _parse("osu_bcast_np2__killed")
    assert killed.partial and [r.size_bytes for r in killed.rows] == [1, 2]
    assert killed.partial_reason == "exited with status -9"
    crashed = _parse("osu_latency_mt_np2__default")
    assert crashed.partial and len(crashed.rows) == 5
    assert crashed.partial_reason.startswith("mpirun has exited due to process rank 0")
    assert all(r["partial"] for r in result_rows(crashed))
    # A cut last line (the launcher killed OSU mid-print) is left out, not misread.
    text = (DATA / "osu_bcast_np2__killed.txt").read_text().rstrip("\n")[:-8]
    cut = parse_osu_output(text, "cut.txt")
    assert cut.partial and len(cut.rows) == 1 and "cut off" in cut.partial_reason


def test_one_sided_start_up_and_neighbourhood() -> None:
    put = _parse("osu_put_latency_np2__s_pscw_w_create")
    assert "# Window creation: MPI_Win_create" in put.notes
    assert put.rows[0].avg_latency_us is not None
    get_bw = _parse("osu_get_bw_np2__z")
    assert get_bw.rows[0].bandwidth_mb_s is not None and get_bw.rows[0].tail_bandwidth_mb_s
    init = _parse("osu_init_np2__default").rows[0]
    assert init.ranks == 2 and init.avg_latency_us is not None and init.avg_latency_us >= 1000
    assert _parse("osu_hello_np2__default").rows[0].ranks == 2
    hood = _parse("osu_neighbor_allgather_np4__f")
    assert hood.notes[0].startswith("Dimensions size") and hood.rows[0].min_latency_us


def test_plots_and_missing_tail_values() -> None:
    plotted = _parse("osu_bcast_np2__G_tty")
    assert len(plotted.rows) == 2
    assert [n for n in plotted.notes if n.startswith("-G tty plot: Size: ")]
    multi = _parse("osu_multi_lat_np2__c_z")
    assert all(r.validation == "Pass" and not r.tail_latency_us for r in multi.rows)
    assert any("OSU printed none" in n for n in multi.notes)


def test_omb_py_outputs() -> None:
    for name in ("omb_py__bcast_np2", "omb_py__bw_np2", "omb_py__barrier_np2"):
        out = _parse(name)
        assert out.omb_py and out.version is None and out.rows
    assert _parse("omb_py__bw_np2").rows[0].bandwidth_mb_s is not None
    assert _parse("omb_py__barrier_np2").rows[0].size_bytes == 0


def test_collect_osu_cli_json() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tailcast", "collect", "osu", "--json",
         str(DATA / "osu_bw_np2__z.txt"), str(DATA / "osu_ibcast_np4__f_c_z.txt")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    bw, ibcast = json.loads(proc.stdout)
    assert "avg_latency_us" not in bw["rows"][0] and bw["rows"][0]["bandwidth_mb_s"] > 0
    assert ibcast["rows"][0]["pure_comm_us"] == 0.42
    failed = subprocess.run(
        [sys.executable, "-m", "tailcast", "collect", "osu",
         str(DATA / "osu_bcast_np2__c__corrupted_from_8.txt")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert failed.returncode == 1
    assert "data validation failed at 8 bytes" in failed.stderr
