"""Fits continuous scipy.stats distributions to a sample and ranks them: by default the
families suited to latency data (`LATENCY_FAMILIES`), or every suitable one (seed 001 §4:
"more than 100 different distributions have been fitted to the data").

Each distribution is fitted by maximum likelihood (`rv_continuous.fit`) in a worker process
with its own time limit (SIGALRM in the worker), so one pathological family cannot stall the
run; a wall-clock bound on the whole pool is the backstop. Rankings:
- SSE between the histogram density and the fitted pdf at the bin centres (the usual
  "best fit" of seed 001's figures). The histogram is noisy, so SSE differences below its
  sampling noise say nothing: with bin probability p_j, width w_j and n values,
  Var(h_j) ≈ p_j(1 − p_j)/(n w_j²), and the SSE of even the true density fluctuates with
  sd ≈ sqrt(2 Σ Var(h_j)²). Fits within that sd of the smallest SSE are ranked among
  themselves by AIC (parsimony), the rest by SSE;
- AIC = 2p − 2 ln L and BIC = p ln n − 2 ln L with ln L summed over the data points (not the
  bin centres), p = number of fitted parameters;
- the one-sample Kolmogorov–Smirnov statistic against the fitted cdf (its p-value is
  optimistic because the parameters were estimated from the same data).
"""

from __future__ import annotations

import math
import multiprocessing
import os
import signal
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from types import FrameType
from typing import Any

import numpy as np
import scipy.stats

from tailcast.analysis.tails import FloatArray, clean
from tailcast.errors import UsageError

# Families left out: no maximum-likelihood fit in scipy (irwinhall, kstwo — integer shape),
# or one likelihood evaluation costs seconds (levy_stable, studentized_range numerically
# integrate their pdf), so they would only ever hit the time limit; vonmises is circular — its
# pdf repeats every 2π·scale, so on a line its "likelihood" is unbounded (vonmises_line stays).
EXCLUDED: frozenset[str] = frozenset(
    {"irwinhall", "kstwo", "levy_stable", "studentized_range", "vonmises"}
)
# Latency and service times are positive and right-skewed, often heavy-tailed: the families
# used for them — log-normal, gamma, Weibull, inverse Gaussian (Wald), log-logistic (fisk),
# Burr XII, ex-Gaussian (exponnorm), Birnbaum–Saunders (fatiguelife), the extreme-value
# families (GEV, Gumbel, Fréchet = invweibull), the power-law tails (Pareto, Lomax,
# generalised Pareto), inverse gamma, log-Laplace and Johnson SU — with the normal and
# exponential as baselines. Fitting these takes seconds where all ~100 take half a minute
# (tukeylambda and genhyperbolic alone ~20 s on 10,000 values); `--all` fits every family.
LATENCY_FAMILIES: tuple[str, ...] = (
    "norm", "expon", "lognorm", "gamma", "weibull_min", "invgauss", "fisk", "burr12",
    "exponnorm", "fatiguelife", "genextreme", "gumbel_r", "invweibull", "pareto", "lomax",
    "genpareto", "invgamma", "loglaplace", "johnsonsu",
)  # fmt: skip
DEFAULT_TIME_LIMIT_S = 3.0
DEFAULT_MAX_FIT_SAMPLES = 20_000
MIN_FIT_SAMPLES = 10


def continuous_distributions() -> list[str]:
    """Names of every continuous distribution scipy.stats offers, minus EXCLUDED."""
    names = []
    for name in dir(scipy.stats):
        obj = getattr(scipy.stats, name)
        if isinstance(obj, scipy.stats.rv_continuous) and name not in EXCLUDED:
            names.append(name)
    return sorted(names)


@dataclass
class FitResult:
    distribution: str
    status: str  # ok | timeout | error
    params: dict[str, float] = field(default_factory=dict)
    n_params: int = 0
    log_likelihood: float | None = None
    aic: float | None = None
    bic: float | None = None
    sse: float | None = None
    ks_statistic: float | None = None
    ks_pvalue: float | None = None
    seconds: float = 0.0
    message: str = ""
    sse_within_noise: bool = False
    rank_sse: int | None = None
    rank_aic: int | None = None
    rank_bic: int | None = None
    rank_ks: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FitReport:
    n: int
    n_fitted_on: int
    bins: int
    time_limit_s: float
    sse_noise_sd: float
    results: list[FitResult]  # ranked by SSE (failed fits last)

    def ranked(self, by: str = "sse") -> list[FitResult]:
        key = f"rank_{by}"
        if not self.results or not hasattr(self.results[0], key):
            raise UsageError(f"unknown ranking {by!r}; use sse, aic, bic or ks")
        ok = [r for r in self.results if getattr(r, key) is not None]
        return sorted(ok, key=lambda r: int(getattr(r, key)))

    def top(self, k: int, by: str = "sse") -> list[FitResult]:
        return self.ranked(by)[:k]

    def as_dict(self, top: int | None = None) -> dict[str, Any]:
        results = self.results if top is None else self.top(top)
        return {
            "n": self.n,
            "n_fitted_on": self.n_fitted_on,
            "bins": self.bins,
            "time_limit_s": self.time_limit_s,
            "sse_noise_sd": self.sse_noise_sd,
            "best": {
                by: (self.ranked(by)[0].distribution if self.ranked(by) else None)
                for by in ("sse", "aic", "bic", "ks")
            },
            "failed": [
                {"distribution": r.distribution, "status": r.status, "message": r.message}
                for r in self.results
                if r.status != "ok"
            ],
            "results": [r.as_dict() for r in results],
        }


class _FitTimeout(Exception):
    pass


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise _FitTimeout()


def _param_names(dist: scipy.stats.rv_continuous) -> list[str]:
    shapes = [s.strip() for s in (dist.shapes or "").split(",") if s.strip()]
    return [*shapes, "loc", "scale"]


@dataclass(frozen=True)
class _Job:
    fit_data: FloatArray
    data: FloatArray
    centres: FloatArray
    density: FloatArray
    time_limit_s: float


_JOB: list[_Job] = []  # set once per worker process by _worker_init


def _worker_init(job: _Job) -> None:
    # Workers ignore SIGINT (the parent handles it and terminates the pool), and the pool's
    # terminate() (SIGTERM) ends them quietly, not through the CLI's handler they inherit.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _JOB[:] = [job]


def _fit_one(name: str) -> FitResult:
    """Runs in a worker: fit one family under a time limit, then score it on all data."""
    job = _JOB[0]
    fit_data, data, centres, density = job.fit_data, job.data, job.centres, job.density
    time_limit_s = job.time_limit_s
    dist = getattr(scipy.stats, name)
    start = time.perf_counter()
    phase = "fit"
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, time_limit_s)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            params = tuple(float(p) for p in dist.fit(fit_data))
            signal.setitimer(signal.ITIMER_REAL, time_limit_s)  # scoring gets its own limit
            phase = "scoring"
            frozen = dist(*params)
            loglik = float(np.sum(frozen.logpdf(data)))
            pdf = frozen.pdf(centres)
            sse = float(np.sum((density - pdf) ** 2))
            ks = scipy.stats.kstest(data, frozen.cdf)
    except _FitTimeout:
        return FitResult(
            name,
            "timeout",
            seconds=time.perf_counter() - start,
            message=f"{phase} > {time_limit_s} s",
        )
    except Exception as exc:  # any family may fail on any data; record why and go on
        return FitResult(
            name,
            "error",
            seconds=time.perf_counter() - start,
            message=f"{phase}: {type(exc).__name__}",
        )
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    n_params = len(params)
    good = math.isfinite(loglik) and math.isfinite(sse)
    return FitResult(
        distribution=name,
        status="ok" if good else "error",
        params=dict(zip(_param_names(dist), params, strict=True)),
        n_params=n_params,
        log_likelihood=loglik if math.isfinite(loglik) else None,
        aic=2 * n_params - 2 * loglik if good else None,
        bic=n_params * math.log(data.size) - 2 * loglik if good else None,
        sse=sse if math.isfinite(sse) else None,
        ks_statistic=float(ks.statistic),
        ks_pvalue=float(ks.pvalue),
        seconds=time.perf_counter() - start,
        message="" if good else "data outside the fitted support",
    )


def _assign_ranks(results: list[FitResult], sse_noise_sd: float) -> None:
    ok = [r for r in results if r.status == "ok" and r.sse is not None]
    if ok:
        best = min(float(r.sse) for r in ok if r.sse is not None)
        for r in ok:
            r.sse_within_noise = float(r.sse or 0.0) <= best + sse_noise_sd

        def sse_key(r: FitResult) -> tuple[bool, float]:
            if r.sse_within_noise and r.aic is not None:
                return (False, r.aic)
            return (True, float(r.sse or 0.0))

        for i, r in enumerate(sorted(ok, key=sse_key), start=1):
            r.rank_sse = i
    for attr, rank_attr in (
        ("aic", "rank_aic"),
        ("bic", "rank_bic"),
        ("ks_statistic", "rank_ks"),
    ):
        ok = [r for r in results if r.status == "ok" and getattr(r, attr) is not None]
        for i, r in enumerate(sorted(ok, key=lambda r: float(getattr(r, attr))), start=1):
            setattr(r, rank_attr, i)


def fit_distributions(
    values: Sequence[float] | FloatArray,
    distributions: Iterable[str] | None = None,
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
    workers: int | None = None,
    bins: int | str = "fd",
    max_fit_samples: int = DEFAULT_MAX_FIT_SAMPLES,
    seed: int = 0,
    progress: Callable[[float], None] | None = None,
) -> FitReport:
    """Fits each distribution (default: `LATENCY_FAMILIES`; every family:
    `continuous_distributions()`) in parallel.

    Samples beyond `max_fit_samples` are subsampled (seeded) for the fit only, to bound its
    cost; likelihood, SSE and KS always use all values."""
    data = clean(values)
    if data.size < MIN_FIT_SAMPLES:
        raise UsageError(f"need at least {MIN_FIT_SAMPLES} finite values to fit, got {data.size}")
    if np.ptp(data) == 0:
        raise UsageError("all values are equal; no continuous distribution can be fitted")
    names = list(distributions) if distributions is not None else list(LATENCY_FAMILIES)
    unknown = [
        n for n in names if not isinstance(getattr(scipy.stats, n, None), scipy.stats.rv_continuous)
    ]
    if unknown:
        raise UsageError(f"not continuous scipy.stats distributions: {', '.join(unknown)}")
    if time_limit_s <= 0:
        raise UsageError("time limit must be positive")
    fit_data = data
    if data.size > max_fit_samples:
        fit_data = np.random.default_rng(seed).choice(data, max_fit_samples, replace=False)
    edges = np.histogram_bin_edges(data, bins=bins)
    if edges.size > 1001:  # 'fd' on a very long tail can ask for absurd bin counts
        edges = np.histogram_bin_edges(data, bins=1000)
    counts, edges = np.histogram(data, bins=edges)
    widths = np.diff(edges)
    density = counts / (data.size * widths)
    centres = (edges[:-1] + edges[1:]) / 2.0
    share = counts / data.size
    density_var = share * (1.0 - share) / (data.size * widths**2)
    sse_noise_sd = float(np.sqrt(2.0 * np.sum(density_var**2)))

    n_workers = max(1, min(workers or (os.cpu_count() or 1), len(names)))
    # Bound on the whole pool: every fit at its limit, plus scoring and start-up slack.
    deadline = time.monotonic() + time_limit_s * math.ceil(len(names) / n_workers) * 1.5 + 30
    # fork: workers start at once with scipy already imported, and callers' scripts need no
    # `if __name__ == "__main__"` guard (spawn/forkserver re-import the main module).
    ctx = multiprocessing.get_context("fork")
    results: dict[str, FitResult] = {}
    job = _Job(fit_data, data, centres, density, time_limit_s)
    with ctx.Pool(n_workers, initializer=_worker_init, initargs=(job,)) as pool:
        pending = {name: pool.apply_async(_fit_one, (name,)) for name in names}
        for name, handle in pending.items():
            remaining = deadline - time.monotonic()
            try:
                results[name] = handle.get(timeout=max(0.0, remaining))
            except multiprocessing.TimeoutError:
                results[name] = FitResult(name, "timeout", message="pool deadline reached")
            if progress is not None:
                progress(1)
        pool.terminate()
    ordered = [results[n] for n in names]
    _assign_ranks(ordered, sse_noise_sd)
    ordered.sort(key=lambda r: (r.rank_sse is None, r.rank_sse or 0, r.distribution))
    return FitReport(
        n=int(data.size),
        n_fitted_on=int(fit_data.size),
        bins=int(centres.size),
        time_limit_s=time_limit_s,
        sse_noise_sd=sse_noise_sd,
        results=ordered,
    )
