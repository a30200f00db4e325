"""The collective benchmarks tailcast measures and the traffic pattern of each (seed 001's
classes); the agent, campaigns, the lab and the forecast's features share this catalogue."""

BENCHMARKS = ("bcast", "reduce", "allreduce", "alltoall", "allgather", "barrier", "latency")
PATTERNS = {
    "bcast": "one-to-all",
    "reduce": "all-to-one",
    "allreduce": "all-to-all",
    "alltoall": "all-to-all",
    "allgather": "all-to-all",
    "barrier": "synchronisation",
    "latency": "point-to-point",
}
