"""Capture of real MPI programs: a PMPI tracer (C, built with the local mpicc, loaded with
LD_PRELOAD) and the conversion of its per-rank files into a tailcast trace."""

from tailcast.traces.capture.build import build_tracer, tracer_path
from tailcast.traces.capture.raw import convert_raw
from tailcast.traces.capture.run import CaptureResult, capture_run

__all__ = ["CaptureResult", "build_tracer", "capture_run", "convert_raw", "tracer_path"]
