"""Issue 19 §5 at test scale: mutated inputs per reader give only typed errors, none takes a
second (bench/fuzz_figures.py runs the large counts); the crashes the fuzzers found stay
regression tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tailcast.collectors.squeue import parse_squeue_format
from tailcast.errors import InputError
from tests.conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
from parquet_fuzz import fuzz_parquet  # bench/, shared with the fuzz bench
from text_fuzz import READERS, fuzz

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
