"""`tailcast report --out DIR`: a static HTML page from whatever the store holds."""

from pathlib import Path
from typing import Annotated

import typer

from tailcast.cli._common import echo, emit_json, new_app, note
from tailcast.errors import UsageError

app = new_app("Write a static HTML report (plots, tables, provenance) from the store.")


def _pairs(specs: list[str]) -> list[tuple[str, str]]:
    pairs = []
    for spec in specs:
        replay_id, sep, measured = spec.partition("=")
        if not sep or not replay_id.strip() or not measured.strip():
            raise UsageError(f"--compare wants REPLAY_ID=MEASURED_SOURCE, got {spec!r}")
        pairs.append((measured.strip(), replay_id.strip()))
    return pairs


# invoke_without_command: `tailcast report --out DIR` runs this callback itself (the app has
# no sub-commands; Typer would otherwise demand one).
@app.callback(invoke_without_command=True)
def report(
    out: Annotated[Path, typer.Option("--out", help="Directory for index.html and plots/.")],
    compare: Annotated[
        list[str] | None,
        typer.Option(
            "--compare",
            metavar="REPLAY_ID=SOURCE",
            help="REPLAY_ID=MEASURED_SOURCE (SQL, table or Parquet file); repeatable.",
        ),
    ] = None,
    embed: Annotated[
        bool, typer.Option("--embed/--no-embed", help="Embed plots as data URIs in the page.")
    ] = True,
    fit_groups: Annotated[
        int, typer.Option("--fit-groups", help="Fit distributions to the N largest groups.")
    ] = 1,
    fit_time_limit: Annotated[
        float, typer.Option("--fit-time-limit", help="Seconds allowed per distribution fit.")
    ] = 3.0,
    as_json: Annotated[bool, typer.Option("--json", help="Describe what was written.")] = False,
) -> None:
    """Build DIR/index.html with every table, figure and its provenance."""
    from tailcast.analysis.report import REPORT_STEPS, build_report
    from tailcast.cli.progress import progress

    if fit_groups < 0:
        raise UsageError("--fit-groups must be ≥ 0")
    with progress("report", REPORT_STEPS) as advance:
        result = build_report(
            out,
            embed=embed,
            fit_groups=fit_groups,
            fit_time_limit_s=fit_time_limit,
            compare=_pairs(compare or []),
            progress=advance,
        )
    if as_json:
        emit_json(
            {
                "html": str(result.html),
                "figures": [
                    {"title": f.title, "png": str(out / f.png), "svg": str(out / f.svg)}
                    for f in result.figures
                ],
                "sections": [
                    {
                        "id": s.ident,
                        "title": s.title,
                        "notes": s.notes,
                        "tables": len(s.tables),
                        "figures": len(s.figures),
                    }
                    for s in result.sections
                ],
            }
        )
        return
    note(f"{len(result.figures)} figures, {sum(len(s.tables) for s in result.sections)} tables")
    echo(str(result.html))
