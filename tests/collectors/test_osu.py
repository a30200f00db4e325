"""OSU output parsing on every real file of tests/data/osu-7.4 (copied from shared/data),
and the argv each OSU version is given."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tailcast.collectors.osu_errors import (
    OsuError,
    OsuNoRowsError,
    OsuRankCountError,
    OsuUsageError,
    OsuValidationError,
)
from tailcast.collectors.osu_parse import check_validation, load_osu_file, parse_osu_output
from tailcast.collectors.osu_run import (
    OsuRequest,
    expected_columns,
    find_osu_binary,
    osu_argv,
)
from tailcast.errors import ExternalToolError, InputError, UsageError

OSU = Path(__file__).resolve().parents[1] / "data" / "osu-7.4"

FULL = ["Size", "Avg Latency(us)", "Min Latency(us)", "Max Latency(us)", "Iterations"]
TAIL = ["P50 Tail Lat(us)", "P90 Tail Lat(us)", "P99 Tail Lat(us)"]

# file -> (title, version, columns, rows, first row size, first avg, last size, last avg)
GOOD = {
    "omb72__osu_bcast_np4__default.txt": (
        "OSU MPI Broadcast Latency Test",
        "7.2",
        ["Size", "Avg Latency(us)"],
        21,
        1,
        0.60,
        1048576,
        None,
    ),
    "omb72__osu_latency_np2__default.txt": (
        "OSU MPI Latency Test",
        "7.2",
        ["Size", "Latency (us)"],
        21,
        1,
        0.12,
        1048576,
        78.10,
    ),
    "osu_alltoall_np4__default.txt": (
        "OSU MPI All-to-All Personalized Exchange Latency Test",
        "7.4",
        ["Size", "Avg Latency(us)"],
        21,
        1,
        7.49,
        1048576,
        None,
    ),
    "osu_alltoall_np4__f.txt": (
        "OSU MPI All-to-All Personalized Exchange Latency Test",
        "7.4",
        FULL,
        21,
        1,
        43.60,
        1048576,
        None,
    ),
    "osu_barrier_np4__default.txt": (
        "OSU MPI Barrier Latency Test",
        "7.4",
        ["Avg Latency(us)"],
        1,
        None,
        4.38,
        None,
        4.38,
    ),
    "osu_bcast_np4__default.txt": (
        "OSU MPI Broadcast Latency Test",
        "7.4",
        ["Size", "Avg Latency(us)"],
        21,
        1,
        368.04,
        1048576,
        3832.76,
    ),
    "osu_bcast_np4__f.txt": (
        "OSU MPI Broadcast Latency Test",
        "7.4",
        FULL,
        21,
        1,
        167.59,
        1048576,
        560.51,
    ),
    "osu_bcast_np4__f_c_z.txt": (
        "OSU MPI Broadcast Latency Test",
        "7.4",
        [*FULL, "Validation", *TAIL],
        17,
        1,
        2.08,
        65536,
        16.05,
    ),
    "osu_bcast_np4__z.txt": (
        "OSU MPI Broadcast Latency Test",
        "7.4",
        ["Size", "Avg Latency(us)", *TAIL],
        21,
        1,
        0.59,
        1048576,
        493.12,
    ),
    "osu_latency_np2__c_z__m_1-65536.txt": (
        "OSU MPI Latency Test",
        "7.4",
        ["Size", "Avg Latency(us)", "Validation", *TAIL],
        17,
        1,
        1.61,
        65536,
        101.48,
    ),
    "osu_latency_np2__default.txt": (
        "OSU MPI Latency Test",
        "7.4",
        ["Size", "Avg Latency(us)"],
        23,
        1,
        0.13,
        4194304,
        5870.46,
    ),
    "osu_reduce_np4__f.txt": (
        "OSU MPI Reduce Latency Test",
        "7.4",
        FULL,
        21,
        1,
        2.06,
        1048576,
        863.86,
    ),
}

# err file (stdout, optional stderr beside it) -> (error type, text it must carry)
ERRORS = {
    "err__osu_bcast_np1.txt": (OsuRankCountError, "This test requires at least two processes"),
    "err__osu_bcast_np1.combined.txt": (OsuRankCountError, "requires at least two processes"),
    "err__osu_bcast_np4__invalid_opt_Q.txt": (OsuUsageError, "Invalid option [-Q]"),
    "err__osu_bcast_np4__invalid_opt_Q.combined.txt": (OsuUsageError, "Invalid option [-Q]"),
    "err__osu_bcast_np4__invalid_opt_Q.stderr.txt": (OsuUsageError, "Invalid option [-Q]"),
    "err__osu_bcast_np4__m_neg.txt": (OsuUsageError, "Invalid Message Size [-m -5]"),
    "err__osu_bcast_np4__m_neg.combined.txt": (OsuUsageError, "Invalid Message Size [-m -5]"),
    "osu_bcast_np4__help.txt": (OsuUsageError, "Usage: osu_bcast"),
}


def test_every_data_file_is_covered() -> None:
    names = {p.name for p in OSU.iterdir() if p.is_file()}
    stderr_only = {n for n in names if n.endswith(".stderr.txt")}
    assert names - stderr_only - {"err__osu_bcast_np1.stderr.txt"} <= set(GOOD) | set(ERRORS)
    assert set(GOOD) | set(ERRORS) <= names


@pytest.mark.parametrize("name", sorted(GOOD))
def test_good_outputs(name: str) -> None:
    title, version, columns, nrows, size0, avg0, size_n, avg_n = GOOD[name]
    out = load_osu_file(OSU / name)
    assert (out.title, out.version, out.columns, len(out.rows)) == (title, version, columns, nrows)
    assert out.rows[0].size_bytes == size0
    assert out.rows[0].avg_latency_us == pytest.approx(avg0)
    assert out.rows[-1].size_bytes == size_n
    if avg_n is not None:
        assert out.rows[-1].avg_latency_us == pytest.approx(avg_n)
    sizes = [r.size_bytes for r in out.rows if r.size_bytes is not None]
    assert sizes == sorted(sizes)


def test_full_and_tail_values() -> None:
    out = load_osu_file(OSU / "osu_bcast_np4__f_c_z.txt")
    row = out.rows[-1]  # 65536  16.05  5.76  46.77  100  Pass  10.62  10.96  19.86
    assert (row.size_bytes, row.min_latency_us, row.max_latency_us) == (65536, 5.76, 46.77)
    assert (row.iterations, row.validation) == (100, "Pass")
    assert row.percentiles_us == {50.0: 10.62, 90.0: 10.96, 99.0: 19.86}
    assert out.datatype == "MPI_CHAR" and not out.failed_validation()
    reduce_rows = load_osu_file(OSU / "osu_reduce_np4__f.txt").rows
    assert [r.iterations for r in reduce_rows].count(1000) == 14  # sizes 1..8192
    assert reduce_rows[-1].iterations == 100


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_outputs(name: str) -> None:
    kind, text = ERRORS[name]
    stderr = OSU / name.replace(".txt", ".stderr.txt")
    use_stderr = not name.endswith(("combined.txt", "stderr.txt")) and stderr.exists()
    with pytest.raises(OsuError) as err:
        load_osu_file(OSU / name, stderr if use_stderr else None)
    assert type(err.value) is kind
    assert text in err.value.osu_text
    assert err.value.path == str(OSU / name)


def test_empty_stdout_without_stderr_is_plain_osu_error() -> None:
    with pytest.raises(OsuError, match="no output") as err:
        load_osu_file(OSU / "err__osu_bcast_np1.txt")
    assert type(err.value) is OsuError


def test_validation_failure_carries_sizes() -> None:
    text = (
        (OSU / "osu_bcast_np4__f_c_z.txt")
        .read_text()
        .replace(
            "2                       1.18              0.08              4.37        1000"
            "              Pass",
            "2                       1.18              0.08              4.37        1000"
            "              Fail",
        )
    )
    out = parse_osu_output(text, "v.txt")
    with pytest.raises(OsuValidationError, match="Fail at sizes 2"):
        check_validation(out)


def _lines(name: str) -> list[str]:
    return (OSU / name).read_text().splitlines()


def test_garbled_row_names_file_and_line() -> None:
    lines = _lines("osu_bcast_np4__f.txt")
    lines[7] = lines[7].rsplit(maxsplit=1)[0]  # drop the Iterations value of size 8
    with pytest.raises(InputError) as err:
        parse_osu_output("\n".join(lines), "cut.txt")
    assert (err.value.path, err.value.line) == ("cut.txt", 8)
    assert "4 values for 5 columns" in err.value.reason


def test_non_number_value_names_line() -> None:
    lines = _lines("osu_latency_np2__default.txt")
    lines[5] = lines[5].replace("0.12", "0.1x")
    with pytest.raises(InputError) as err:
        parse_osu_output("\n".join(lines), "x.txt")
    assert err.value.line == 6 and "'0.1x'" in err.value.reason


def test_header_without_rows_is_an_error_naming_the_file() -> None:
    # What `osu_bcast -T mpi_int -m 1:2` prints: no size holds a whole MPI_INT. A run that
    # measured nothing is not a result (issue 41: it parsed as a run with zero rows).
    head = "\n".join(_lines("osu_bcast_np4__f.txt")[:4]) + "\n"
    with pytest.raises(OsuNoRowsError) as err:
        parse_osu_output(head, "h.txt")
    assert "h.txt: OSU MPI Broadcast Latency Test: no result row" in str(err.value)
    assert err.value.osu_text.startswith("# Size") and err.value.osu_text in head


def test_argv_per_version() -> None:
    bcast = OsuRequest("bcast", 1024, 1000, 100)
    assert osu_argv("osu_bcast", "7.4", bcast) == [
        "osu_bcast",
        "-m",
        "1024:1024",
        "-i",
        "1000",
        "-x",
        "100",
        "-f",
        "-z",
    ]
    assert osu_argv("osu_bcast", "7.2", bcast)[-1] == "-f"  # no -z before 7.3
    custom = OsuRequest("bcast", 4, 10, 1, percentiles=(50, 99))
    assert osu_argv("b", "7.4", custom)[-1] == "-z50,99"  # attached form only
    with pytest.raises(UsageError):
        osu_argv("b", "7.2", custom)
    latency = OsuRequest("latency", 8, 1000, 100, validate=True)
    argv = osu_argv("osu_latency", "7.4", latency)
    assert "-f" not in argv and argv[-2:] == ["-c", "-z"]  # pt2pt rejects -f
    assert "-m" not in osu_argv("osu_barrier", "5.9", OsuRequest("barrier", 0, 10, 1))
    with pytest.raises(UsageError):
        osu_argv("osu_latency", "5.9", latency)
    assert expected_columns("7.4", bcast) == [
        "Min Latency(us)",
        "Max Latency(us)",
        "Iterations",
        *TAIL,
    ]


def test_argv_never_has_positional_arguments() -> None:
    # A stray positional silently disables later OSU options: every value follows its flag.
    for version in ("5.6.3", "7.2", "7.4"):
        argv = osu_argv("osu_bcast", version, OsuRequest("bcast", 32768, 50, 5))[1:]
        for i, token in enumerate(argv):
            assert token.startswith("-") or argv[i - 1] in {"-m", "-i", "-x"}


def test_find_binary_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home" / "libexec/osu-micro-benchmarks/mpi/collective"
    explicit = tmp_path / "explicit"
    for d in (home, explicit):
        d.mkdir(parents=True)
        (d / "osu_bcast").write_text("#!/bin/sh\n")
        os.chmod(d / "osu_bcast", 0o755)
    monkeypatch.setenv("OSU_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert find_osu_binary("bcast", explicit) == explicit / "osu_bcast"
    assert find_osu_binary("bcast") == home / "osu_bcast"
    with pytest.raises(ExternalToolError, match="osu_alltoall"):
        find_osu_binary("alltoall")
    with pytest.raises(UsageError):
        find_osu_binary("nonsense")


def test_suite_table_matches_the_tracer_and_the_argv_rules() -> None:
    from tailcast.collectors.osu_suite import COLLECTIVES, SAMPLED, SUITE
    from tailcast.traces.capture.timing import CALLS

    assert len(COLLECTIVES) == 40  # 15 blocking, 15 non-blocking, 10 neighbourhood
    for name in SAMPLED:
        assert SUITE[name].call in CALLS, name
    ibcast = OsuRequest("ibcast", 64, 10, 1)
    assert osu_argv("osu_ibcast", "7.4", ibcast)[-2:] == ["-f", "-z"]
    assert expected_columns("7.4", ibcast)[:2] == ["Coll. Init(us)", "MPI_Test(us)"]
    bw = OsuRequest("bw", 4096, 10, 1)
    assert "-f" not in osu_argv("osu_bw", "7.4", bw)  # pt2pt rejects -f
    assert expected_columns("7.4", bw) == [f"P{p} Tail BW(MB/s)" for p in (50, 90, 99)]
    assert "-m" not in osu_argv("osu_ibarrier", "7.4", OsuRequest("ibarrier", 0, 10, 1))
    assert SUITE["latency"].ranks_for(4) == 2 and SUITE["multi_lat"].ranks_for(5) == 4
    assert SUITE["ineighbor_alltoallw"].pattern == "neighbourhood"
    assert SUITE["igather"].pattern == "all-to-one" and SUITE["put_bw"].pattern == "one-sided"
