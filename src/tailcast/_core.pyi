"""Type stubs of the compiled replay engine (crates/replay-py). Checked by mypy.stubtest."""

from collections.abc import Callable
from os import PathLike
from pathlib import Path
from typing import Any, final

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "ColumnBuilder",
    "FabricConfigError",
    "FabricSpec",
    "JobReplay",
    "OpStats",
    "RankFeeder",
    "ReplayError",
    "ReplayResult",
    "ReplayStream",
    "Scenario",
    "TitConverter",
    "TitReader",
    "TraceFile",
    "TraceScan",
    "check_coll",
    "collective_algorithms",
    "collective_program",
    "engine_version",
    "fabric_models",
    "fabric_work",
    "op_codes",
    "parquet_footer",
    "read_otf2",
    "replay",
    "squeue_columns",
]

def engine_version() -> str: ...
def op_codes() -> dict[str, int]: ...

@final
class JobReplay:
    """Replay results of one trace (times in ns from the start of the replay). The per-row
    columns are numpy arrays built when first read (numpy loads then, not before)."""

    @property
    def sim_start_ns(self) -> NDArray[np.int64]: ...
    @property
    def sim_end_ns(self) -> NDArray[np.int64]: ...
    @property
    def iterations(self) -> list[int]: ...
    @property
    def iteration_latency_ns(self) -> list[float]:
        """Per iteration, the longest span over ranks (OSU's reported quantity)."""
    @property
    def iteration_mean_ns(self) -> list[float]:
        """Per iteration, the mean over ranks of each rank's own span."""
    @property
    def endpoints(self) -> NDArray[np.uint32]: ...
    @property
    def total_time_ns(self) -> float: ...
    @property
    def unfinished_ranks(self) -> int:
        """Ranks cut off unfinished (background traces)."""

@final
class ReplayResult:
    """A whole replay: per-trace results, counters, fabric statistics, message rows."""

    @property
    def jobs(self) -> list[JobReplay]: ...
    @property
    def stats(self) -> dict[str, int]:
        """actions, messages, events, background_messages, background_delivered,
        background_bytes, background_delivered_bytes."""
    @property
    def fabric_stats(self) -> list[tuple[str, float]]:
        """The fabric's named counters and background_offered_load / _delivered_load."""
    @property
    def messages(self) -> dict[str, NDArray[np.generic]] | None:
        """One row per delivered message: job, src_rank, send_seq, dst_rank, bytes, kind
        (0 eager, 1 rendezvous), collective, tag, posted_ns, delivered_ns, setup_ns,
        wait_ns, blocked, hops, path (index into `path_classes`); None if not recorded."""
    @property
    def background_endpoints(self) -> list[list[int]]:
        """The endpoints of each background job, where the scenario placed them."""
    @property
    def path_classes(self) -> list[str]: ...

class ReplayError(ValueError):
    """A trace that cannot be replayed."""

    kind: str  # bad_trace | bad_config | deadlock | collective | placement | interrupted
    trace: int | None
    row: int | None
    blocked: list[dict[str, Any]]  # trace, rank, row, waiting_for
    total_blocked: int
    unmatched: list[str]

class FabricConfigError(ValueError):
    """A fabric table that does not fit its model's parameters."""

    key: str
    reason: str

@final
class FabricSpec:
    """A fabric table (a dict as tomllib returns it) checked once against its model's
    declaration (`fabric_models()`) and by building the model with seed 0, whose own checks
    of values that depend on each other run as it builds; FabricConfigError names the key at
    fault. The build is kept for the first replay with seed 0 (and for `layout`)."""

    def __new__(cls, table: dict[str, Any]) -> FabricSpec: ...
    @property
    def model(self) -> str: ...
    def layout(self) -> dict[str, Any]:
        """The fabric's model, endpoints (None: unbounded), group and island of every
        endpoint (None where the model has none) and path_classes."""

@final
class Scenario:
    """What one replay is (crates/replay-engine/src/scenario/): the fabric, the options, the
    foreground trace's `placement` ("linear[:OFFSET]", "random[:SEED]", "explicit:E0,E1,..."
    or "locality:same_group|same_island|different_islands:NODES[:SEED]"), background traces
    (each "random", "linear" or "E0,E1,...": which free endpoints it takes), synthetic
    background jobs (`generators`: dicts of nodes, placement as for traces, and traffic) and
    jobs sized from b (`sized_from_b`: b, job_sizes, placement "scattered" | "around",
    traffic). A traffic dict: pattern (uniform | nearest_neighbour | all_to_all |
    permutation | hot_spot), bytes, load (fraction of injection bandwidth), arrivals
    (poisson | periodic), hot_fraction. `eager_threshold_bytes`: the largest eager message
    (default: the fabric's host model, its `[host]` table). `record_messages`: one row per
    delivered message (default: when the fabric reports per-message details). The engine
    builds the fabric once per replay and places everything on it; a placement it cannot
    make raises ReplayError of kind "placement"."""

    def __new__(
        cls,
        fabric: FabricSpec,
        placement: str,
        *,
        seed: int = 0,
        eager_threshold_bytes: int | None = None,
        compute_scale: float = 1.0,
        coll: str = "",
        record_messages: bool | None = None,
        background_traces: list[str] = ...,
        generators: list[dict[str, Any]] = ...,
        sized_from_b: dict[str, Any] | None = None,
    ) -> Scenario: ...

def replay(
    scenario: Scenario,
    traces: list[dict[str, NDArray[np.generic]]],
    *,
    progress: Callable[[int], None] | None = None,
) -> ReplayResult:
    """Replays `scenario` with its traces (the foreground one first); releases the GIL while
    running.

    Each trace is a dict of contiguous 1-D arrays: rank u32, seq i64, op u8 (`op_codes()`),
    peer i32, root i32, send_bytes i64, recv_bytes i64, tag i32, comm i32, request i64,
    t_start_ns i64, t_end_ns i64, iteration i32 (nulls: see tailcast.replay.columns).
    `progress(n)`: n more rows of the foreground traces handed to the engine (at most every
    20 ms while it runs, and the rest when it is done: the calls add up to their rows).
    Raises ReplayError on a trace that cannot be replayed or a placement the fabric cannot
    take, ValueError on bad arguments."""

def fabric_work() -> tuple[int, int]:
    """(fabric tables validated, fabrics built) so far in this process."""

def fabric_models() -> list[dict[str, Any]]:
    """Every fabric model: name, doc, params (key, expected, default, required, doc)."""

def collective_program(
    coll: str,
    ranks: int,
    size_bytes: int,
    root: int = 0,
    dtype_bytes: int = 1,
    commutative: bool = True,
) -> tuple[str, int, int, int, int, list[list[tuple[str, int, int, list[int]]]]]:
    """(algorithm, segsize, fanout, max_requests, radix, per-rank steps) of one collective:
    `coll` is "bcast" (Open MPI 4.1.4's fixed rules) or "bcast=pipeline:segsize=128K". A step
    is (call, peer or -1, bytes, requests waited on / window peers). ValueError on a bad
    name or call."""

def collective_algorithms() -> dict[str, list[str]]:
    """Per collective a `--coll` override names, its algorithms in Open MPI id order (id =
    index + 1), by the names the override takes."""

def check_coll(text: str) -> None:
    """Parses `--coll` text ("allreduce=ring,bcast=pipeline:segsize=128K") as a replay does;
    ValueError naming the collective, the bad name and what the collective takes."""

def squeue_columns(data: bytes) -> dict[str, list[Any]]:
    """Scans `squeue --json` output (Slurm 22.05 and newer shapes) in one pass without the
    GIL, reading only the queue fields. Returns columns, one entry per element of `jobs`:
    job_id, array_job_id, array_task_id, node_count, user_id: int | None (None: absent,
    null, boolean, or an unset/infinite `{"set", "infinite", "number"}` object);
    job_state: tuple[str, ...] (upper-cased; () when absent or ""); nodes: str | None (None
    also for "" and falsy values); user_name: str | None. Also "problems": list of
    (index, line, message) for job entries of the wrong shape, in order; "release",
    "cluster": [] or [str] (meta.Slurm's, the cluster else from the first job); "errors":
    the JSON text of each element of the top-level `errors`. Raises ValueError on a syntax
    or shape error, the message starting "line N, column C (byte B): "."""

@final
class ReplayStream:
    """The foreground trace of a `scenario` without background traces, replayed from
    per-rank chunks (memory grows with the rows in flight).

    `comms`: communicator id → world ranks in communicator-rank order (every communicator a
    collective uses, except 0 = all ranks). Drive it with `run()`, which returns the rank
    that needs rows (feed them with `RankFeeder.feed`, which closes the rank when it has no
    more) or None when the replay is done; then `finish()`. Results do not depend on chunk
    sizes. A batch of rows fed reaches the engine `piece_rows` rows at a time (default:
    about 16 K rows over all ranks), fed inside `run()`.
    Keeps the GIL (the engine is not shared across threads)."""

    def __new__(
        cls,
        scenario: Scenario,
        ranks: int,
        comms: dict[int, list[int]],
        *,
        keep_ops: bool = True,
        piece_rows: int | None = None,
    ) -> ReplayStream: ...
    def run(self) -> int | None: ...
    def take_ops(self) -> dict[str, NDArray[np.generic]]:
        """Rows executed since the last call: rank, seq, op, sim_start_ns, sim_end_ns."""
    def summarise_ops(self, stats: OpStats) -> None:
        """Like `take_ops`, the rows only added to `stats` (no arrays, no numpy)."""
    def finish(self) -> ReplayResult: ...

@final
class ColumnBuilder:
    """A trace file's rows as the engine columns `replay` takes (`TraceFile.load`), converted
    in one pass (nulls as in tailcast.replay.columns, op names normalised and mapped to
    codes)."""

    @property
    def rows(self) -> int: ...
    def unknown_ops(self) -> dict[str, int]:
        """Normalised op names not in `op_codes()` and their row counts."""
    def declared_comms(self) -> list[tuple[int, list[int]]]:
        """(new_comm, comm_members) of comm_* rows, first declaration of an id only."""
    def finish(self) -> dict[str, NDArray[np.generic]]:
        """The columns (list columns as `<name>_offsets` / `<name>_values`, offsets empty
        when every list is empty); the builder cannot be used afterwards."""

@final
class TraceScan:
    """The layout pass over a (rank, seq)-sorted trace (`TraceFile.scan`): rows per rank,
    communicators (declared by comm_* rows, and the ranks calling collectives on each),
    unknown ops."""

    @property
    def rows(self) -> int: ...
    def counts(self) -> list[int]:
        """Rows of each rank (index = rank, up to the largest rank seen)."""
    def unknown_ops(self) -> dict[str, int]: ...
    def declared_comms(self) -> list[tuple[int, list[int]]]: ...
    def used_comms(self) -> dict[int, list[int]]:
        """Per communicator id the (sorted) ranks calling collectives on it."""

def read_otf2(path: str | PathLike[str]) -> dict[str, Any]:
    """The OTF2 archive anchored at `path`: `clock` (timer resolution, global offset),
    `strings` {id: text}, `location_groups` {id: name id}, `locations` [(id, group id)],
    `regions` {id: name id}, `groups` [(id, type, paradigm, [members])], `comms` [(id, name
    id, group id, parent id)], `events` [(location index, record id, time, f0, .., f4)] in
    time order. A damaged archive: ValueError((file, byte offset, what was expected))."""

def parquet_footer(path: str | PathLike[str]) -> tuple[int, dict[str, str], list[str]]:
    """(rows, key-value metadata, top-level column names) of a Parquet file, read by the
    native reader. ValueError: not Parquet, a damaged footer; OSError: unreadable."""

@final
class TraceFile:
    """A trace file read natively (no pyarrow): zstd or uncompressed pages, PLAIN,
    dictionary and DELTA_BINARY_PACKED integers, strings and lists of integers.
    ValueError names what is damaged or unsupported."""

    def __new__(cls, path: str | PathLike[str]) -> TraceFile: ...
    @property
    def rows(self) -> int: ...
    def scan(self) -> TraceScan:
        """The layout pass (rank, op and communicator columns) over the whole file."""
    def load(self) -> ColumnBuilder:
        """Every row converted to engine columns (`finish()` gives them)."""
    def feeder(self, starts: list[int], chunk_rows: int) -> RankFeeder:
        """Feeds rank r's rows `starts[r]..starts[r + 1]`, `chunk_rows` at a time."""

@final
class RankFeeder:
    def feed(self, stream: ReplayStream, rank: int) -> int:
        """Feeds `rank`'s next rows to `stream` and returns how many (0: none were left, the
        rank is closed). TypeError "rows A..B: …": rows that cannot be read or converted;
        ValueError: rows the engine rejects."""

@final
class OpStats:
    """Rows and simulated durations per op code, as counts of distinct ns values."""

    def __new__(cls) -> OpStats: ...
    def add(
        self,
        op: NDArray[np.generic],
        sim_start_ns: NDArray[np.generic],
        sim_end_ns: NDArray[np.generic],
    ) -> None:
        """Rows of uint8 op codes and int64 times (TypeError for other dtypes)."""
    def summary(self) -> dict[int, tuple[int, float, float, float]]:
        """op code → (rows, p50 µs, p99 µs, total µs), percentiles as numpy's linear."""

@final
class TitReader:
    """SimGrid TiT lines → TRACE columns, a chunk of rows at a time (semantics:
    tailcast.traces.tit_import). Errors are ValueError((line number, message))."""

    def __new__(cls, ranks: int, flops_per_s: float) -> TitReader: ...
    def open(self, path: str | PathLike[str], expect_rank: int | None = None) -> None:
        """Starts reading a file (`expect_rank`: the rank of a per-rank file)."""
    def read(self, max_rows: int) -> dict[str, NDArray[np.generic]] | None:
        """Up to `max_rows` rows of the open file: rank, seq, op (indices into
        `op_names()`), time_ns, and per optional column its values and `<name>_valid`
        (lists: `<name>_offsets`, `<name>_values`, `<name>_valid`); None at its end."""
    def unsupported(self) -> dict[str, int]:
        """Actions not mapped, by name, over every file read."""
    @staticmethod
    def op_names() -> list[str]: ...
    @staticmethod
    def count_ranks(path: str | PathLike[str]) -> int:
        """Largest rank + 1 of a single-file trace."""
    @staticmethod
    def columns(paths: list[str | PathLike[str]] | list[Path]) -> list[str]:
        """The optional TRACE columns the actions in `paths` can set."""

@final
class TitConverter:
    """A TiT trace parsed and written as a Parquet trace in the trace layout, natively.
    Line errors are ValueError((path, line number, message))."""

    def __new__(
        cls,
        files: list[Path],
        per_rank: bool,
        ranks: int,
        flops_per_s: float,
        dst: str | PathLike[str],
        columns: list[str],
        delta_columns: list[str],
        group_rows: int,
        page_rows: int,
    ) -> TitConverter: ...
    def run(self, progress: Callable[[int], None] | None = None) -> int:
        """Parses every file and writes its rows; returns the rows written."""
    def unsupported(self) -> dict[str, int]: ...
    def finish(self, metadata: dict[str, str]) -> None:
        """Writes the footer with this key-value metadata and closes the file."""
