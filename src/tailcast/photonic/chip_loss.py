"""Worst-case insertion loss of multi-layer photonic switch chips and the wavelengths that fit
the optical power budget (seed 004, "Multi-Layer Silicon Nanophotonic Network Chips for HPC",
§III, Eqs. 1-13, Tables I-II).

Every equation is linear in the radius-dependent quantities, so a design reduces to
    Ω(r) = A·φ_drop(r) + B·φ_thru(r) + C·L_sw(r)·ζ_ni + E·L_chip·ζ_ni + D   (dB)
with L_sw = 2(r + 50 µm)·R (§III-B, below Eq. 1). Per design:
- butterfly (Eqs. 1-4): S·Ω_matrix + 2ζ_chip + √2·L_chip·ζ_ni + 3S·ζ_bend + (S−2)·2ζ_vert;
- fat tree (Eqs. 5-8): (2S−1)·Ω_matrix' + 2ζ_chip + √2·L_chip·ζ_ni + 3S·ζ_bend
  + 2ζ_vert(S−1) + 4ζ_vert(S−1), Ω_matrix' = Ω_matrix + 2ζ_bend + 1.5·L_sw·ζ_ni;
- Clos (Eqs. 9-13): 2Ω_1 + Ω_2 + 4(m/2 + 1)ζ_vert + Ω_prop + 2ζ_chip with k = 2n − 1 and
  m = ⌈ports / n⌉ (whole switches; the seed writes 1000/n), Ω_prop as Eq. 3 with S = 3.
Stages of the butterfly and fat tree: the fewest with R^S ≥ ports (the seed's butterfly
list: radix 2, 4, 6, 10 → 10, 5, 4, 3 stages).

Wavelengths (§III-A item 3): the budget (Table I: 17.8 dBm switch maximum − (−17 dBm)
detector sensitivity = 34.8 dB) is shared by N wavelengths that each must overcome Ω, so
N_budget = ⌊10^((budget − Ω)/10)⌋; N_FSR(r) is the FSR_use limit; the design point is the
radius maximising min(N_budget, N_FSR).

The seed gives φ_drop, φ_thru (Fig. 3), N_FSR(r) (Figs. 8, 11, 14) and L_chip only as plots
or not at all; a design file supplies them in its `[ring]` table and `chip_edge_cm`.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from tailcast.errors import InputError


@dataclass(frozen=True)
class Devices:
    """Table II insertion losses used by Eqs. 1-13 (dB, dB/cm)."""

    ni_db_per_cm: float
    bend_db: float
    vert_db: float
    chip_db: float


@dataclass(frozen=True)
class LinearLoss:
    """Ω = A·φ_drop + B·φ_thru + C·L_sw·ζ_ni + E·L_chip·ζ_ni + D for one design."""

    topology: str
    label: str
    radix: int  # switch radix R (the L_sw term); Clos: n
    a_drop: float
    b_thru: float
    c_sw: float
    e_chip: float
    d_db: float

    def loss_db(
        self, drop: float, thru: float, radius_um: float, chip_cm: float, ni: float
    ) -> float:
        l_sw_cm = 2.0 * (radius_um + 50.0) * self.radix * 1e-4
        return (
            self.a_drop * drop
            + self.b_thru * thru
            + self.c_sw * l_sw_cm * ni
            + self.e_chip * chip_cm * ni
            + self.d_db
        )


def stages(radix: int, ports: int) -> int:
    """The fewest stages of radix-`radix` switches giving at least `ports` ports."""
    s, p = 1, radix
    while p < ports:
        s, p = s + 1, p * radix
    return s


def butterfly(radix: int, ports: int, d: Devices) -> LinearLoss:
    s = stages(radix, ports)
    const = 2 * d.chip_db + 3 * s * d.bend_db + (s - 2) * 2 * d.vert_db  # Eqs. 2-4
    return LinearLoss(
        "butterfly",
        f"{radix}-ary {s}-stage",
        radix,
        s,
        s * (2 * radix - 3),
        2 * s,
        math.sqrt(2),
        const,
    )


def fat_tree(radix: int, ports: int, d: Devices) -> LinearLoss:
    s = stages(radix, ports)
    n = 2 * s - 1  # switches crossed up and down (Eq. 5)
    const = n * 2 * d.bend_db + 2 * d.chip_db + 3 * s * d.bend_db + 6 * d.vert_db * (s - 1)
    return LinearLoss(
        "fat_tree",
        f"radix {radix}, {s} stages",
        radix,
        n,
        n * (2 * radix - 3),
        n * 3.5,
        math.sqrt(2),
        const,
    )


def clos(n: int, ports: int, d: Devices) -> LinearLoss:
    k = 2 * n - 1
    m = -(-ports // n)
    thru = 2 * (n - 2 + k - 1) + (2 * m - 3)  # Eqs. 10-12
    const = 4 * (m / 2 + 1) * d.vert_db + 2 * d.chip_db + 3 * 3 * d.bend_db  # Eqs. 9, 13, 3
    return LinearLoss("clos", f"n={n}, k={k}, m={m}", n, 3, thru, 0.0, math.sqrt(2), const)


def wavelengths_in_budget(budget_db: float, loss_db: float) -> int:
    return max(0, math.floor(10 ** ((budget_db - loss_db) / 10)))


@dataclass(frozen=True)
class Ring:
    """Radius-dependent inputs, one entry per radius (µm)."""

    radius_um: list[float]
    drop_db: list[float]
    thru_db: list[float]
    fsr_wavelengths: list[int]


@dataclass(frozen=True)
class ChipDesign:
    name: str
    ports: int
    budget_db: float
    devices: Devices
    designs: list[LinearLoss]
    chip_edge_cm: float | None
    ring: Ring | None
    source: dict[str, str]


@dataclass(frozen=True)
class Point:
    design: LinearLoss
    radius_um: float
    loss_db: float
    budget_wavelengths: int
    fsr_wavelengths: int

    @property
    def wavelengths(self) -> int:
        return min(self.budget_wavelengths, self.fsr_wavelengths)


def design_space(chip: ChipDesign) -> list[Point]:
    """Every design at every tabulated radius (empty without ring table or chip edge)."""
    if chip.ring is None or chip.chip_edge_cm is None:
        return []
    r, out = chip.ring, []
    for des in chip.designs:
        for i, radius in enumerate(r.radius_um):
            loss = des.loss_db(
                r.drop_db[i], r.thru_db[i], radius, chip.chip_edge_cm, chip.devices.ni_db_per_cm
            )
            out.append(
                Point(
                    des,
                    radius,
                    loss,
                    wavelengths_in_budget(chip.budget_db, loss),
                    r.fsr_wavelengths[i],
                )
            )
    return out


def best_per_topology(points: list[Point]) -> dict[str, Point]:
    best: dict[str, Point] = {}
    for p in points:
        cur = best.get(p.design.topology)
        if cur is None or p.wavelengths > cur.wavelengths:
            best[p.design.topology] = p
    return best


def _get(path: str, table: dict[str, Any], key: str, kind: type, where: str = "") -> Any:
    if key not in table:
        raise InputError(path, f"missing key {where}{key}")
    value = table[key]
    ok = isinstance(value, kind) or (
        kind is float and isinstance(value, int) and not isinstance(value, bool)
    )
    if not ok or isinstance(value, bool):
        raise InputError(path, f"{where}{key}: expected {kind.__name__}, got {value!r}")
    return value


def _ints(path: str, table: dict[str, Any], key: str) -> list[int]:
    values = table.get(key, [])
    if not isinstance(values, list) or not all(isinstance(v, int) and v >= 2 for v in values):
        raise InputError(
            path, f"topologies.{key}: expected a list of integers >= 2, got {values!r}"
        )
    return values


def _ring(path: str, t: dict[str, Any]) -> Ring:
    cols = {k: t.get(k) for k in ("radius_um", "drop_db", "thru_db", "fsr_wavelengths")}
    for key, col in cols.items():
        if not isinstance(col, list) or not col or not all(isinstance(v, int | float) for v in col):
            raise InputError(path, f"ring.{key}: expected a non-empty list of numbers")
    lens = {len(c) for c in cols.values() if isinstance(c, list)}
    if len(lens) != 1:
        raise InputError(
            path, "ring: radius_um, drop_db, thru_db and fsr_wavelengths differ in length"
        )
    return Ring(
        [float(v) for v in t["radius_um"]],
        [float(v) for v in t["drop_db"]],
        [float(v) for v in t["thru_db"]],
        [int(v) for v in t["fsr_wavelengths"]],
    )


def parse_chip_design(text: str, path: str) -> ChipDesign:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(path, f"not TOML: {e}") from e
    ports = _get(path, doc, "ports", int)
    loss = doc.get("loss")
    if not isinstance(loss, dict):
        raise InputError(path, "missing table [loss] (Table II device losses)")
    dev = Devices(
        *(
            float(_get(path, loss, k, float, "loss."))
            for k in ("ni_db_per_cm", "bend_db", "vert_db", "chip_db")
        )
    )
    topo = doc.get("topologies", {})
    designs = (
        [butterfly(r, ports, dev) for r in _ints(path, topo, "butterfly_radix")]
        + [fat_tree(r, ports, dev) for r in _ints(path, topo, "fat_tree_radix")]
        + [clos(n, ports, dev) for n in _ints(path, topo, "clos_n")]
    )
    edge = doc.get("chip_edge_cm")
    if edge is not None:
        edge = float(_get(path, doc, "chip_edge_cm", float))
    ring = _ring(path, doc["ring"]) if "ring" in doc else None
    source = {k: str(v) for k, v in doc.get("source", {}).items()}
    return ChipDesign(
        str(doc.get("name", Path(path).stem)),
        ports,
        float(_get(path, doc, "budget_db", float)),
        dev,
        designs,
        edge,
        ring,
        source,
    )


def bundled_chip_designs() -> dict[str, str]:
    folder = resources.files("tailcast.photonic") / "chips"
    return {
        e.name.removesuffix(".toml"): e.read_text()
        for e in sorted(folder.iterdir(), key=lambda e: e.name)
        if e.name.endswith(".toml")
    }


def load_chip_design(spec: str | Path) -> ChipDesign:
    """A chip design from a TOML path or a bundled name (`seed004-1000port`)."""
    path = Path(spec)
    if path.suffix == ".toml" or path.exists():
        if not path.exists():
            raise InputError(path, "no such chip design file")
        return parse_chip_design(path.read_text(), str(path))
    bundled = bundled_chip_designs()
    if str(spec) not in bundled:
        raise InputError(
            str(spec), f"not a chip design file or bundled design ({', '.join(bundled)})"
        )
    return parse_chip_design(bundled[str(spec)], f"<bundled {spec}>")


def loss_for_wavelengths(budget_db: float, wavelengths: int) -> tuple[float, float]:
    """The worst-case losses (lo, hi] for which exactly `wavelengths` fit the budget."""
    return budget_db - 10 * math.log10(wavelengths + 1), budget_db - 10 * math.log10(wavelengths)
