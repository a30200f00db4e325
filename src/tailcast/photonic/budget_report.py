"""What `tailcast replay budget` shows: per chip design the loss as a linear form of the
ring losses (seed 004 Eqs. 1-13), the design space over the tabulated ring radii with the
wavelengths that fit the budget and the FSR, the best radius per topology, and the loss
each wavelength count of the seed's Table III implies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tailcast.photonic.chip_loss import (
    best_per_topology,
    design_space,
    load_chip_design,
    loss_for_wavelengths,
)

# Seed 004 Table III.
TABLE_III = {"butterfly": 71, "fat_tree": 23, "clos": 19}


def budget_report(spec: str) -> dict[str, Any]:
    chip = load_chip_design(spec)
    points = design_space(chip)
    missing = [
        k for k, v in (("chip_edge_cm", chip.chip_edge_cm), ("ring", chip.ring)) if v is None
    ]
    return {
        "design": chip.name,
        "ports": chip.ports,
        "budget_db": chip.budget_db,
        "missing": missing,
        "designs": [
            {
                "topology": d.topology,
                "label": d.label,
                "drop": d.a_drop,
                "thru": d.b_thru,
                "l_sw": d.c_sw,
                "l_chip": d.e_chip,
                "const_db": d.d_db,
            }
            for d in chip.designs
        ],
        "points": [
            {
                "topology": p.design.topology,
                "label": p.design.label,
                "radius_um": p.radius_um,
                "loss_db": p.loss_db,
                "budget_wavelengths": p.budget_wavelengths,
                "fsr_wavelengths": p.fsr_wavelengths,
                "wavelengths": p.wavelengths,
            }
            for p in points
        ],
        "best": {
            t: {"label": p.design.label, "radius_um": p.radius_um, "wavelengths": p.wavelengths}
            for t, p in best_per_topology(points).items()
        },
        "table_iii_loss_db": {
            t: list(loss_for_wavelengths(chip.budget_db, n)) for t, n in TABLE_III.items()
        },
    }


def print_budget(r: dict[str, Any], echo: Callable[[str], None]) -> None:
    echo(f"chip design {r['design']}: {r['ports']} ports, budget {r['budget_db']} dB")
    echo(
        "worst-case loss (dB) = drop*phi_drop + thru*phi_thru + l_sw*L_sw*z_ni"
        " + l_chip*L_chip*z_ni + const"
    )
    echo(
        f"  {'topology':<10}{'design':<22}{'drop':>6}{'thru':>7}"
        f"{'l_sw':>7}{'l_chip':>8}{'const':>8}"
    )
    for d in r["designs"]:
        echo(
            f"  {d['topology']:<10}{d['label']:<22}{d['drop']:>6.0f}{d['thru']:>7.0f}"
            f"{d['l_sw']:>7.1f}{d['l_chip']:>8.3f}{d['const_db']:>8.3f}"
        )
    if r["missing"]:
        echo(
            f"no design space: the design lacks {', '.join(r['missing'])}"
            " (seed 004 gives them only as figures)"
        )
    else:
        echo(
            f"  {'topology':<10}{'design':<22}{'r um':>6}{'loss':>8}"
            f"{'N_budget':>9}{'N_fsr':>6}{'N':>5}"
        )
        for p in r["points"]:
            echo(
                f"  {p['topology']:<10}{p['label']:<22}{p['radius_um']:>6.1f}{p['loss_db']:>8.2f}"
                f"{p['budget_wavelengths']:>9}{p['fsr_wavelengths']:>6}{p['wavelengths']:>5}"
            )
        for t, b in r["best"].items():
            echo(
                f"best {t}: {b['label']} at r = {b['radius_um']} um, {b['wavelengths']} wavelengths"
            )
    for t, (lo, hi) in r["table_iii_loss_db"].items():
        echo(
            f"Table III {t}: {TABLE_III[t]} wavelengths needs a worst-case loss"
            f" in ({lo:.2f}, {hi:.2f}] dB"
        )
