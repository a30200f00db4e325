"""Bad input a new user gave the CLI (issue 41, "The first hour of a new user"): each case
gets exactly one `tailcast: error:` line naming the input and what is allowed, the exit
status of its kind (2: usage), and leaves $TAILCAST_HOME as it was. Every case runs the
real console entry (`python -m tailcast`) as a subprocess."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from tailcast import _core
from tests.cli.running import one_error, run, tree

DATA = Path(__file__).resolve().parents[1] / "data"
OSU_RECORDED = DATA / "osu-7.4" / "recorded"


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 16-rank OSU allreduce trace."""
    path = tmp_path_factory.mktemp("trace") / "allreduce16.parquet"
    made = run(path.parent / "unused-home", "trace", "synth", "osu", "-n", "16", "--sizes",
               "1K", "--iterations", "5", "-o", path)  # fmt: skip
    assert made.returncode == 0, made.stderr
    return path


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A results home holding the real 16-node b-sweep campaign's runs and samples."""
    home = tmp_path / "home"
    shutil.copytree(DATA / "bsweep-16node", home)
    return home


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["replay", "run", "TRACE", "--background-b", "1.5"],
         ["replay run:", "'--background-b'", "1.5", "0.0<=x<=1.0"]),
        (["replay", "run", "TRACE", "--background-load", "-0.1"],
         ["'--background-load'", "-0.1", "0.0<=x<=1.0"]),
        (["replay", "run", "TRACE", "--nodes", "0"], ["'--nodes'", "x>=1"]),
        (["doctor", "--timeout", "0"], ["doctor:", "'--timeout'", "x>=1.0"]),
        (["replay", "run", "TRACE", "--fabrc", "x"], ["No such option: --fabrc", "--fabric"]),
        (["replay", "run"], ["Missing argument"]),
        (["no-such-command"], ["No such command 'no-such-command'"]),
    ],
)  # fmt: skip
def test_click_usage_errors_are_one_line_exit_2(
    args: list[str], words: list[str], trace: Path, tmp_path: Path
) -> None:
    # Click's own range and parsing errors, in any command: no usage lines, no hint lines.
    home = tmp_path / "home"
    line = one_error(run(home, *[str(trace) if a == "TRACE" else a for a in args]), 2)
    for word in words:
        assert word in line, line
    assert "Usage:" not in line and "Try '" not in line
    assert not home.exists()


def test_background_b_that_cannot_be_placed_names_needed_and_free(
    trace: Path, tmp_path: Path
) -> None:
    # marconi100 has N_t = 980 endpoints; the trace's 16 ranks take 16 of them.
    home = tmp_path / "home"
    line = one_error(run(home, "replay", "run", trace, "--fabric", "marconi100",
                         "--background-b", "1.0"), 2)  # fmt: skip
    assert "background sized from b = 1:" in line  # (--background-b)
    assert "980 background nodes" in line and "only 964 are free" in line
    assert "b <= 964/980" in line
    assert not home.exists()
    # The bound it names is placeable: the replay runs and is stored.
    fits = run(home, "replay", "run", trace, "--fabric", "marconi100", "--background-b",
               str(964 / 980), "--json")  # fmt: skip
    assert fits.returncode == 0, fits.stderr
    assert (home / "replays").is_dir()


def test_background_b_counts_the_other_background_jobs(trace: Path, tmp_path: Path) -> None:
    # dfp-test: 80 endpoints, 16 for the trace, 8 for a --background job: 56 left.
    home = tmp_path / "home"
    line = one_error(run(home, "replay", "run", trace, "--fabric", "dfp-test",
                         "--background", "uniform:nodes=8:load=0.1",
                         "--background-b", "0.75"), 2)  # fmt: skip
    assert "60 background nodes" in line and "only 56 are free" in line
    assert not home.exists()


def test_unknown_coll_algorithm_names_the_collective_and_the_engines_names(
    trace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    line = one_error(run(home, "replay", "run", trace, "--coll", "allreduce=bogus"), 2)
    assert "allreduce: no algorithm 'bogus'" in line
    assert str(trace) not in line  # the option is at fault, not the trace
    valid = _core.collective_algorithms()["allreduce"]
    assert len(valid) == 6 and ", ".join(valid) in line
    line = one_error(run(home, "replay", "run", trace, "--coll", "bcast=pipeline,allfoo=ring"), 2)
    assert "unknown collective 'allfoo'" in line
    assert ", ".join(_core.collective_algorithms()) in line
    line = one_error(run(home, "replay", "run", trace, "--coll", "bcast=12"), 2)
    assert "bcast: no algorithm id 12" in line and "1..=9" in line
    assert not home.exists()


@pytest.mark.parametrize(
    "statement",
    [
        "DROP VIEW runs",
        "CREATE TABLE t AS SELECT * FROM runs",
        "INSERT INTO runs (run_id) VALUES ('x')",
        "ALTER VIEW runs RENAME TO r",
        "COPY runs TO 'HOME/runs/bsweep.parquet'",
        "EXPLAIN ANALYZE COPY (SELECT 1 AS a) TO 'HOME/runs/bsweep.parquet' (USE_TMP_FILE false)",
        "ATTACH 'HOME/extra.duckdb'",
        "SET threads = 1",
        "INSTALL httpfs",
        "SELECT 1; DROP VIEW runs",
    ],
)
def test_db_sql_refuses_statements_that_change_the_store(store: Path, statement: str) -> None:
    before = tree(store)
    line = one_error(run(store, "db", "sql", statement.replace("HOME", str(store))), 2)
    assert "SELECT" in line or "one SQL statement" in line
    assert tree(store) == before
    count = run(store, "db", "sql", "SELECT count(*) AS n FROM runs", "--csv")
    assert count.stdout == "n\n168\n", count.stderr


def test_db_sql_reads_no_file_outside_the_store(store: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.csv"
    outside.write_text("a\n1\n")
    line = one_error(run(store, "db", "sql", f"SELECT * FROM read_csv('{outside}')"), 2)
    assert "store's tables only" in line and str(outside) in line
    # Queries, EXPLAIN of one and DESCRIBE still run.
    for query in ("WITH r AS (SELECT * FROM runs) SELECT count(*) FROM r",
                  "EXPLAIN SELECT * FROM samples", "DESCRIBE runs", "SUMMARIZE runs"):  # fmt: skip
        assert run(store, "db", "sql", query).returncode == 0, query


@pytest.mark.parametrize(
    "binary",
    [
        "TRACE",  # a Parquet trace given by mistake
        str(DATA / "osu-7.4" / "timing" / "osu_bcast_np4__m_1024" / "rank-000000.bin"),
    ],
)
def test_collect_osu_on_a_binary_file_never_echoes_its_bytes(
    binary: str, trace: Path, tmp_path: Path
) -> None:
    path = Path(str(trace) if binary == "TRACE" else binary)
    line = one_error(run(tmp_path / "home", "collect", "osu", path), 1)
    assert line.startswith(f"tailcast: error: {path}: not an OSU output")
    assert line.isprintable() and line.isascii()


def test_collect_osu_on_other_text_says_it_is_not_osu(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("results of today\nall good\n")
    line = one_error(run(tmp_path / "home", "collect", "osu", notes), 1)
    assert f"{notes}: not an OSU output" in line


@pytest.mark.parametrize(
    ("name", "title"),
    [
        # osu_latency -m 64:8 (min above max): OSU prints its header, no row, exits 0.
        ("osu_latency_np2__m_64-8.txt", "OSU MPI Latency Test"),
        # OMB-Py's allreduce crashed after its header (its traceback went to stderr).
        ("omb_py__allreduce_np2.txt", "OMB Python MPI Allreduce Test"),
    ],
)
def test_collect_osu_header_without_rows_is_an_error_naming_the_file(
    name: str, title: str, tmp_path: Path
) -> None:
    path = OSU_RECORDED / name
    line = one_error(run(tmp_path / "home", "collect", "osu", path), 1)
    assert f"{path}: {title}: no result row after its column header" in line
    with_stderr = run(tmp_path / "home", "collect", "osu", OSU_RECORDED / name,
                      "--stderr", OSU_RECORDED / "omb_py__allreduce_np2.stderr.txt")  # fmt: skip
    if name.startswith("omb_py"):  # given its stderr, OSU's own words say why
        assert "TypeError: 'float' object cannot be interpreted" in one_error(with_stderr, 1)


def test_trace_synth_too_large_is_refused_before_allocating(tmp_path: Path) -> None:
    out = tmp_path / "huge.parquet"
    started = time.perf_counter()
    line = one_error(run(tmp_path / "home", "trace", "synth", "osu", "-n", "100000000",
                         "-o", out), 2)  # fmt: skip
    assert time.perf_counter() - started < 30  # (building it would take hours)
    assert "trace synth osu -n 100000000" in line and "422,300,000,000 rows" in line
    assert "TB to build" in line and "available (MemAvailable" in line
    assert not out.exists()


def test_tit_export_into_a_directory_with_a_space_reads_back(trace: Path, tmp_path: Path) -> None:
    spaced = tmp_path / "my traces"
    spaced.mkdir()
    listing = spaced / "allreduce.tit"
    home = tmp_path / "home"
    wrote = run(home, "trace", "convert", trace, listing, "--to", "tit")
    assert wrote.returncode == 0, wrote.stderr
    assert listing.read_text().splitlines()[0] == f"{spaced}/allreduce.tit.d/rank0.txt"
    back = spaced / "back.parquet"
    read = run(home, "trace", "convert", listing, back)  # the plain path, without Typer
    assert read.returncode == 0, read.stderr
    again = spaced / "again.tit"
    assert run(home, "trace", "convert", back, again, "--to", "tit").returncode == 0
    for rank in range(16):
        first = (spaced / "allreduce.tit.d" / f"rank{rank}.txt").read_text()
        assert (spaced / "again.tit.d" / f"rank{rank}.txt").read_text() == first
    info = run(home, "trace", "info", listing, "--json")
    assert info.returncode == 0 and '"ranks": 16' in info.stdout
    assert not home.exists()


@pytest.mark.skipif(shutil.which("smpirun") is None, reason="SimGrid's smpirun not installed")
def test_simgrid_replays_a_tit_list_in_a_directory_with_a_space(
    trace: Path, tmp_path: Path
) -> None:
    from tailcast.traces.tit_export import replay_in_simgrid

    listing = tmp_path / "my traces" / "allreduce.tit"
    listing.parent.mkdir()
    assert run(tmp_path / "home", "trace", "convert", trace, listing, "--to", "tit").returncode == 0
    log = replay_in_simgrid(listing, 16, tmp_path / "simgrid work")
    assert "Simulation time" in log


def test_tit_export_path_with_a_line_break_is_refused(trace: Path, tmp_path: Path) -> None:
    broken = tmp_path / "two\nlines"
    broken.mkdir()
    line = one_error(run(tmp_path / "home", "trace", "convert", trace, broken / "t.tit",
                         "--to", "tit"), 2)  # fmt: skip
    assert "one path per line" in line
    assert list(broken.iterdir()) == []
