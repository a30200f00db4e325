"""Is a latency distribution bimodal? (seed 001 §5.3: under adaptive routing and high b the
distribution "becomes dual" — minimal and non-minimal paths.)

Three views, each with its usual reading:
- Hartigan & Hartigan's dip statistic (Ann. Stat. 13:70, 1985) with its p-value against the
  uniform null, via the `diptest` package; small p ⇒ more than one mode.
- Sarle's bimodality coefficient (SAS/STAT manual, PROC CLUSTER):
  BC = (g² + 1) / (κ + 3 (n−1)² / ((n−2)(n−3))) with g the sample skewness and κ the sample
  excess kurtosis, both bias-corrected; BC > 5/9 (the uniform's value) suggests bimodality,
  a normal gives 1/3.
- Gaussian mixtures with 1 and 2 components (scikit-learn), compared by BIC; ΔBIC = BIC₁ − BIC₂
  above 10 is "very strong" evidence for two components (Kass & Raftery 1995).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import diptest  # type: ignore[import-untyped]
import numpy as np
import numpy.typing as npt
import scipy.stats
from sklearn.mixture import GaussianMixture
from threadpoolctl import threadpool_limits

from tailcast.analysis.tails import clean
from tailcast.errors import UsageError

SARLE_UNIFORM = 5.0 / 9.0
DELTA_BIC_STRONG = 10.0
DIP_ALPHA = 0.05
MIN_SAMPLES = 4  # BC's small-sample correction divides by (n−2)(n−3)


@dataclass(frozen=True)
class Bimodality:
    n: int
    dip: float
    dip_pvalue: float
    sarle_bc: float
    skewness: float
    excess_kurtosis: float
    bic_1: float
    bic_2: float
    delta_bic: float  # bic_1 − bic_2: positive favours two components
    means_2: tuple[float, float]
    weights_2: tuple[float, float]
    verdict: str  # bimodal | unimodal | inconclusive

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def dip_test(values: Sequence[float] | npt.ArrayLike) -> tuple[float, float]:
    """Hartigan's dip and its p-value (table interpolation). The dip is never below 1/(2n),
    its value for any sample, so n ≤ 3 gives Hartigan's value rather than 0."""
    arr = clean(values)
    if arr.size < 2:
        raise UsageError("the dip test needs at least 2 values")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "not valid for n <= 3": the caller sees n
        dip, pval = diptest.diptest(arr, allow_zero=False)
    return float(dip), float(pval)


def sarle_coefficient(values: Sequence[float] | npt.ArrayLike) -> tuple[float, float, float]:
    """(BC, skewness g, excess kurtosis κ) with the bias-corrected g and κ."""
    arr = clean(values)
    n = arr.size
    if n < MIN_SAMPLES:
        raise UsageError(f"Sarle's coefficient needs at least {MIN_SAMPLES} values, got {n}")
    g = float(scipy.stats.skew(arr, bias=False))
    k = float(scipy.stats.kurtosis(arr, fisher=True, bias=False))
    bc = (g**2 + 1.0) / (k + 3.0 * (n - 1) ** 2 / ((n - 2) * (n - 3)))
    return float(bc), g, k


def mixture_bic(
    values: Sequence[float] | npt.ArrayLike, seed: int = 0
) -> tuple[float, float, tuple[float, float], tuple[float, float]]:
    """BIC of 1- and 2-component Gaussian mixtures; means and weights of the 2-component fit
    (sorted by mean)."""
    arr = clean(values).reshape(-1, 1)
    if arr.shape[0] < MIN_SAMPLES:
        raise UsageError(f"mixture fits need at least {MIN_SAMPLES} values")
    bics = []
    two: GaussianMixture | None = None
    # One OpenMP thread: k-means (the mixtures' initialisation) on a few thousand values is
    # done before a second thread starts working, and its idle threads spin: 18 groups of
    # 800 values cost 6.7 CPU-s with two threads, 0.3 with one, for the same results.
    with threadpool_limits(limits=1, user_api="openmp"):
        for k in (1, 2):
            gm = GaussianMixture(n_components=k, n_init=3, random_state=seed, reg_covar=1e-9)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # ConvergenceWarning on degenerate samples
                gm.fit(arr)
            bics.append(float(gm.bic(arr)))
            two = gm
    assert two is not None
    order = np.argsort(two.means_.ravel())
    means = two.means_.ravel()[order]
    weights = two.weights_[order]
    return (
        bics[0],
        bics[1],
        (float(means[0]), float(means[1])),
        (float(weights[0]), float(weights[1])),
    )


def bimodality(values: Sequence[float] | npt.ArrayLike, seed: int = 0) -> Bimodality:
    """All three views and a combined verdict: bimodal when the dip test rejects and at least
    one of BC > 5/9 or ΔBIC > 10 agrees; unimodal when none points that way."""
    arr = clean(values)
    if arr.size < MIN_SAMPLES:
        raise UsageError(f"bimodality needs at least {MIN_SAMPLES} values, got {arr.size}")
    dip, pval = dip_test(arr)
    bc, g, k = sarle_coefficient(arr)
    bic1, bic2, means, weights = mixture_bic(arr, seed)
    votes = [pval < DIP_ALPHA, bc > SARLE_UNIFORM, bic1 - bic2 > DELTA_BIC_STRONG]
    if votes[0] and (votes[1] or votes[2]):
        verdict = "bimodal"
    elif not any(votes):
        verdict = "unimodal"
    else:
        verdict = "inconclusive"
    return Bimodality(
        n=int(arr.size),
        dip=dip,
        dip_pvalue=pval,
        sarle_bc=bc,
        skewness=g,
        excess_kurtosis=k,
        bic_1=bic1,
        bic_2=bic2,
        delta_bic=bic1 - bic2,
        means_2=means,
        weights_2=weights,
        verdict=verdict,
    )
