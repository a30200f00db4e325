"""What a trace file says about itself (Parquet key-value metadata, prefixed `tailcast.`):
ranks, application, source_format, clock, and `unsupported` (JSON {call name: count} of
calls an importer could not map). Read from the footer alone, without pyarrow."""

from __future__ import annotations

import json
from pathlib import Path

from tailcast.errors import InputError
from tailcast.store.footer import check_file

TABLE = "traces"
_PREFIX = "tailcast."
# TraceMeta's fields, in the order of its constructor (compared and shown in that order).
_FIELDS = ("ranks", "application", "source_format", "clock", "unsupported", "extra")


class TraceMeta:
    """What a trace file says about itself. A plain class, not a dataclass: dataclasses
    (and inspect, which it imports) cost over 20 M instructions of the start-up of
    `trace convert`, which builds one."""

    def __init__(
        self,
        ranks: int,
        application: str = "",
        source_format: str = "tailcast",
        clock: str = "unknown",  # e.g. CLOCK_MONOTONIC ns, synthetic, otf2 ticks→ns
        unsupported: dict[str, int] | None = None,
        extra: dict[str, str] | None = None,
    ) -> None:
        self.ranks = ranks
        self.application = application
        self.source_format = source_format
        self.clock = clock
        self.unsupported: dict[str, int] = {} if unsupported is None else unsupported
        self.extra: dict[str, str] = {} if extra is None else extra

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in _FIELDS)

    def __eq__(self, other: object) -> bool:
        if type(other) is not TraceMeta:
            return NotImplemented
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in _FIELDS)
        return f"TraceMeta({fields})"

    def to_kv(self) -> dict[str, str]:
        kv = dict(self.extra)
        kv.update(
            ranks=str(self.ranks),
            application=self.application,
            source_format=self.source_format,
            clock=self.clock,
            unsupported=json.dumps(self.unsupported, sort_keys=True),
        )
        return kv

    @classmethod
    def from_kv(cls, path: Path, kv: dict[bytes, bytes]) -> TraceMeta:
        # Foreign or damaged bytes decode with U+FFFD: the checks below then name the key.
        text = {
            k.decode(errors="replace")[len(_PREFIX) :]: v.decode(errors="replace")
            for k, v in kv.items()
            if k.startswith(_PREFIX.encode())
        }
        try:
            ranks = int(text.pop("ranks"))
            unsupported = {
                str(k): int(v) for k, v in json.loads(text.pop("unsupported", "{}")).items()
            }
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            raise InputError(
                path, f"trace metadata lacks valid ranks/unsupported ({exc})"
            ) from None
        meta = cls(
            ranks=ranks,
            application=text.pop("application", ""),
            source_format=text.pop("source_format", ""),
            clock=text.pop("clock", "unknown"),
            unsupported=unsupported,
        )
        for internal in ("table", "schema_version"):
            text.pop(internal, None)
        meta.extra = text
        return meta


def read_meta(path: Path) -> TraceMeta:
    """The metadata of a trace file, after checking it is a tailcast trace."""
    footer = check_file(Path(path), TABLE)
    return TraceMeta.from_kv(Path(path), footer.metadata)
