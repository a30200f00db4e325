"""The blocks a report section is made of (tables and figures with their provenance) and
the builder sections use to make them. report.py assembles the sections into the page;
sections of their own concern live in their own modules (report_photonic_switch.py)."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tailcast.analysis import plots
from tailcast.analysis.report_numbers import format_table
from tailcast.analysis.sources import tables_in
from tailcast.store import Catalog


@dataclass
class Provenance:
    query: str | None
    files: list[str]


@dataclass
class TableBlock:
    title: str
    columns: list[str]
    rows: list[list[str]]
    provenance: Provenance


@dataclass
class FigureBlock:
    title: str
    src: str  # data URI or a path relative to index.html
    png: str
    svg: str
    provenance: Provenance
    wide: bool = False  # multi-panel figures get the page's full width


@dataclass
class Section:
    ident: str
    title: str
    notes: list[str] = field(default_factory=list)
    tables: list[TableBlock] = field(default_factory=list)
    figures: list[FigureBlock] = field(default_factory=list)


class SectionBuilder:
    """What a section needs: the catalog, where figures go, and table / figure blocks with
    their provenance."""

    def __init__(self, cat: Catalog, out: Path, embed: bool) -> None:
        self.cat, self.out, self.embed = cat, out, embed
        self.plot_dir = out / "plots"

    def prov(self, query: str | None, tables: Sequence[str] | None = None) -> Provenance:
        names = list(tables) if tables is not None else tables_in(query or "")
        files = [str(p) for n in names for p in self.cat.tables[n].files]
        return Provenance(query, files)

    def table(
        self,
        title: str,
        rows: list[dict[str, Any]],
        prov: Provenance,
        columns: Sequence[str] = (),
        latency: bool = False,
    ) -> TableBlock:
        """A table of `rows` in `columns` (default: the first row's keys); `latency`: its
        tail statistics (mean, p99, …) are latencies in µs (report_numbers)."""
        headers, cells = format_table(
            list(columns) or (list(rows[0]) if rows else []), rows, latency
        )
        return TableBlock(title, headers, cells, prov)

    def figure(self, files: plots.PlotFiles, prov: Provenance, wide: bool = False) -> FigureBlock:
        png_rel = files.png.relative_to(self.out).as_posix()
        svg_rel = files.svg.relative_to(self.out).as_posix()
        src = png_rel
        if self.embed:
            src = "data:image/png;base64," + base64.b64encode(files.png.read_bytes()).decode()
        return FigureBlock(files.title, src, png_rel, svg_rel, prov, wide)
