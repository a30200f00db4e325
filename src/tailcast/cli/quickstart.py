"""`tailcast quickstart`: run the whole pipeline on bundled data (what `make demo` does)."""

from typing import Annotated

import typer

from tailcast.cli._common import echo, emit_json, new_app, note

app = new_app(
    "Run tailcast end to end on bundled real data and print where the results are.",
    no_args_is_help=False,
)


@app.callback(invoke_without_command=True)
def quickstart(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable summary.")] = False,
) -> None:
    """Load a bundled campaign, replay, compare, correlate, predict, and write the report."""
    from tailcast.quickstart import run_quickstart

    result = run_quickstart(progress=note)
    if as_json:
        emit_json(
            {
                "results_dir": result.results_dir,
                "report": result.report,
                "steps": [{"step": n, "seconds": s, "summary": m} for n, s, m in result.steps],
            }
        )
        return
    echo(f"results: {result.results_dir}")
    echo(f"report:  {result.report}")
