"""Issue 19 §5 at test scale: mutated inputs per reader give only typed errors, none takes a
second (bench/fuzz_figures.py runs the large counts); the crashes the fuzzers found stay
regression tests."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest

from tailcast.collectors.squeue import parse_squeue_format
from tailcast.errors import InputError
from tailcast.traces.otf2_import import import_otf2
from tests.conftest import REPO, in_ci

sys.path.insert(0, str(REPO / "bench"))
from parquet_fuzz import fuzz_parquet  # bench/, shared with the fuzz bench
from text_fuzz import READERS, fuzz
from trace_fuzz import fuzz_trace_reader

from tests.reliability.conftest import TAILCAST


@pytest.mark.parametrize("reader", sorted(READERS))
def test_mutated_inputs_give_only_typed_errors(reader: str) -> None:
    counts = fuzz(reader, 3000)
    print(reader, counts.inputs, counts.accepted, dict(counts.typed_errors))
    assert dict(counts.crashes) == {}, counts.examples
    assert counts.slow == 0, counts.max_input_s
    # The mutations keep some inputs valid and make most invalid: both paths ran.
    assert counts.accepted > 0 and sum(counts.typed_errors.values()) > 0


def test_mutated_parquet_traces_give_only_typed_errors() -> None:
    """Wrong column types, missing columns, bad schema versions and table names, non-UTF-8
    metadata (each was a ValueError, KeyError or UnicodeDecodeError before), damaged bytes.
    The damaged footer that once aborted pyarrow is its own test below."""
    counts = fuzz_parquet(1500)
    print(counts.inputs, counts.accepted, dict(counts.typed_errors))
    assert dict(counts.crashes) == {}
    assert counts.accepted > 0 and counts.typed_errors["InputError"] > 0


# This footer made pyarrow 26.0.1 abort the process (an uncaught parquet::ParquetException,
# "Definition level histogram size mismatch", in RowGroupMetaData.column()) when replays read
# traces through pyarrow. Traces are now read natively (crates/parquet-lite via
# store/footer.py and replay/rank_reader.py), which rejects the footer with an InputError.
@pytest.mark.parametrize(
    "command",
    [["replay", "run", "--stream"], ["replay", "run", "--in-memory"], ["trace", "info"]],
    ids=["stream", "in-memory", "info"],
)
def test_damaged_footer_histogram_is_a_typed_error(tmp_path: Path, command: list[str]) -> None:
    trace = REPO / "tests" / "data" / "fuzz" / "histogram-size-mismatch.parquet"
    env = {**os.environ, "TAILCAST_HOME": str(tmp_path / "home")}
    extra = ["--no-store"] if command[0] == "replay" else []
    run = subprocess.run(
        [TAILCAST, *command, str(trace), *extra],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 1, run
    line = run.stderr.strip()
    assert "\n" not in line and line.startswith(f"tailcast: error: {trace}: "), run
    assert "not a readable Parquet file" in line, run


@pytest.mark.parametrize("field", ["¹", "³0"])
def test_non_ascii_digits_in_squeue_format_are_a_typed_error(field: str) -> None:
    """Found by the fuzz bench: str.isdigit() accepts superscripts, int() does not."""
    with pytest.raises(InputError, match=r"fuzz\.txt:1: node count"):
        parse_squeue_format(f"12|12|RUNNING|{field}|node01|alice\n", "fuzz.txt")
    with pytest.raises(InputError, match=r"fuzz\.txt:1: job id"):
        parse_squeue_format(f"{field}|12|RUNNING|1|node01|alice\n", "fuzz.txt")


@pytest.mark.parametrize(("reader", "inputs"), [("tit", 1500), ("dumpi_bin", 1500), ("otf2", 1500)])
def test_mutated_trace_files_give_only_typed_errors(
    shared_data: Path, reader: str, inputs: int
) -> None:
    """TiT text, DUMPI rank files and OTF2 archives through the user's import functions
    (bench/trace_fuzz.py; the bench runs the large counts, in child processes): typed errors
    or traces, nothing else."""
    counts = fuzz_trace_reader(reader, inputs)
    print(reader, counts.inputs, counts.accepted, dict(counts.typed_errors))
    assert counts.inputs == inputs and dict(counts.crashes) == {}
    assert counts.accepted > 0 and sum(counts.typed_errors.values()) > 0


@pytest.mark.mpi
def test_mutated_tracer_raw_files_give_only_typed_errors() -> None:
    counts = fuzz_trace_reader("tracer_raw", 1500)
    if counts.inputs == 0 and in_ci():
        pytest.fail("no raw rank files: Open MPI (mpicc, mpirun) is required in CI")
    if counts.inputs == 0:
        pytest.skip("Open MPI (mpicc, mpirun) not installed")
    print(counts.inputs, counts.accepted, dict(counts.typed_errors))
    assert dict(counts.crashes) == {} and sum(counts.typed_errors.values()) > 0


# Found by the trace fuzz bench: two event-file words set to 0xffffffff decode to a number
# beyond int64, and building the trace table raised OverflowError. Now an InputError that
# says so.
def test_otf2_value_beyond_int64_is_a_typed_error(shared_data: Path, tmp_path: Path) -> None:
    archive = tmp_path / "otf2"
    shutil.copytree(shared_data / "traces/otf2/sst-macro-10rank", archive)
    evt = archive / "traces" / "9.evt"
    evt.chmod(0o644)
    data = bytearray(evt.read_bytes())
    for start in (8971, 14693):  # cmp -l offsets 8972..8975 and 14694..14697, 1-based
        data[start : start + 4] = b"\xff\xff\xff\xff"
    evt.write_bytes(bytes(data))
    with pytest.raises(InputError, match="do not fit the trace schema"):
        import_otf2(archive / "traces.otf2")  # what `trace convert` runs


# Found by the trace fuzz bench (under its 4 GiB address-space limit: a Rust abort, "memory
# allocation of 6714048088 bytes failed"): a 9-line TiT file whose last line is a bare
# " 76296000" sized the reader's per-rank state by that rank id.
def test_tit_rank_id_beyond_the_file_is_a_typed_error(tmp_path: Path) -> None:
    from tailcast.traces.tit_import import import_tit

    path = tmp_path / "fuzz.txt"
    path.write_text(
        "0 init\n0 send 1 0 1e7\n0 barrier\n0 compute 98095000\n2 init\n1 init\n"
        "1 ralize\n 76296000\n\n"
    )
    with pytest.raises(
        InputError, match=r"fuzz\.txt:8: rank 76296000 in a file of 8 lines: more ranks"
    ):
        import_tit(path)


@pytest.mark.parametrize("line", ["placements = 1000", "patterns = 3", 'sizes = "4"', "env = 1"])
def test_campaign_scalar_where_a_list_belongs_is_a_typed_error(tmp_path: Path, line: str) -> None:
    """Found by the fuzz bench (1 in 50,000 mutants): `placements = 1000` gave a TypeError."""
    from tailcast.agent.campaign import load_campaign

    text = (REPO / "slurm_jobs" / "campaign.example.toml").read_text()
    key = line.split(" = ")[0]
    lines = [ln for ln in text.splitlines() if not ln.startswith(f"{key} =")]
    at = lines.index("[campaign]") + 1
    path = tmp_path / "campaign.toml"
    path.write_text("\n".join([*lines[:at], line, *lines[at:]]) + "\n")
    with pytest.raises(InputError, match=rf"campaign\.toml: \[campaign\] {key} must be a"):
        load_campaign(path)


def test_superscript_digit_in_a_campaign_size_is_a_typed_error(tmp_path: Path) -> None:
    """Found by the fuzz bench: `sizes = ["4²"]` passed str.isdigit() and int() raised."""
    from tailcast.agent.campaign import load_campaign

    text = (REPO / "slurm_jobs" / "campaign.example.toml").read_text()
    path = tmp_path / "campaign.toml"
    path.write_text(text.replace('sizes = ["4"', 'sizes = ["4²"'))
    with pytest.raises(InputError, match=r"campaign\.toml: bad message size '4²'"):
        load_campaign(path)


def _outcome(rng: random.Random) -> object:
    """A fake reader: the input's own random stream decides whether it aborts the process,
    spins, raises an untyped or a typed error, or is accepted."""
    x = rng.random()
    if x < 0.02:
        os.abort()
    if x < 0.03:
        while True:
            pass
    if x < 0.06:
        raise TypeError("an untyped error")
    if x < 0.5:
        raise InputError("fuzz.txt", "a typed error")
    return x


def test_fuzz_runner_counts_deaths_and_hangs_and_goes_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """bench/fuzz_chunks.py: a death or a hang is a crash at its index, and the chunk resumes
    after it, so every input is counted once."""
    import fuzz_chunks
    from text_fuzz import Target

    monkeypatch.setattr(fuzz_chunks, "HANG_S", 1.0)
    monkeypatch.setattr(fuzz_chunks, "SNAPSHOT_EVERY", 40)
    monkeypatch.setattr(fuzz_chunks, "KEEP", tmp_path)
    n = 300
    target = Target(lambda _work: [0], lambda _seeds, _scratch: _outcome)
    run = fuzz_chunks.fuzz_readers({"fake": target}, {"fake": n}, chunks={"fake": 120})["fake"]
    want = {"abort": 0, "spin": 0, "untyped": 0, "typed": 0, "ok": 0}
    rng = random.Random()
    for i in range(n):
        rng.seed(19 << 40 | i)
        x = rng.random()
        kind = "abort" if x < 0.02 else "spin" if x < 0.03 else "untyped" if x < 0.06 else (
            "typed" if x < 0.5 else "ok")  # fmt: skip
        want[kind] += 1
    c = run.counts
    assert c.inputs == n and c.accepted == want["ok"], (c, want)
    assert c.typed_errors == {"InputError": want["typed"]}
    assert c.crashes["TypeError: an untyped error"] == want["untyped"]
    assert sum(v for k, v in c.crashes.items() if "signal SIGABRT" in k) == want["abort"]
    assert sum(v for k, v in c.crashes.items() if k.startswith("hang")) == want["spin"]
    assert len(run.deaths) == want["abort"] + want["spin"] and run.cpu_s > 0


def _spin_in_a_forked_child(scratch: Path, _rng: random.Random) -> object:
    """A fake reader that forks a process (as the OTF2 fuzzing does) which spins; the
    reader waits for it."""
    pid = os.fork()
    if pid == 0:
        (scratch / "spinner.pid").write_text(str(os.getpid()))
        while True:
            pass
    os.waitpid(pid, 0)
    return None


def test_fuzz_runner_kills_the_processes_a_hung_reader_forked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """bench/fuzz_chunks.py kills a hung chunk's process group: nothing the reader forked
    outlives the hang (it would spin on, its CPU time in no figure)."""
    import fuzz_chunks
    from text_fuzz import Target

    monkeypatch.setattr(fuzz_chunks, "KEEP", tmp_path)
    target = Target(
        lambda _work: [0], lambda _seeds, scratch: partial(_spin_in_a_forked_child, scratch)
    )
    run = fuzz_chunks.fuzz_readers({"fake": target}, {"fake": 1}, hangs={"fake": 1.0})["fake"]
    assert dict(run.counts.crashes) == {"hang: input running over 1 s": 1}
    spinner = int((tmp_path / "tailcast-fuzz-crash-fake-19-0" / "spinner.pid").read_text())
    deadline = time.monotonic() + 10
    while Path(f"/proc/{spinner}").exists() and _state(spinner) != "Z":
        assert time.monotonic() < deadline, f"process {spinner} outlived the hang"
        time.sleep(0.05)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


# Found by the OTF2 fuzz bench (seed 19) when archives were read by the `otf2` wheel's C
# library: input 226 spun for over a minute in OTF2_DefReader_ReadDefinitions after input
# 225, input 10718 aborted the process (glibc "free(): invalid next size (fast)"), and input
# 3366's damaged anchor file made OTF2_AnchorFile_Load write past a 0-byte calloc (valgrind:
# OTF2_AnchorFile.c:331). tailcast's own reader (tailcast._core.read_otf2) gives each an
# InputError naming the damaged file and byte, in this process, in sequence.
@pytest.mark.parametrize(
    ("input_index", "where"),
    [
        (225, r"traces/1\.def byte 19: end of chunk"),
        (226, r"traces/0\.def byte 20: local definition record: needs 128 bytes"),
        (10718, r"traces/0\.evt byte 30: timestamp"),
        (3366, r"traces\.otf2 byte 72: property value: string without its terminating NUL"),
    ],
)
def test_otf2_archives_that_broke_the_c_library_are_typed_errors(
    input_index: int, where: str
) -> None:
    anchor = REPO / "tests" / "data" / "fuzz" / f"otf2-seed19-input{input_index}" / "traces.otf2"
    with pytest.raises(InputError, match=rf"unreadable OTF2 archive \(.*{where}"):
        import_otf2(anchor)
