"""`tailcast analyze`: tail metrics, distribution fits, bimodality, b-correlation,
measured-vs-simulated comparison and plots. The logic lives in tailcast.analysis."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tailcast.cli._common import echo, emit_json, new_app, note
from tailcast.errors import UsageError

if TYPE_CHECKING:
    from tailcast.analysis.sources import Source

# Each command imports its analysis module when it runs: scipy, scikit-learn, matplotlib
# and DuckDB cost seconds of start-up that `--help` and the other commands must not pay.
# (tailcast.analysis.fitting.DEFAULT_TIME_LIMIT_S; a test checks they agree.)
DEFAULT_TIME_LIMIT_S = 3.0

app = new_app(
    "Analyse latency tails. SOURCE is a Parquet file, a store table (e.g. samples), a replay "
    "id, or a SQL query over the store (see `tailcast db`)."
)
plot_app = new_app("Write figures (PNG + SVG) in the style of seed 001.")
app.add_typer(plot_app, name="plot")

SourceArg = Annotated[
    str, typer.Argument(help="Parquet file, store table, replay id, or SQL query.")
]
ColumnOpt = Annotated[str, typer.Option("--column", "-c", help="Numeric column to analyse.")]
ByOpt = Annotated[
    str, typer.Option("--by", help="Comma-separated columns to group by, e.g. benchmark,locality.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output on stdout.")]
OutOpt = Annotated[Path, typer.Option("--out", help="Directory for the PNG and SVG files.")]


def _by(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "-" if value is None else str(value)


def _print_rows(rows: list[dict[str, Any]], columns: list[str] | None = None) -> None:
    if not rows:
        echo("(no rows)")
        return
    cols = columns or list(rows[0])
    cells = [[_fmt(r.get(c)) for c in cols] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
    echo("  ".join(c.rjust(w) for c, w in zip(cols, widths, strict=True)))
    for row in cells:
        echo("  ".join(v.rjust(w) for v, w in zip(row, widths, strict=True)))


def _values(src: "Source", column: str) -> Any:
    from tailcast.analysis.tails import group_values

    return group_values(src.table, column)[0][1]


@app.command("tails")
def tails(
    source: SourceArg,
    column: ColumnOpt = "latency_us",
    by: ByOpt = "",
    hill_k: Annotated[
        int | None, typer.Option("--hill-k", help="Hill k (default: chosen per group).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Tail metrics per group: percentiles, mean/median, p99/p50, share above p85, Hill α."""
    from tailcast.analysis.sources import resolve
    from tailcast.analysis.tails import TAIL_METRIC_COLUMNS, tails_by_group

    src = resolve(source)
    rows = tails_by_group(src.table, column, _by(by), hill_k)
    if as_json:
        emit_json({"column": column, "by": _by(by), "groups": rows, "provenance": src.provenance()})
        return
    _print_rows(rows, [*_by(by), *TAIL_METRIC_COLUMNS])


@app.command("fit")
def fit(
    source: SourceArg,
    column: ColumnOpt = "latency_us",
    top: Annotated[int, typer.Option("--top", help="How many best fits to show.")] = 10,
    rank_by: Annotated[str, typer.Option("--rank-by", help="sse, aic, bic or ks.")] = "sse",
    time_limit: Annotated[
        float, typer.Option("--time-limit", help="Seconds allowed per distribution.")
    ] = DEFAULT_TIME_LIMIT_S,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Worker processes (default: all cores).")
    ] = None,
    distributions: Annotated[
        str, typer.Option("--distributions", help="Comma-separated scipy names to fit.")
    ] = "",
    every: Annotated[
        bool,
        typer.Option(
            "--all", help="Fit every suitable scipy family (~100) instead of the latency set."
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Fit continuous scipy.stats distributions (default: ~20 families suited to latency
    data; --all: every suitable one); rank by SSE, AIC, BIC, KS."""
    if top < 1:
        raise UsageError("--top must be at least 1")
    from tailcast.analysis.fitting import (
        LATENCY_FAMILIES,
        continuous_distributions,
        fit_distributions,
    )
    from tailcast.analysis.sources import resolve
    from tailcast.cli.progress import progress

    if every and distributions:
        raise UsageError("choose one of --all and --distributions")
    src = resolve(source)
    names = continuous_distributions() if every else _by(distributions) or None
    with progress("fit (families)", len(names or LATENCY_FAMILIES)) as advance:
        report = fit_distributions(
            _values(src, column),
            names,
            time_limit_s=time_limit,
            workers=workers,
            progress=advance,
        )
    ranked = report.top(top, rank_by)
    if as_json:
        out = report.as_dict(top=None)
        out["results"] = [r.as_dict() for r in ranked]
        out["rank_by"] = rank_by
        out["provenance"] = src.provenance()
        emit_json(out)
        return
    note(
        f"{len(report.results)} distributions, n={report.n}, {report.bins} bins; "
        f"best: {report.as_dict()['best']}"
    )
    _print_rows(
        [
            {
                "distribution": r.distribution,
                "rank_sse": r.rank_sse,
                "rank_aic": r.rank_aic,
                "rank_bic": r.rank_bic,
                "rank_ks": r.rank_ks,
                "sse": r.sse,
                "aic": r.aic,
                "bic": r.bic,
                "ks": r.ks_statistic,
                "params": " ".join(f"{k}={v:.4g}" for k, v in r.params.items()),
            }
            for r in ranked
        ]
    )


@app.command("bimodality")
def bimodality(
    source: SourceArg,
    column: ColumnOpt = "latency_us",
    by: ByOpt = "",
    as_json: JsonOpt = False,
) -> None:
    """Hartigan's dip test, Sarle's bimodality coefficient, 1-vs-2 Gaussian mixture BIC."""
    from tailcast.analysis.bimodality import bimodality as bimodality_of
    from tailcast.analysis.sources import resolve
    from tailcast.analysis.tails import group_values

    src = resolve(source)
    rows = [
        {**key, **bimodality_of(values).as_dict()}
        for key, values in group_values(src.table, column, _by(by))
        if values.size
    ]
    if as_json:
        emit_json({"column": column, "by": _by(by), "groups": rows, "provenance": src.provenance()})
        return
    _print_rows(rows, [*_by(by), "n", "dip", "dip_pvalue", "sarle_bc", "delta_bic", "verdict"])


@app.command("correlate")
def correlate(
    all_runs: Annotated[
        bool, typer.Option("--all-runs", help="Keep runs whose b was not accepted.")
    ] = False,
    b_mode: Annotated[str, typer.Option("--b", help="Run b: mean, before or after.")] = "mean",
    as_json: JsonOpt = False,
) -> None:
    """Pearson r and Spearman ρ of b vs mean and p99 latency per (benchmark, size)."""
    from tailcast.analysis.correlation import correlate as correlate_store

    result = correlate_store(only_accepted=not all_runs, b_mode=b_mode)
    if as_json:
        emit_json(result.as_dict())
        return
    if result.skipped_runs:
        note(f"{result.skipped_runs} runs left out (no b, no samples, or b not accepted)")
    _print_rows(
        [g.as_dict() for g in result.groups],
        [
            "benchmark",
            "msg_size_bytes",
            "n_runs",
            "pearson_r_mean",
            "pearson_p_mean",
            "spearman_rho_mean",
            "spearman_p_mean",
            "pearson_r_p99",
            "spearman_rho_p99",
        ],
    )


@app.command("compare")
def compare(
    measured: Annotated[str, typer.Option("--measured", help="Measured SOURCE (e.g. SQL).")],
    simulated: Annotated[str, typer.Option("--simulated", help="Simulated SOURCE: replay id.")],
    measured_column: Annotated[str, typer.Option("--measured-column")] = "latency_us",
    simulated_column: Annotated[str, typer.Option("--simulated-column")] = "latency_us",
    qq: Annotated[bool, typer.Option("--qq", help="Include the QQ data in --json.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Two-sample KS, Wasserstein distance, relative error at p50/p90/p99, QQ data."""
    from tailcast.analysis.compare import compare_samples
    from tailcast.analysis.sources import resolve

    m, s = resolve(measured), resolve(simulated)
    res = compare_samples(_values(m, measured_column), _values(s, simulated_column))
    if as_json:
        emit_json(
            {
                **res.as_dict(include_qq=qq),
                "provenance": {"measured": m.provenance(), "simulated": s.provenance()},
            }
        )
        return
    echo(f"n measured {res.n_measured}, simulated {res.n_simulated}")
    echo(
        f"KS D = {res.ks_statistic:.4g} (p = {res.ks_pvalue:.3g}); "
        f"Wasserstein = {res.wasserstein:.4g}"
    )
    _print_rows([{"percentile": k, **v} for k, v in res.percentiles.items()])


def _announce(paths: list[Path]) -> None:
    for p in paths:
        echo(str(p))


@plot_app.command("frequency")
def plot_frequency(
    source: SourceArg,
    out: OutOpt,
    column: ColumnOpt = "latency_us",
    by: ByOpt = "",
    title: Annotated[str, typer.Option("--title")] = "",
) -> None:
    """Frequency distribution, one line per group (seed 001 Figs. 1, 3, 5)."""
    from tailcast.analysis.plots import frequency_plot
    from tailcast.analysis.sources import resolve
    from tailcast.analysis.tails import group_values

    src = resolve(source)
    groups = {
        " · ".join(str(v) for v in k.values()) or "all": v
        for k, v in group_values(src.table, column, _by(by))
    }
    files = frequency_plot(
        groups, out, "frequency", title or f"Frequency of {column}", legend_title=",".join(_by(by))
    )
    _announce([files.png, files.svg])


@plot_app.command("ccdf")
def plot_ccdf(
    source: SourceArg,
    out: OutOpt,
    column: ColumnOpt = "latency_us",
    by: ByOpt = "",
) -> None:
    """Empirical CCDF on log-log axes, one line per group."""
    from tailcast.analysis.plots import ccdf_plot
    from tailcast.analysis.sources import resolve
    from tailcast.analysis.tails import group_values

    src = resolve(source)
    groups = {
        " · ".join(str(v) for v in k.values()) or "all": v
        for k, v in group_values(src.table, column, _by(by))
    }
    files = ccdf_plot(groups, out, "ccdf", f"CCDF of {column}")
    _announce([files.png, files.svg])


@plot_app.command("correlation")
def plot_correlation(out: OutOpt) -> None:
    """b vs mean latency per (benchmark, size) with least-squares lines (seed 001 Fig. 4)."""
    from tailcast.analysis.correlation import correlate as correlate_store
    from tailcast.analysis.plots import b_scatter_plot

    result = correlate_store()
    files = b_scatter_plot(result.runs, result.groups, out, "b_vs_latency")
    _announce([files.png, files.svg])


@plot_app.command("qq")
def plot_qq(
    measured: Annotated[str, typer.Option("--measured", help="Measured SOURCE.")],
    simulated: Annotated[str, typer.Option("--simulated", help="Simulated SOURCE.")],
    out: OutOpt,
    column: ColumnOpt = "latency_us",
) -> None:
    """QQ plot of measured against simulated latency."""
    from tailcast.analysis.compare import compare_samples
    from tailcast.analysis.plots import qq_plot
    from tailcast.analysis.sources import resolve

    m, s = resolve(measured), resolve(simulated)
    res = compare_samples(_values(m, column), _values(s, column))
    files = qq_plot(res, out, "qq", f"QQ: measured vs {simulated}")
    _announce([files.png, files.svg])
