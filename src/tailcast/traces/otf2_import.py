"""OTF2 (Score-P) import: the user-facing entry. The archive is decoded in this process by
tailcast's own reader (tailcast.traces.otf2_decode over tailcast._core.read_otf2), which
checks every length and count it reads against the file's bytes: a damaged archive is an
InputError naming the file, not a crash, a hang or a runaway allocation."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tailcast.traces.otf2_decode import decode_otf2

if TYPE_CHECKING:
    import pyarrow as pa

    from tailcast.traces.io import TraceMeta


def import_otf2(path: Path) -> tuple[pa.Table, TraceMeta]:
    """Reads an OTF2 archive given its anchor file (`traces.otf2`)."""
    return decode_otf2(Path(path))
