"""The design-space plot of `tailcast replay budget --plot` (seed 004 Figs. 8, 11, 14 style):
per topology, the wavelengths that fit the power budget against ring radius for each switch
configuration, with the FSR_use limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.figure import Figure


def plot_budget(report: dict[str, Any], out: Path) -> None:
    """One panel per topology; `report` is `budget_report`'s (it must have points)."""
    topologies = list(dict.fromkeys(p["topology"] for p in report["points"]))
    fig = Figure(figsize=(4.2 * len(topologies), 3.4))
    axes = fig.subplots(1, len(topologies), squeeze=False)[0]
    for ax, topo in zip(axes, topologies, strict=True):
        mine = [p for p in report["points"] if p["topology"] == topo]
        for label in dict.fromkeys(p["label"] for p in mine):
            pts = [p for p in mine if p["label"] == label]
            ax.plot(
                [p["radius_um"] for p in pts], [p["budget_wavelengths"] for p in pts], label=label
            )
        first = [p for p in mine if p["label"] == mine[0]["label"]]
        ax.plot(
            [p["radius_um"] for p in first],
            [p["fsr_wavelengths"] for p in first],
            "k--",
            label="FSR_use limit",
        )
        ax.set_title(topo)
        ax.set_xlabel("ring radius (µm)")
        ax.set_ylabel("wavelengths")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out)
