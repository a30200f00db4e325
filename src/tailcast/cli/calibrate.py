"""`tailcast calibrate`: a fabric's host model — per-message overhead, link latency, the
MPI protocol's eager threshold and host noise — fitted to a measured lab campaign in the
store, written as a fabric TOML and validated on the runs it was not fitted to. The
network's rates come from the base fabric (`tailcast lab calibrate --fabric-out` measures
them live)."""

import json
from pathlib import Path
from typing import Annotated

import typer

from tailcast.cli._common import echo, emit_json, new_app, note

app = new_app(
    "Fit a fabric's host model (o, link latency, eager threshold, noise) to a stored lab "
    "campaign; write the fabric; validate it on held-out phases.",
    no_args_is_help=False,
)


@app.callback(invoke_without_command=True)
def calibrate(
    fit_phase: Annotated[
        list[str],
        typer.Option("--fit-phase", help="A phase to fit to (repeatable), e.g. none."),
    ],
    campaign: Annotated[
        str | None, typer.Option("--campaign", help="The campaign (default: every one).")
    ] = None,
    fit_max_bytes: Annotated[
        int | None,
        typer.Option(
            "--fit-max-bytes", min=1, help="Fit to runs of at most this size (default 1 KiB)."
        ),
    ] = None,
    base_fabric: Annotated[
        str, typer.Option("--base-fabric", help="Network to calibrate the host of.")
    ] = "lab",
    fabric_out: Annotated[
        Path | None, typer.Option("--fabric-out", help="Write the calibrated fabric TOML here.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the calibration (and validation) JSON.")
    ] = None,
    validate: Annotated[
        bool,
        typer.Option(
            "--validate/--no-validate", help="Replay every run of the campaign on the result."
        ),
    ] = True,
    workdir: Annotated[Path, typer.Option("--workdir", help="Synthesised traces go here.")] = Path(
        "calibration"
    ),
    seed: Annotated[int, typer.Option("--seed")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Fits o, the per-link latency and Poisson/lognormal host detours to the fitting
    phases' small-message runs (coordinate descent of a quantile loss over replays), takes
    the eager threshold from the runs' protocol records, and prints each fitted value with
    its residual and the runs it came from."""
    from tailcast.calibration.from_campaign import FitSelection, calibrate_campaign
    from tailcast.calibration.from_campaign import validate as validate_on
    from tailcast.replay.fabric import load_fabric
    from tailcast.store import ResultsDir

    results = ResultsDir()
    selection = FitSelection(campaign, list(fit_phase))
    if fit_max_bytes is not None:
        selection = FitSelection(campaign, list(fit_phase), fit_max_bytes)
    cal = calibrate_campaign(
        results, load_fabric(base_fabric), selection, workdir.resolve(), seed, note
    )
    doc = cal.as_dict()
    lines = [*cal.provenance(), "each value, and the loss at its grid neighbours (residual):"]
    for key, profile in cal.result.profiles.items():
        values = [v for v, _ in profile]
        at = values.index(getattr(cal.result.fit, key))
        around = profile[max(at - 1, 0) : at + 2]
        lines.append(
            f"  {key} = {values[at]:g}: " + ", ".join(f"{v:g} -> {loss:.3f}" for v, loss in around)
        )
    if fabric_out is not None:
        fabric_out.write_text(cal.fabric_text)
        lines.append(f"fabric written to {fabric_out}")
    if validate:
        replayer = cal.replayer(None, workdir.resolve(), seed)
        checked = validate_on(replayer, results, cal)
        doc["validation"] = checked.as_dict()
        lines += checked.lines()
    if out is not None:
        out.write_text(json.dumps(doc, indent=2) + "\n")
    if as_json:
        emit_json(doc)
    else:
        for line in lines:
            echo(line)
