"""OTF2 (Score-P) import: the user-facing entry. The OTF2 reader is C underneath, so the
decoding (tailcast.traces.otf2_decode) runs in a child process under a timeout and a memory
limit (tailcast.traces.otf2_sandbox)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tailcast.errors import InputError
from tailcast.traces import otf2_sandbox

if TYPE_CHECKING:
    import pyarrow as pa

    from tailcast.traces.io import TraceMeta


def import_otf2(
    path: Path, *, timeout_s: float | None = None, memory_mb: float | None = None
) -> tuple[pa.Table, TraceMeta]:
    """Reads an OTF2 archive given its anchor file (`traces.otf2`).

    The decoding runs in a child process (tailcast.traces.otf2_sandbox) under a wall-clock
    timeout and an address-space limit, so a loop or a runaway allocation inside the OTF2 C
    library ends as an InputError naming the file. Both limits default to values scaled
    from the archive size; `timeout_s` / `memory_mb` (MiB) or the environment variables
    TAILCAST_OTF2_TIMEOUT_S / TAILCAST_OTF2_MEMORY_MB override them."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such OTF2 anchor file")
    return otf2_sandbox.run(path, timeout_s=timeout_s, memory_mb=memory_mb)
