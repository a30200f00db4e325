"""Tail forecasts at job-submission time (issue 17): features, learned models, honest
validation, the warm forecast service and the Slurm cli_filter hook."""
