"""`tailcast trace convert`'s work, without Typer: the Typer command (cli.trace) and the
console script's direct path for plain arguments (tailcast.__main__) both run it."""

from pathlib import Path

from tailcast.cli._common import note


def run_convert(src: Path, dst: Path, to: str = "parquet", fmt: str | None = None) -> None:
    """Converts `src` to `dst` with a progress bar; notes what was not converted."""
    from tailcast.cli.progress import progress
    from tailcast.traces.convert import convert

    with progress("convert (rows)") as advance:
        meta = convert(src, dst, to=to, fmt=fmt, progress=advance)
    for name, count in sorted(meta.unsupported.items()):
        note(f"warning: {count} unsupported call(s) {name} not converted")
    note(f"wrote {dst} ({meta.ranks} ranks, from {meta.source_format})")
    if to == "tit" and any(c.isspace() for c in str(dst.resolve())):
        # SimGrid reads the listed paths whole, but smpirun splits -replay's own path.
        note(f"note: smpirun splits `-replay {dst}` at spaces: give it a link without spaces")
