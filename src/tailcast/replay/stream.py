"""Streaming replay: the trace is read rank by rank in bounded chunks as the engine asks
for rows (`_core.ReplayStream`, fed natively by `rank_reader`), per-operation times are
summarised chunk by chunk (`_core.OpStats`) and, when kept, stream to Parquet in row
groups (`ops_file`). Memory grows with the rows in flight, not with the trace. Results
are bit-identical to `replay_trace`, summaries equal; the replay_ops rows come in
completion order instead of trace order.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tailcast import _core
from tailcast.errors import InputError, UsageError
from tailcast.replay.fabric import Fabric
from tailcast.replay.rank_reader import open_feeder, open_trace, scan_trace
from tailcast.replay.run import (
    ReplayFailed,
    ReplayHead,
    _meta_comms,
    replay_failed,
    store_replay_summary,
    summary_head,
)
from tailcast.replay.scenario import ReplayOptions, scenario_of
from tailcast.replay.summary import op_summary
from tailcast.traces.meta import read_meta

if TYPE_CHECKING:  # pyarrow loads only when per-op times are written (ops_file)
    from tailcast.replay.ops_file import OpsWriter
    from tailcast.store.results import ResultsDir

# 4096 rows a rank: a chunk's columns (8 bytes a row at most) stay under glibc's 128 KiB
# mmap threshold, so their memory is reused from chunk to chunk; at 16384 rows every column
# was mapped and unmapped per chunk (the 1.33 M-action bench trace: 27.7 k page faults and
# 74 MiB peak RSS at 16384 rows, 9.5 k and 44 MiB at 4096; same instructions).
DEFAULT_CHUNK_ROWS = 1 << 12
# Rows read ahead over all ranks: each rank holds a converted chunk (~72 bytes a row) until
# the engine has taken it, so many ranks get smaller chunks (at least MIN_CHUNK_ROWS).
ROWS_IN_FLIGHT = 1 << 18
MIN_CHUNK_ROWS = 1 << 10


@dataclass
class StreamOutcome(ReplayHead):
    # Lists, not numpy arrays: a streamed replay that stores nothing loads no numpy.
    iterations: list[int]
    iteration_latency_us: list[float]
    iteration_mean_us: list[float]
    op_stats: _core.OpStats = field(default_factory=_core.OpStats)
    ops_path: str | None = None
    unknown_ops: dict[str, int] = field(default_factory=dict)
    stored: list[str] = field(default_factory=list)
    cpu_s: float = 0.0

    @property
    def op_counts(self) -> dict[str, int]:
        return {name: int(row["count"]) for name, row in op_summary(self.op_stats).items()}

    def summary(self) -> dict[str, Any]:
        return summary_head(self) | {
            "ops": op_summary(self.op_stats),
            "unknown_ops": self.unknown_ops,
            "ops_path": self.ops_path,
            "stored": self.stored,
        }


@contextlib.contextmanager
def _ops_file(path: Path | None, replay_id: str, in_store: bool) -> Iterator[OpsWriter | None]:
    if path is None:
        yield None
        return
    from tailcast.replay.ops_file import ops_file

    # In the store, a part of the replay: shown once its `replays` row exists.
    part_of = f"replays/{replay_id}" if in_store else None
    with ops_file(path, replay_id, part_of) as writer:
        yield writer


def stream_replay(
    trace: Path,
    fabric: Fabric,
    options: ReplayOptions,
    results: ResultsDir | None = None,
    ops_path: Path | None = None,
    keep_ops: bool = True,
    chunk_rows: int | None = None,
    piece_rows: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> StreamOutcome:
    """Replays `trace` streaming. Per-op times go to `ops_path`, or with `results` to its
    replay_ops table (unless `keep_ops` is False); the replays / replay_iterations rows
    are stored in `results` when given. `chunk_rows`: rows per rank read at a time
    (default: DEFAULT_CHUNK_ROWS, less with many ranks: ROWS_IN_FLIGHT over all);
    `piece_rows`: rows per rank handed to the engine at a time (see `_core.ReplayStream`);
    `progress` is called with the rows of every chunk read."""
    trace = Path(trace)
    cpu0 = time.process_time()
    meta = read_meta(trace)
    trace_file = open_trace(trace)
    layout = scan_trace(trace, _meta_comms(trace, meta.extra.get("comms", "")), trace_file)
    ranks = max(layout.ranks, meta.ranks)
    layout.starts += [layout.starts[-1]] * (ranks - layout.ranks)
    layout.ranks = ranks
    if chunk_rows is None:
        chunk_rows = max(MIN_CHUNK_ROWS, min(DEFAULT_CHUNK_ROWS, ROWS_IN_FLIGHT // max(1, ranks)))
    feeder = open_feeder(trace_file, layout, chunk_rows)
    op_stats = _core.OpStats()
    rid = uuid.uuid4().hex
    in_store = results is not None and keep_ops and ops_path is None
    if in_store:
        assert results is not None
        ops_path = results.table_dir("replay_ops") / f"{rid}.parquet"
    if options.background_traces:
        raise UsageError("background traces need an in-memory replay (not --stream)")
    # Streamed replays keep memory bounded: no per-message rows.
    scenario = scenario_of(fabric, dataclasses.replace(options, record_messages=False), ranks)
    try:
        # keep_ops: the summary needs every op's times, even when not stored
        stream = _core.ReplayStream(
            scenario, ranks, layout.comms, keep_ops=True, piece_rows=piece_rows
        )
    except _core.ReplayError as err:
        raise replay_failed(trace, err) from err
    # Interrupted or failed: neither the ops file nor any other file of the replay stays.
    group: contextlib.AbstractContextManager[list[Path]] = (
        results.all_or_nothing() if results is not None else contextlib.nullcontext([])
    )
    with group:
        if in_store and results is not None and ops_path is not None:
            results.adopt(ops_path)
        with _ops_file(ops_path if keep_ops else None, rid, in_store) as writer:
            try:
                while (rank := stream.run()) is not None:
                    fed = _feed(feeder, stream, trace, rank)
                    if progress is not None and fed:
                        progress(fed)
                    _take_ops(stream, op_stats, writer)
                _take_ops(stream, op_stats, writer, flush=True)
                result = stream.finish()
            except ValueError as err:
                # Bad rows and deadlocks; column conversion errors name a column.
                raise ReplayFailed(f"{trace}: {err}") from err
        job = result.jobs[0]
        outcome = StreamOutcome(
            replay_id=rid,
            trace=str(trace),
            fabric=fabric.name,
            ranks=ranks,
            total_time_ns=job.total_time_ns,
            stats=dict(result.stats),
            fabric_stats=dict(result.fabric_stats),
            iterations=job.iterations,
            iteration_latency_us=[ns / 1000.0 for ns in job.iteration_latency_ns],
            iteration_mean_us=[ns / 1000.0 for ns in job.iteration_mean_ns],
            op_stats=op_stats,
            ops_path=str(ops_path) if ops_path is not None and keep_ops else None,
            unknown_ops=layout.unknown_ops,
        )
        if results is not None:
            _store(outcome, trace, fabric, options, results)
    outcome.cpu_s = time.process_time() - cpu0
    return outcome


def _feed(feeder: _core.RankFeeder, stream: _core.ReplayStream, trace: Path, rank: int) -> int:
    """Feeds `rank`'s next rows (or closes it); rows that cannot be read name the file."""
    try:
        return feeder.feed(stream, rank)
    except TypeError as exc:
        raise InputError(trace, str(exc)) from exc


def _take_ops(
    stream: _core.ReplayStream,
    op_stats: _core.OpStats,
    writer: OpsWriter | None,
    flush: bool = False,
) -> None:
    """The rows executed since the last call: summarised, and written when kept."""
    if writer is None:
        stream.summarise_ops(op_stats)
        return
    ops = stream.take_ops()
    op_stats.add(ops["op"], ops["sim_start_ns"], ops["sim_end_ns"])
    writer.add(ops, flush=flush)


def _store(
    outcome: StreamOutcome, trace: Path, fabric: Fabric, options: ReplayOptions, results: ResultsDir
) -> None:
    paths = [str(outcome.ops_path)] if outcome.ops_path else []
    paths += store_replay_summary(results, outcome.replay_id, trace, fabric, options, outcome)
    outcome.stored = paths
