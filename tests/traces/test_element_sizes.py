"""Imported collectives carry their datatype size (and op commutativity where the format
has it; issue 22), and the replay judges Open MPI 4.1.4's element-count fallback on them
(`allreduce_intra_redscat_allgather`: count < pof2 → `allreduce_intra_basic_linear`).

The public sample `testtrace` (4 ranks) calls MPI_Allreduce of one MPI_INT with MPI_SUM
(DUMPI datatype 9, 4 bytes in the file's own size table; op 3 = DUMPI_SUM). With 1-byte
elements assumed, 4 bytes are 4 elements, not below pof2 = 4, so rabenseifner would run
`allreduce_intra_redscat_allgather`; with the recorded size the count is 1 < 4 and 4.1.4
falls back to `allreduce_intra_basic_linear`, exactly the program `allreduce=linear` runs.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from tailcast.replay.fabric import parse_fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.traces.dumpi_import import import_dumpi
from tailcast.traces.io import read_trace, write_trace
from tailcast.traces.tit_convert import convert_tit
from tailcast.traces.tit_import import import_tit

FABRIC = parse_fabric(
    "model = 'alpha_beta'\nalpha_us = 1.0\nbeta_ns_per_byte = 1.0\n"
    "gamma_ns_per_byte = 0.5\nports = 0\n",
    "<test>",
)


def _time(trace: Path, algorithm: str) -> float:
    options = ReplayOptions(coll=f"allreduce={algorithm}", compute_scale=0.0)
    return replay_trace(trace, FABRIC, options).total_time_ns


def test_dumpi_allreduce_records_its_int_and_falls_back(shared_data: Path, tmp_path: Path) -> None:
    table, meta = import_dumpi(shared_data / "traces" / "dumpi" / "testtrace.meta")
    rows = [r for r in table.to_pylist() if r["op"] == "allreduce"]
    assert {(r["send_bytes"], r["dtype_bytes"], r["commutative"]) for r in rows} == {(4, 4, 1)}
    typed = write_trace(table, tmp_path / "typed.parquet", meta)
    assert _time(typed, "rabenseifner") == _time(typed, "linear")
    # The same trace without the sizes: 4 one-byte elements, no fallback, another program.
    untyped_table = table.set_column(
        table.schema.get_field_index("dtype_bytes"),
        "dtype_bytes",
        pa.nulls(table.num_rows, pa.int32()),
    )
    untyped = write_trace(untyped_table, tmp_path / "untyped.parquet", meta)
    assert _time(untyped, "rabenseifner") != _time(untyped, "linear")


def test_tit_allreduce_records_its_double_and_falls_back(tmp_path: Path) -> None:
    """SimGrid TiT: `allreduce 4 0 0` is 4 elements of datatype 0 (MPI_DOUBLE, 8 bytes) on
    16 ranks: 32 bytes, but 4 elements < 16, so rabenseifner falls back to basic_linear;
    `allreduce 32 0 2` (32 MPI_CHAR) does not. TiT has no reduction op: `commutative`
    stays null (commutative)."""
    for line, dtype_bytes, falls_back in [
        ("allreduce 4 0 0", 8, True),
        ("allreduce 32 0 2", 1, False),
    ]:
        tit = tmp_path / f"{dtype_bytes}.txt"
        tit.write_text("".join(f"{r} init\n{r} {line}\n{r} finalize\n" for r in range(16)))
        table, _ = import_tit(tit)
        rows = [r for r in table.to_pylist() if r["op"] == "allreduce"]
        assert {(r["send_bytes"], r["dtype_bytes"]) for r in rows} == {(32, dtype_bytes)}
        assert {r["commutative"] for r in rows} == {None}
        parquet = tmp_path / f"{dtype_bytes}.parquet"
        convert_tit(tit, parquet)
        converted, _ = read_trace(parquet)
        assert (
            converted.column("dtype_bytes").to_pylist() == table.column("dtype_bytes").to_pylist()
        )
        same = _time(parquet, "rabenseifner") == _time(parquet, "linear")
        assert same == falls_back, line
