"""The figures a calibration is judged by (issue 40's bar), over any set of compared runs:
how many are within p50 ±15 % and p99 ±30 % (tailcast.lab.compare's tolerances), the
median KS distance, and per size class the median p99/p50 measured and simulated (the
tail's shape, which a replay without host noise gets as 1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from tailcast.lab.compare import RunComparison

BAR_WITHIN_FRACTION = 58 / 72  # issue 40: >= 58 of the 72 quickstart runs
BAR_MEDIAN_KS = 0.3
BAR_TAIL_RATIO = 0.30  # simulated median p99/p50 within 30 % of the measured one


@dataclass(frozen=True)
class SizeFigures:
    msg_size_bytes: int
    runs: int
    within: int
    median_ks: float
    tail_ratio_measured: float  # median over runs of p99/p50
    tail_ratio_simulated: float

    @property
    def tail_ratio_error(self) -> float:
        return self.tail_ratio_simulated / self.tail_ratio_measured - 1.0


@dataclass(frozen=True)
class Figures:
    label: str
    runs: int
    within: int
    median_ks: float
    sizes: list[SizeFigures]

    @property
    def meets_bar(self) -> bool:
        return (
            self.within >= BAR_WITHIN_FRACTION * self.runs
            and self.median_ks <= BAR_MEDIAN_KS
            and all(abs(s.tail_ratio_error) <= BAR_TAIL_RATIO for s in self.sizes)
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"meets_bar": self.meets_bar}

    def lines(self) -> list[str]:
        head = (
            f"{self.label}: {self.within} of {self.runs} runs within p50 ±15 % and p99 ±30 %, "
            f"median KS {self.median_ks:.2f}"
        )
        return [head] + [
            f"  {s.msg_size_bytes:>8d} B: {s.within:2d} of {s.runs:2d} within, median KS "
            f"{s.median_ks:.2f}, p99/p50 measured {s.tail_ratio_measured:.2f} simulated "
            f"{s.tail_ratio_simulated:.2f} ({s.tail_ratio_error:+.0%})"
            for s in self.sizes
        ]


def _ratio(p99: float, p50: float) -> float:
    return p99 / p50 if p50 > 0 else float("nan")


def figures(label: str, rows: Sequence[RunComparison]) -> Figures:
    sizes = []
    for size in sorted({r.msg_size_bytes for r in rows}):
        these = [r for r in rows if r.msg_size_bytes == size]
        sizes.append(
            SizeFigures(
                msg_size_bytes=size,
                runs=len(these),
                within=sum(r.within for r in these),
                median_ks=float(np.median([r.ks for r in these])),
                tail_ratio_measured=float(
                    np.median([_ratio(r.p99_measured_us, r.p50_measured_us) for r in these])
                ),
                tail_ratio_simulated=float(
                    np.median([_ratio(r.p99_simulated_us, r.p50_simulated_us) for r in these])
                ),
            )
        )
    return Figures(
        label=label,
        runs=len(rows),
        within=sum(r.within for r in rows),
        median_ks=float(np.median([r.ks for r in rows])) if rows else float("nan"),
        sizes=sizes,
    )
