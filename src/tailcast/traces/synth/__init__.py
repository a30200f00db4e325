"""Synthetic traces: seed 000's nine workloads, OSU-pattern collectives, seed 002's mix,
seed 003's Poisson load."""

from tailcast.traces.synth.mix import seed002_mix_trace
from tailcast.traces.synth.osu import OSU_COLLECTIVES, osu_trace
from tailcast.traces.synth.poisson import poisson_trace
from tailcast.traces.synth.workloads import WORKLOADS, WorkloadParams, workload_trace

__all__ = [
    "OSU_COLLECTIVES",
    "WORKLOADS",
    "WorkloadParams",
    "osu_trace",
    "poisson_trace",
    "seed002_mix_trace",
    "workload_trace",
]
