"""The network lab's measurement side: bandwidth runs (OSU's osu_bw method), the
calibration of the lab's link classes, and the lab campaign with real background MPI jobs.
The lab itself (namespaces, shaped links) is scripts/slurm-local --network lab."""
