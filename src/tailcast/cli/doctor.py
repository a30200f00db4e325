"""`tailcast doctor`: one line per part of the machine tailcast uses — ok, missing, or
present but not working — and the features each missing part turns off. Exit 0 when offline
replay works here, 1 when it does not."""

from pathlib import Path
from typing import Annotated

import typer

from tailcast.cli._common import echo, emit_json, new_app

app = new_app(
    "Check what this machine has for tailcast (Python, engine, store, Slurm, pyslurm, MPI, "
    "OSU, SimGrid) and what each missing part turns off. Exit 0 when offline replay works "
    "here, 1 when it does not.",
    no_args_is_help=False,
)


@app.callback(invoke_without_command=True)
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable report.")] = False,
    osu_dir: Annotated[
        Path | None,
        typer.Option("--osu-dir", help="Where the site's OSU binaries are (else $OSU_HOME, PATH)."),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=1.0, help="Seconds each probe may take.")
    ] = 10.0,
) -> None:
    """Exit 0 when offline replay works on this machine, 1 when it does not."""
    from tailcast.doctor import run_checks

    report = run_checks(osu_dir=osu_dir, timeout=timeout)
    if as_json:
        emit_json(report.to_dict())
    else:
        works = "works" if report.offline_replay_works else "DOES NOT WORK"
        echo(f"offline replay {works} here")
        for check in report.checks:
            echo(f"{check.status:<8} {check.name:<9} {check.summary}")
            if not check.ok:
                if check.needed_for:
                    echo(f"{'':<18}turns off: {'; '.join(check.needed_for)}")
                if check.hint:
                    echo(f"{'':<18}hint: {check.hint}")
    if not report.offline_replay_works:
        raise typer.Exit(1)
