"""Measured vs simulated latency distributions: how far apart, and where.

- two-sample Kolmogorov–Smirnov: D = sup_x |F_m(x) − F_s(x)| with its p-value (scipy, exact
  for small samples, asymptotic otherwise);
- 1-Wasserstein distance (earth mover's, in the samples' unit): the mean shift needed to turn
  one distribution into the other, ∫ |F_m − F_s| dx;
- relative error of the simulated percentile against the measured one at p50, p90, p99:
  (sim − meas) / meas;
- QQ data: both samples' quantiles at common probabilities (numpy type 7).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.stats

from tailcast.analysis.tails import clean
from tailcast.errors import UsageError

ERROR_PERCENTILES: tuple[float, ...] = (50.0, 90.0, 99.0)


def qq_probabilities(n_measured: int, n_simulated: int) -> npt.NDArray[np.float64]:
    """Probabilities 0.5 %…99.5 % plus the far tail where both samples reach it."""
    probs = list(np.linspace(0.005, 0.995, 199))
    smaller = min(n_measured, n_simulated)
    probs += [p for p in (0.999, 0.9999) if smaller * (1 - p) >= 1]
    return np.asarray(probs)


@dataclass
class Comparison:
    n_measured: int
    n_simulated: int
    ks_statistic: float
    ks_pvalue: float
    wasserstein: float
    percentiles: dict[str, dict[str, float | None]]  # "p50" → measured, simulated, rel_error
    qq_probabilities: list[float] = field(default_factory=list)
    qq_measured: list[float] = field(default_factory=list)
    qq_simulated: list[float] = field(default_factory=list)

    def as_dict(self, include_qq: bool = True) -> dict[str, Any]:
        out = asdict(self)
        if not include_qq:
            for key in ("qq_probabilities", "qq_measured", "qq_simulated"):
                out.pop(key)
        return out


def compare_samples(
    measured: Sequence[float] | npt.ArrayLike, simulated: Sequence[float] | npt.ArrayLike
) -> Comparison:
    m, s = clean(measured), clean(simulated)
    if m.size == 0 or s.size == 0:
        raise UsageError(
            f"comparison needs values on both sides (measured {m.size}, simulated {s.size})"
        )
    ks = scipy.stats.ks_2samp(m, s)
    pct: dict[str, dict[str, float | None]] = {}
    for q, qm, qs in zip(
        ERROR_PERCENTILES,
        np.percentile(m, ERROR_PERCENTILES),
        np.percentile(s, ERROR_PERCENTILES),
        strict=True,
    ):
        rel = float((qs - qm) / qm) if qm != 0 else None
        pct[f"p{q:g}"] = {"measured": float(qm), "simulated": float(qs), "rel_error": rel}
    probs = qq_probabilities(m.size, s.size)
    return Comparison(
        n_measured=int(m.size),
        n_simulated=int(s.size),
        ks_statistic=float(ks.statistic),
        ks_pvalue=float(ks.pvalue),
        wasserstein=float(scipy.stats.wasserstein_distance(m, s)),
        percentiles=pct,
        qq_probabilities=[float(p) for p in probs],
        qq_measured=[float(v) for v in np.quantile(m, probs)],
        qq_simulated=[float(v) for v in np.quantile(s, probs)],
    )
