"""`tailcast calibrate`: a fabric's host model fitted to a measured campaign in the store.

- host_fit.py: per-message overhead o, per-link latency and the host noise (Poisson
  detours, lognormal lengths) fitted to the small-message runs of the fitting phases by
  minimising a quantile loss of replayed against measured latencies;
- fabric_out.py: the base fabric with the fitted values, as a fabric TOML;
- validation.py: the figures a calibration is judged by, on runs it was not fitted to.
"""
