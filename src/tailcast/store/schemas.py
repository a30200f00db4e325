"""Arrow schemas of every stored table (DESIGN.md "Data"). Units live in column names.

Bump SCHEMA_VERSION when a column changes meaning or type; readers check it.
Column names are lower case so SQL over them needs no quoting (DESIGN's N_t is n_t).
"""

from __future__ import annotations

import pyarrow as pa

SCHEMA_VERSION = 1

# Keys written into every Parquet file's key-value metadata.
META_TABLE = b"tailcast.table"
META_SCHEMA_VERSION = b"tailcast.schema_version"

_TS = pa.timestamp("us", tz="UTC")

SNAPSHOTS = pa.schema(
    [
        pa.field("snapshot_id", pa.string(), nullable=False),
        pa.field("cluster", pa.string()),
        pa.field("taken_at", _TS, nullable=False),
        pa.field("source", pa.string()),  # squeue-json | squeue-format | pyslurm | file
        pa.field("job_id", pa.string(), nullable=False),  # string: array jobs are "12_3"
        pa.field("user", pa.string()),
        pa.field("state", pa.string()),
        pa.field("node_count", pa.int32()),
        pa.field("nodes", pa.list_(pa.string())),  # expanded hostlist
    ]
)

UTILISATION = pa.schema(
    [
        pa.field("snapshot_id", pa.string(), nullable=False),
        pa.field("cluster", pa.string()),
        pa.field("taken_at", _TS, nullable=False),
        pa.field("source", pa.string()),
        pa.field("n_t", pa.int32()),  # physical nodes of the cluster
        pa.field("n_c", pa.int32()),  # unique nodes of running multi-node jobs
        pa.field("n_c_dup", pa.int32()),  # same, counted once per job sharing a node
        pa.field("n_a_dup", pa.int32()),  # allocated nodes of all running jobs, with dups
        pa.field("b_simple", pa.float64()),  # seed 001 eq. 1
        pa.field("b", pa.float64()),  # seed 001 eq. 2
        pa.field("running_jobs", pa.int32()),
        pa.field("pending_jobs", pa.int32()),
        pa.field("multi_node_jobs", pa.int32()),
        pa.field("own_job_id", pa.string()),
        pa.field("own_job_excluded", pa.bool_()),
    ]
)

RUNS = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("cluster", pa.string()),
        pa.field("slurm_job_id", pa.string()),
        pa.field("nodes", pa.list_(pa.string())),
        pa.field("ranks", pa.int32()),
        pa.field("benchmark", pa.string()),
        pa.field("implementation", pa.string()),  # osu | builtin
        pa.field("pattern", pa.string()),
        pa.field("msg_size_bytes", pa.int64()),
        pa.field("iterations", pa.int32()),
        pa.field("warmup", pa.int32()),
        pa.field("locality", pa.string()),
        pa.field("b_before", pa.float64()),
        pa.field("b_after", pa.float64()),
        pa.field("b_accepted", pa.bool_()),
        pa.field("threshold", pa.float64()),
        pa.field("launcher", pa.string()),
        pa.field("mpi_library", pa.string()),
        pa.field("versions_json", pa.string()),
        pa.field("started_at", _TS),
        pa.field("ended_at", _TS),
    ]
)

SAMPLES = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("iteration", pa.int32(), nullable=False),
        pa.field("latency_us", pa.float64()),  # max over ranks (OSU's reported quantity)
        pa.field("latency_us_mean", pa.float64()),  # mean over ranks
        pa.field("rank_latency_us", pa.list_(pa.float64())),  # optional, per rank
    ]
)

OSU_RESULTS = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("size_bytes", pa.int64()),
        pa.field("avg_latency_us", pa.float64()),
        pa.field("min_latency_us", pa.float64()),
        pa.field("max_latency_us", pa.float64()),
        pa.field("p50_latency_us", pa.float64()),
        pa.field("p90_latency_us", pa.float64()),
        pa.field("p99_latency_us", pa.float64()),
        pa.field("iterations", pa.int32()),
        pa.field("validation", pa.string()),
    ]
)

# One Parquet file per trace, one row per MPI call; peers/roots are world ranks.
TRACE = pa.schema(
    [
        pa.field("rank", pa.int32(), nullable=False),
        pa.field("seq", pa.int64(), nullable=False),
        pa.field("op", pa.string(), nullable=False),
        pa.field("peer", pa.int32()),
        pa.field("root", pa.int32()),
        pa.field("send_bytes", pa.int64()),
        pa.field("recv_bytes", pa.int64()),
        pa.field("tag", pa.int32()),
        pa.field("comm", pa.int32()),
        pa.field("request", pa.int64()),
        pa.field("t_start_ns", pa.int64()),
        pa.field("t_end_ns", pa.int64()),
        pa.field("iteration", pa.int32()),  # set by OSU-pattern traces, else null
        # Extensions (tailcast.traces.schema documents each op's use of them):
        pa.field("recv_peer", pa.int32()),  # sendrecv: the source (peer is the destination)
        pa.field("recv_tag", pa.int32()),  # sendrecv: the receive tag
        pa.field("send_counts", pa.list_(pa.int64())),  # v-collectives: bytes per comm rank
        pa.field("recv_counts", pa.list_(pa.int64())),  # v-collectives: bytes per comm rank
        pa.field("requests", pa.list_(pa.int64())),  # waitall/waitany/test*: requests passed
        pa.field("new_comm", pa.int32()),  # comm_split/dup/create: the new communicator id
        pa.field("comm_members", pa.list_(pa.int32())),  # its world ranks in comm-rank order
    ]
)

REPLAYS = pa.schema(
    [
        pa.field("replay_id", pa.string(), nullable=False),
        pa.field("trace_id", pa.string()),
        pa.field("fabric", pa.string()),
        pa.field("fabric_toml", pa.string()),
        pa.field("fabric_sha256", pa.string()),
        pa.field("seed", pa.int64()),
        pa.field("background_b", pa.float64()),
        # Background jobs and traces of the replay (JSON), and the foreground placement.
        pa.field("background", pa.string()),
        pa.field("placement", pa.string()),
        pa.field("coll_overrides", pa.string()),
        pa.field("engine_version", pa.string()),
        pa.field("total_time_ns", pa.int64()),
        pa.field("created_at", _TS),
    ]
)

REPLAY_OPS = pa.schema(
    [
        pa.field("replay_id", pa.string(), nullable=False),
        pa.field("rank", pa.int32()),
        pa.field("seq", pa.int64()),
        pa.field("op", pa.string()),
        pa.field("sim_start_ns", pa.int64()),
        pa.field("sim_end_ns", pa.int64()),
        # What the fabric reported about the messages the row sent (null: none, or a
        # fabric that reports nothing): summed setup / admission wait / refused attempts,
        # the longest path in links, the path class (`mixed` when they differ).
        pa.field("setup_ns", pa.float64()),
        pa.field("wait_ns", pa.float64()),
        pa.field("blocked", pa.int32()),
        pa.field("hops", pa.int32()),
        pa.field("path", pa.string()),
    ]
)

REPLAY_MESSAGES = pa.schema(
    [
        pa.field("replay_id", pa.string(), nullable=False),
        pa.field("job", pa.int32()),  # 0: the foreground trace; then background traces
        pa.field("src_rank", pa.int32()),
        pa.field("send_seq", pa.int64()),  # seq of the row that sent it
        pa.field("dst_rank", pa.int32()),
        pa.field("bytes", pa.int64()),
        pa.field("kind", pa.string()),  # eager | rendezvous
        pa.field("collective", pa.bool_()),
        pa.field("tag", pa.int32()),
        pa.field("posted_ns", pa.int64()),
        pa.field("delivered_ns", pa.int64()),
        pa.field("setup_ns", pa.float64()),
        pa.field("wait_ns", pa.float64()),
        pa.field("blocked", pa.int32()),
        pa.field("hops", pa.int32()),
        pa.field("path", pa.string()),
    ]
)

SWEEP_POINTS = pa.schema(
    [
        pa.field("sweep_id", pa.string(), nullable=False),
        pa.field("point", pa.int64(), nullable=False),
        pa.field("trace", pa.string()),
        pa.field("trace_sha256", pa.string()),
        pa.field("fabric", pa.string()),
        pa.field("params", pa.string()),  # JSON: the point's value of every axis
        pa.field("seed", pa.int64()),
        pa.field("replay_id", pa.string()),  # its replays / replay_iterations / fabric_stats
        pa.field("total_time_ns", pa.int64()),
        pa.field("iterations", pa.int64()),
        pa.field("iteration_mean_us", pa.float64()),
        pa.field("iteration_p50_us", pa.float64()),
        pa.field("iteration_p99_us", pa.float64()),
        pa.field("actions", pa.int64()),
        pa.field("messages", pa.int64()),
        pa.field("background_messages", pa.int64()),
        pa.field("cpu_s", pa.float64()),
        pa.field("task", pa.string()),  # local, or the array task (plan:K, assign-N:K)
        pa.field("host", pa.string()),
        pa.field("finished_at", _TS),
    ]
)

FABRIC_STATS = pa.schema(
    [
        pa.field("replay_id", pa.string(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("value", pa.float64()),
    ]
)

REPLAY_ITERATIONS = pa.schema(
    [
        pa.field("replay_id", pa.string(), nullable=False),
        pa.field("iteration", pa.int32()),
        pa.field("latency_us", pa.float64()),
    ]
)

TABLES: dict[str, pa.Schema] = {
    "snapshots": SNAPSHOTS,
    "utilisation": UTILISATION,
    "runs": RUNS,
    "samples": SAMPLES,
    "osu_results": OSU_RESULTS,
    "traces": TRACE,
    "replays": REPLAYS,
    "replay_ops": REPLAY_OPS,
    "replay_iterations": REPLAY_ITERATIONS,
    "replay_messages": REPLAY_MESSAGES,
    "fabric_stats": FABRIC_STATS,
    "sweep_points": SWEEP_POINTS,
}


def schema_of(table: str) -> pa.Schema:
    """The schema of a stored table; KeyError names the valid tables."""
    try:
        return TABLES[table]
    except KeyError:
        raise KeyError(f"unknown table {table!r}; tables: {', '.join(TABLES)}") from None
