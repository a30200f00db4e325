"""`tailcast db`: query the results store with SQL (DuckDB views over Parquet files)."""

import csv
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tailcast.cli._common import aligned, echo, emit_json, new_app, note
from tailcast.errors import UsageError

if TYPE_CHECKING:
    from tailcast.store.catalog import Catalog

app = new_app(
    "Query stored results with SQL. Every table (runs, samples, snapshots, utilisation, "
    "osu_results, traces, replays, replay_ops, replay_iterations) is a view over its files."
)


def _report_problems(catalog: "Catalog") -> None:
    for problem in catalog.problems:
        note(f"warning: skipped {problem}")


def _print_rows(names: list[str], values: list[list[Any]]) -> None:
    rows = [["" if v is None else str(v) for v in row] for row in values]
    widths = [max([len(n)] + [len(r[i]) for r in rows]) for i, n in enumerate(names)]
    for line in aligned([names, ["-" * w for w in widths], *rows]):
        echo(line)


@app.command("sql")
def sql(
    query: Annotated[str, typer.Argument(help='One SQL statement, e.g. "SELECT * FROM runs".')],
    as_json: Annotated[bool, typer.Option("--json", help="Rows as a JSON list.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Rows as CSV with a header.")] = False,
) -> None:
    """Run a SQL query over the store and print the rows."""
    from tailcast.store.catalog import Catalog

    if as_json and as_csv:
        raise UsageError("choose one of --json and --csv")
    with Catalog() as catalog:
        _report_problems(catalog)
        table = catalog.sql(query)
    if as_json:
        emit_json(table.to_pylist())
    elif as_csv:
        # "\n", not the csv module's default "\r\n": `$(tailcast db sql … --csv | tail -1)`
        # must not end in a carriage return (RFC 4180 readers accept both).
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(table.column_names)
        for row in table.to_pylist():
            writer.writerow(["" if v is None else v for v in row.values()])
    else:
        _print_rows(table.column_names, [list(r.values()) for r in table.to_pylist()])


@app.command("tables")
def tables(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List the tables with their file and row counts, unreadable files, and pending parts
    of results not completed (yet)."""
    # Footers only: the SQL engine is not needed to count files and rows.
    from tailcast.store.inventory import inventory
    from tailcast.store.results import ResultsDir

    results = ResultsDir()
    infos = list(inventory(results).values())
    root = results.root
    listing: list[dict[str, Any]] = [
        {
            "table": i.name,
            "files": len(i.files),
            "rows": i.rows,
            "problems": [str(p) for p in i.problems],
            "pending": [str(p) for p in i.pending],
        }
        for i in infos
    ]
    if as_json:
        emit_json({"results_dir": str(root), "tables": listing})
        return
    echo(f"results directory: {root}")
    _print_rows(
        ["table", "files", "rows", "unreadable", "pending"],
        [
            [x["table"], x["files"], x["rows"], len(x["problems"]), len(x["pending"])]
            for x in listing
        ],
    )
    for x in listing:
        for p in x["problems"]:
            note(f"unreadable: {p}")
    if any(x["pending"] for x in listing):
        note(
            "pending: parts of results whose completing record is not stored (being "
            "written now, or their writer was killed); left out of every query"
        )
