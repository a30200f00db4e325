"""Progress of the long steps (conversion, replay, fits, reports, campaigns): a rich bar
on stderr when stderr is a terminal, nothing at all otherwise, so logs and pipes get only
the results. `TAILCAST_PROGRESS=0` turns the bar off on a terminal too."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator

Advance = Callable[[float], None]


def _wanted() -> bool:
    return sys.stderr.isatty() and os.environ.get("TAILCAST_PROGRESS", "1") != "0"


@contextlib.contextmanager
def progress(description: str, total: float | None = None) -> Iterator[Advance]:
    """Yields `advance(n)`: n more units of `total` done (None: no known total, the bar
    pulses). The bar disappears when the block ends."""
    if not _wanted():
        yield lambda n: None
        return
    from rich.console import Console  # loaded only for a terminal
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = [
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    ]
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n: bar.advance(task, n)
