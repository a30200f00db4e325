"""Traces as users re-write them (issue 38): a tailcast trace read and written again by
pyarrow, polars or DuckDB, under every codec they offer, dictionary or plain,
byte-stream-split or delta encodings, data pages v1 or v2, replays exactly as the original,
and `trace info` / `trace validate` accept it.

A re-writer must keep the trace's `tailcast.*` key-value metadata (`traces.meta`: table,
schema version, ranks, ...). pyarrow keeps it by itself (`read_table` puts it in the schema,
`write_table` writes it back); polars and DuckDB drop it unless asked
(`write_parquet(metadata=...)`, `COPY ... (KV_METADATA {...})`), and a trace without it is
refused in one error line.

Two traces: the captured halo trace (nulls, times, peers, tags; replayed in memory) and a
synthesised OSU alltoallv trace (list columns; replayed streaming, rank by rank, which
skips through row groups when a re-writer cuts them elsewhere).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tailcast.cli.main import app

polars = pytest.importorskip("polars")

REPO = Path(__file__).resolve().parents[2]
HALO = REPO / "src" / "tailcast" / "data" / "quickstart" / "halo-4rank.parquet"
TAILCAST = Path(sys.executable).with_name("tailcast")
FABRIC = "dfp-test"
runner = CliRunner()

# Codec names as each writer spells them (pyarrow's and polars' lz4 is LZ4_RAW; DuckDB's
# lz4 too; pyarrow has no way to write the deprecated Hadoop-framed LZ4).
PYARROW_CODECS = ("zstd", "snappy", "gzip", "lz4", "brotli", "none")
POLARS_CODECS = ("zstd", "snappy", "gzip", "lz4", "brotli", "uncompressed")
DUCKDB_CODECS = ("zstd", "snappy", "gzip", "lz4", "brotli", "uncompressed")

Writer = Callable[[Path, Path], None]


def tailcast_kv(src: Path) -> dict[str, str]:
    """The trace's tailcast.* key-value metadata, as a re-writer that keeps it passes it on."""
    kv = pq.read_metadata(src).metadata or {}
    return {k.decode(): v.decode() for k, v in kv.items() if k.startswith(b"tailcast.")}


def int_leaves(schema: pa.Schema) -> list[str]:
    """Column paths of the integer leaves (list elements as `name.list.element`)."""
    out = []
    for f in schema:
        if pa.types.is_integer(f.type):
            out.append(f.name)
        elif pa.types.is_list(f.type) and pa.types.is_integer(f.type.value_type):
            out.append(f"{f.name}.list.element")
    return out


def by_pyarrow(**options: Any) -> Writer:
    """A user's pyarrow script: read the table, write it with `options`."""

    def write(src: Path, dst: Path) -> None:
        table = pq.read_table(src)
        opts = dict(options)
        if opts.pop("byte_stream_split", False):
            opts["use_byte_stream_split"] = int_leaves(table.schema)
        if opts.pop("delta", False):
            encoding = {c: "DELTA_BINARY_PACKED" for c in int_leaves(table.schema)}
            encoding["op"] = opts.pop("strings")
            opts["column_encoding"] = encoding
        pq.write_table(table, dst, **opts)

    return write


def by_polars(keep_metadata: bool = True, **options: Any) -> Writer:
    def write(src: Path, dst: Path) -> None:
        frame = polars.read_parquet(src)
        metadata = tailcast_kv(src) if keep_metadata else None
        frame.write_parquet(dst, metadata=metadata, **options)

    return write


def by_duckdb(codec: str = "zstd", version: str = "v1", keep_metadata: bool = True) -> Writer:
    def write(src: Path, dst: Path) -> None:
        settings = [f"FORMAT parquet, COMPRESSION {codec}, PARQUET_VERSION {version}"]
        if keep_metadata:
            pairs = ", ".join(
                f"'{k}': '{v.replace(chr(39), chr(39) * 2)}'" for k, v in tailcast_kv(src).items()
            )
            settings.append(f"KV_METADATA {{{pairs}}}")
        with duckdb.connect() as con:
            con.execute(
                f"COPY (SELECT * FROM read_parquet('{src}')) TO '{dst}' ({', '.join(settings)})"
            )

    return write


def variants() -> dict[str, Writer]:
    out: dict[str, Writer] = {}
    for codec in PYARROW_CODECS:
        for version in ("1.0", "2.0"):
            v = version[0]
            out[f"pyarrow-{codec}-dict-v{v}"] = by_pyarrow(
                compression=codec, use_dictionary=True, data_page_version=version
            )
            out[f"pyarrow-{codec}-plain-v{v}"] = by_pyarrow(
                compression=codec, use_dictionary=False, data_page_version=version
            )
            out[f"pyarrow-{codec}-bss-v{v}"] = by_pyarrow(
                compression=codec,
                use_dictionary=False,
                byte_stream_split=True,
                data_page_version=version,
            )
    for strings in ("DELTA_BYTE_ARRAY", "DELTA_LENGTH_BYTE_ARRAY"):
        out[f"pyarrow-delta-{strings.lower()}"] = by_pyarrow(
            compression="zstd", use_dictionary=False, delta=True, strings=strings
        )
    # Row groups and pages cut anywhere in a rank's rows, with the page index written.
    out["pyarrow-small-groups"] = by_pyarrow(
        compression="snappy", row_group_size=97, data_page_size=128, write_page_index=True
    )
    for codec in POLARS_CODECS:
        out[f"polars-{codec}"] = by_polars(compression=codec)
    out["polars-small-groups"] = by_polars(compression="lz4", row_group_size=50)
    for codec in DUCKDB_CODECS:
        for version in ("v1", "v2"):
            out[f"duckdb-{codec}-{version}"] = by_duckdb(codec, version)
    return out


VARIANTS = variants()


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[str]]]:
    """Name -> (trace, extra replay arguments)."""
    osu = tmp_path_factory.mktemp("osu") / "osu-alltoallv.parquet"
    argv = ["trace", "synth", "osu", "--collective", "alltoallv", "-n", "8"]
    res = runner.invoke(app, [*argv, "--sizes", "4,1K,32K", "--iterations", "20", "-o", str(osu)])
    assert res.exit_code == 0, res.output
    return {"halo": (HALO, ["--in-memory"]), "osu-alltoallv": (osu, ["--stream"])}


def replay(trace: Path, extra: list[str]) -> dict[str, Any]:
    """`replay run --json` minus what differs between identical runs and the path."""
    res = runner.invoke(
        app, ["replay", "run", str(trace), "--fabric", FABRIC, "--no-store", "--json", *extra]
    )
    assert res.exit_code == 0, res.output
    doc: dict[str, Any] = json.loads(res.stdout)
    for key in ("replay_id", "timing", "trace"):
        doc.pop(key, None)
    return doc


def info(trace: Path) -> dict[str, Any]:
    res = runner.invoke(app, ["trace", "info", str(trace), "--json"])
    assert res.exit_code == 0, res.output
    doc: dict[str, Any] = json.loads(res.stdout)
    doc.pop("trace", None)
    doc.pop("path", None)
    return doc


@pytest.fixture(scope="module")
def originals(
    traces: dict[str, tuple[Path, list[str]]],
) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Per trace, the original's replay and info documents."""
    return {name: (replay(path, extra), info(path)) for name, (path, extra) in traces.items()}


@pytest.mark.parametrize("trace", ["halo", "osu-alltoallv"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_rewritten_trace_replays_identically(
    variant: str,
    trace: str,
    traces: dict[str, tuple[Path, list[str]]],
    originals: dict[str, tuple[dict[str, Any], dict[str, Any]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TAILCAST_HOME", str(tmp_path / "home"))
    src, extra = traces[trace]
    dst = tmp_path / f"{variant}.parquet"
    VARIANTS[variant](src, dst)
    assert pq.read_table(dst).to_pylist() == pq.read_table(src).to_pylist(), "rows changed"
    want_replay, want_info = originals[trace]
    assert replay(dst, extra) == want_replay
    assert info(dst) == want_info
    res = runner.invoke(app, ["trace", "validate", str(dst)])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(
    "writer",
    [by_polars(keep_metadata=False), by_duckdb(keep_metadata=False)],
    ids=["polars", "duckdb"],
)
def test_a_rewrite_that_drops_the_metadata_is_refused_in_one_line(
    writer: Writer, tmp_path: Path
) -> None:
    dst = tmp_path / "bare.parquet"
    writer(HALO, dst)
    env = dict(os.environ, TAILCAST_HOME=str(tmp_path / "home"))
    done = subprocess.run(
        [str(TAILCAST), "replay", "run", str(dst), "--fabric", FABRIC, "--no-store"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("tailcast: error: ") and str(dst) in lines[0]
    assert "tailcast.table" in lines[0]
