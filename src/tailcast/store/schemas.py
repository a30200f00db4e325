"""Arrow schemas of every stored table (DESIGN.md "Data"). Units live in column names.

Bump SCHEMA_VERSION when a column changes meaning or type; readers check it.
Column names are lower case so SQL over them needs no quoting (DESIGN's N_t is n_t).
"""

from __future__ import annotations

import pyarrow as pa

# SCHEMA_VERSION 2: trace files may leave out all-null columns and hold narrower integers
# (traces.layout); version-1 files read the same. The version and the key-value metadata
# keys every file carries (and `part_of`, store/results.py) live with the footer check (no
# pyarrow there).
from tailcast.store.footer import META_PART_OF as META_PART_OF
from tailcast.store.footer import META_SCHEMA_VERSION as META_SCHEMA_VERSION
from tailcast.store.footer import META_TABLE as META_TABLE
from tailcast.store.footer import PART_OF_KEY as PART_OF_KEY
from tailcast.store.footer import SCHEMA_VERSION as SCHEMA_VERSION

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
        pa.field("partial", pa.bool_()),  # the benchmark stopped early; its rows are kept
        # The MPI protocol of the run (collectors/mpi_protocol.py): "ob1/tcp", "ucx", and
        # the whole record as JSON; null in runs recorded before (unknown).
        pa.field("mpi_transport", pa.string()),
        pa.field("protocol_json", pa.string()),
        # The noise profile current for each node at run time (JSON {node: profile_id},
        # the newest in noise_profiles); null: none recorded.
        pa.field("noise_profiles", pa.string()),
    ]
)

SAMPLES = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("iteration", pa.int32(), nullable=False),
        pa.field("latency_us", pa.float64()),  # max over ranks (OSU's reported quantity)
        pa.field("latency_us_mean", pa.float64()),  # mean over ranks
        pa.field("rank_latency_us", pa.list_(pa.float64())),  # optional, per rank
        pa.field("bandwidth_mb_s", pa.float64()),  # bandwidth tests (osu_bw): rank 0's
    ]
)

# OSU's own summary rows, one per printed row (OSU_RESULTS), units as OSU prints them.
_PERCENTILES = [
    pa.field(f"p{p}_{what}", pa.float64())
    for what in ("latency_us", "bandwidth_mb_s")
    for p in (50, 90, 99)
]
OSU_RESULTS = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("benchmark", pa.string()),
        pa.field("datatype", pa.string()),  # -T sections
        pa.field("size_bytes", pa.int64()),
        pa.field("window_size", pa.int32()),  # osu_mbw_mr -V matrices
        pa.field("avg_latency_us", pa.float64()),
        pa.field("min_latency_us", pa.float64()),
        pa.field("max_latency_us", pa.float64()),
        pa.field("bandwidth_mb_s", pa.float64()),
        pa.field("messages_per_s", pa.float64()),
        pa.field("overall_us", pa.float64()),  # non-blocking collectives ...
        pa.field("compute_us", pa.float64()),
        pa.field("init_us", pa.float64()),
        pa.field("test_us", pa.float64()),
        pa.field("wait_us", pa.float64()),
        pa.field("pure_comm_us", pa.float64()),
        pa.field("min_comm_us", pa.float64()),
        pa.field("max_comm_us", pa.float64()),
        pa.field("overlap_pct", pa.float64()),
        *_PERCENTILES,
        pa.field("tail_json", pa.string()),  # every -z percentile: {"latency_us": {"50": …}}
        pa.field("iterations", pa.int32()),
        pa.field("validation", pa.string()),
        pa.field("transmit_size_bytes", pa.int64()),  # -D
        pa.field("partial", pa.bool_()),  # the run stopped before OSU finished
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
        pa.field("dtype_bytes", pa.int32()),  # collectives: MPI_Type_size (null: not recorded)
        pa.field("commutative", pa.int32()),  # reductions: 1 = commutative op, 0 = not
    ]
)

REPLAYS = pa.schema(
    [
        pa.field("replay_id", pa.string(), nullable=False),
        pa.field("trace_id", pa.string()),
        # The trace's `application` and the rest of its metadata (JSON), e.g. a synthetic
        # workload's name, seed and load.
        pa.field("application", pa.string()),
        pa.field("trace_meta", pa.string()),
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
        pa.field("latency_us", pa.float64()),  # max over ranks, as samples.latency_us
        pa.field("latency_us_mean", pa.float64()),  # mean over ranks, as samples'
    ]
)

# One row per run measured by a lab campaign (tailcast lab campaign): its phase and
# placement, the background jobs that ran beside it, whether they share a data link with it
# (from the topology), the calls each completed during the run, and the host's load as a
# noise record.
LAB_RUNS = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("campaign", pa.string()),
        pa.field("phase", pa.string()),
        pa.field("placement", pa.string()),
        pa.field("shares_links", pa.bool_()),  # any directed data link used by both
        pa.field("bg_job_ids", pa.list_(pa.string())),
        pa.field("bg_nodes", pa.list_(pa.list_(pa.string()))),  # one node list per job
        pa.field("bg_pattern", pa.string()),
        pa.field("bg_msg_size_bytes", pa.int64()),
        pa.field("bg_gap_ms", pa.float64()),  # each job's mean pause after a call
        pa.field("bg_gaps", pa.string()),  # how pauses were drawn (lab.gaps; null: fixed)
        pa.field("bg_calls", pa.list_(pa.int64())),  # calls each job completed in the run
        pa.field("bg_seconds", pa.list_(pa.float64())),  # the window they were counted over
        pa.field("host_load_1m_before", pa.float64()),
        pa.field("host_load_1m_after", pa.float64()),
    ]
)

# One row per node and `tailcast agent noise-profile` run: the detours a fixed-work-quantum
# loop saw on the node (collectors/noise_profile.py defines the profile and its TOML form).
NOISE_PROFILES = pa.schema(
    [
        pa.field("profile_id", pa.string(), nullable=False),
        pa.field("node", pa.string(), nullable=False),
        pa.field("cluster", pa.string()),
        pa.field("slurm_job_id", pa.string()),
        pa.field("taken_at", _TS),
        pa.field("method", pa.string()),  # the loop and its build
        pa.field("quanta", pa.int64()),  # quanta timed
        pa.field("quantum_ns", pa.int64()),  # the fastest quantum: the work without detours
        pa.field("threshold_ns", pa.int64()),  # excess over quantum_ns counted as a detour
        pa.field("clock_overhead_ns", pa.int64()),  # one clock reading (the loop's floor)
        pa.field("window_ns", pa.int64()),  # time observed (all quanta)
        pa.field("detours_ns", pa.list_(pa.int64())),  # each detour's length, in order
    ]
)

TABLES: dict[str, pa.Schema] = {
    "snapshots": SNAPSHOTS,
    "utilisation": UTILISATION,
    "runs": RUNS,
    "samples": SAMPLES,
    "warmup_samples": SAMPLES,  # OSU's warm-up iterations, kept apart from the timed ones
    "osu_results": OSU_RESULTS,
    "traces": TRACE,
    "replays": REPLAYS,
    "replay_ops": REPLAY_OPS,
    "replay_iterations": REPLAY_ITERATIONS,
    "replay_messages": REPLAY_MESSAGES,
    "fabric_stats": FABRIC_STATS,
    "lab_runs": LAB_RUNS,
    "sweep_points": SWEEP_POINTS,
    "noise_profiles": NOISE_PROFILES,
}


def schema_of(table: str) -> pa.Schema:
    """The schema of a stored table; KeyError names the valid tables."""
    try:
        return TABLES[table]
    except KeyError:
        raise KeyError(f"unknown table {table!r}; tables: {', '.join(TABLES)}") from None
