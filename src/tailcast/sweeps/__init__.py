"""Sweeps of replays: spec, plan, points, Slurm job arrays, status."""
