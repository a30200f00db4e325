"""`tailcast predict`: how long will the tail be if the job starts now?"""

from __future__ import annotations

from typing import Annotated

import typer

from tailcast.cli._common import echo, emit_json, new_app, note

app = new_app(
    "Predict at submission time the latency tail of a collective from the live queue's "
    "background traffic b and the store's history of measured runs (seed 001)."
)


@app.command("tail")
def tail(
    benchmark: Annotated[str, typer.Option(help="Collective, e.g. bcast, reduce, alltoall.")],
    size: Annotated[str, typer.Option(help="Message size, e.g. 4, 1K, 1M.")],
    locality: Annotated[
        str | None,
        typer.Option(help="same_group | same_island | different_islands (default: any)."),
    ] = None,
    b: Annotated[
        float | None,
        typer.Option("--b", help="Background traffic to predict for; default: live squeue."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Predict mean and p99 latency, and whether the run lands in the long tail."""
    from tailcast.analysis.prediction import load_run_stats, predict_tail
    from tailcast.store.catalog import Catalog
    from tailcast.units import parse_size

    size_bytes = parse_size(size)
    source = "--b"
    if b is None:
        from tailcast.collectors.snapshot import take_snapshot

        snap = take_snapshot()
        b, source = snap.utilisation.b, f"live {snap.queue.source} snapshot"
    with Catalog() as catalog:
        for problem in catalog.problems:
            note(f"warning: skipped {problem}")
        runs = load_run_stats(catalog, benchmark, size_bytes, locality)
    pred = predict_tail(runs, b, benchmark, size_bytes, locality)
    if as_json:
        emit_json({**pred.as_dict(), "b_source": source})
        return
    where = f" ({locality})" if locality else ""
    echo(f"{benchmark} {size_bytes} B{where} at b = {b:.3f} ({source}), {pred.runs} runs")
    echo(
        f"  mean  {pred.mean_us:10.2f} us  [{pred.mean_us_low:.2f}, {pred.mean_us_high:.2f}] "
        "90% prediction interval"
    )
    echo(f"  p99   {pred.p99_us:10.2f} us")
    verdict = "LONG TAIL EXPECTED" if pred.long_tail_expected else "no long tail expected"
    echo(f"  tail threshold (p85 of run means) {pred.tail_threshold_mean_us:.2f} us: {verdict}")
    if pred.extrapolated:
        note(f"warning: b outside the measured range [{pred.b_min:.3f}, {pred.b_max:.3f}]")
