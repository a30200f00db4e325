"""Seed 004's insertion-loss model of multi-layer photonic switch chips (Eqs. 1-13,
Tables I-II) and `tailcast replay budget`. The ring table below is test input made up for
the arithmetic, not data from the seed (which plots it only, Fig. 3)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tailcast.cli.main import app
from tailcast.errors import InputError, UsageError
from tailcast.photonic.chip_loss import (
    Devices,
    best_per_topology,
    butterfly,
    clos,
    design_space,
    fat_tree,
    load_chip_design,
    parse_chip_design,
    stages,
    wavelengths_in_budget,
)

TABLE_II = Devices(ni_db_per_cm=0.1, bend_db=0.005, vert_db=0.1, chip_db=0.5)
DROP, THRU, R_UM, CHIP_CM = 1.0, 0.05, 10.0, 2.0


def _matrix(radix: int) -> float:
    """Eq. 1 with L_sw = 2(r + 50 um)R, in cm for the dB/cm loss."""
    l_sw = 2 * (R_UM + 50) * radix * 1e-4
    return DROP + THRU * (2 * radix - 3) + 2 * l_sw * 0.1


def test_butterfly_stages_are_the_seeds() -> None:
    # §III-C: 2, 4, 6 and 10-port switches need 10, 5, 4 and 3 stages for 1000 ports.
    assert [stages(r, 1000) for r in (2, 4, 6, 10)] == [10, 5, 4, 3]


def test_butterfly_loss_follows_eqs_1_to_4() -> None:
    s = 5
    prop = math.sqrt(2) * CHIP_CM * 0.1 + 3 * s * 0.005  # Eq. 3
    couplers = (s - 2) * 2 * 0.1  # Eq. 4
    want = s * _matrix(4) + 2 * 0.5 + prop + couplers  # Eq. 2
    got = butterfly(4, 1000, TABLE_II).loss_db(DROP, THRU, R_UM, CHIP_CM, 0.1)
    assert got == pytest.approx(want, rel=1e-12)


def test_fat_tree_loss_follows_eqs_5_to_8() -> None:
    s, radix = 4, 6
    l_sw = 2 * (R_UM + 50) * radix * 1e-4
    matrix2 = _matrix(radix) + 2 * 0.005 + 1.5 * l_sw * 0.1  # Eq. 8
    prop = math.sqrt(2) * CHIP_CM * 0.1 + 3 * s * 0.005  # Eq. 6
    couplers = 2 * 0.1 * (s - 1) + 4 * 0.1 * (s - 1)  # Eq. 7
    want = (2 * s - 1) * matrix2 + 2 * 0.5 + prop + couplers  # Eq. 5
    got = fat_tree(radix, 1000, TABLE_II).loss_db(DROP, THRU, R_UM, CHIP_CM, 0.1)
    assert got == pytest.approx(want, rel=1e-12)


def test_clos_loss_follows_eqs_9_to_13() -> None:
    n = 32
    k, m = 2 * n - 1, 32  # k = 2n - 1; m = 1000 / 32 rounded up to whole switches
    o1 = (n - 2 + k - 1) * THRU + DROP  # Eq. 10 (= Eq. 12)
    o2 = (2 * m - 3) * THRU + DROP  # Eq. 11
    vert = 4 * (m / 2 + 1) * 0.1  # Eq. 13
    prop = math.sqrt(2) * CHIP_CM * 0.1 + 3 * 3 * 0.005  # Eq. 3 with S = 3
    want = o1 + o2 + o1 + vert + prop + 2 * 0.5  # Eq. 9
    got = clos(n, 1000, TABLE_II).loss_db(DROP, THRU, R_UM, CHIP_CM, 0.1)
    assert got == pytest.approx(want, rel=1e-12)


def test_wavelengths_share_the_budget() -> None:
    # 34.8 dB budget (Table I); a loss of 16.25 dB leaves 18.55 dB = 71.6 wavelengths.
    assert wavelengths_in_budget(34.8, 16.25) == 71
    assert wavelengths_in_budget(34.8, 34.8) == 1
    assert wavelengths_in_budget(34.8, 40.0) == 0


DESIGN = """
ports = 1000
budget_db = 34.8
chip_edge_cm = 2.0
[loss]
ni_db_per_cm = 0.1
bend_db = 0.005
vert_db = 0.1
chip_db = 0.5
[topologies]
butterfly_radix = [2, 4]
clos_n = [32]
[ring]
radius_um = [5.0, 10.0, 20.0]
drop_db = [2.0, 1.0, 0.8]
thru_db = [0.02, 0.05, 0.2]
fsr_wavelengths = [20, 60, 200]
"""


def test_the_design_point_maximises_the_smaller_limit() -> None:
    chip = parse_chip_design(DESIGN, "d.toml")
    points = design_space(chip)
    assert len(points) == 3 * 3
    for p in points:
        assert p.wavelengths == min(p.fsr_wavelengths, wavelengths_in_budget(34.8, p.loss_db))
    best = best_per_topology(points)
    bf = [p for p in points if p.design.topology == "butterfly"]
    assert best["butterfly"].wavelengths == max(p.wavelengths for p in bf)
    assert set(best) == {"butterfly", "clos"}


def test_budget_command_on_the_bundled_and_a_complete_design(tmp_path: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(app, ["replay", "budget", "--json"])
    assert out.exit_code == 0, out.output
    r = json.loads(out.output)
    # The seed's text lacks the radius-dependent inputs: no invented design space.
    assert r["missing"] == ["chip_edge_cm", "ring"] and r["points"] == []
    lo, hi = r["table_iii_loss_db"]["butterfly"]
    assert (
        wavelengths_in_budget(34.8, hi - 1e-9) == 71
        and wavelengths_in_budget(34.8, lo + 1e-9) == 71
    )
    f = tmp_path / "d.toml"
    f.write_text(DESIGN)
    out = runner.invoke(app, ["replay", "budget", str(f)])
    assert out.exit_code == 0, out.output
    assert "best butterfly:" in out.output and "best clos:" in out.output
    png = tmp_path / "space.png"
    out = runner.invoke(app, ["replay", "budget", str(f), "--plot", str(png)])
    assert out.exit_code == 0, out.output
    assert png.read_bytes()[:4] == b"\x89PNG"
    # The bundled design has nothing to plot: a usage error naming what is missing.
    out = runner.invoke(app, ["replay", "budget", "--plot", str(png)])
    assert isinstance(out.exception, UsageError)
    assert "lacks chip_edge_cm, ring" in str(out.exception)


def test_a_bad_design_names_the_key(tmp_path: Path) -> None:
    f = tmp_path / "bad.toml"
    f.write_text(DESIGN.replace("budget_db = 34.8", 'budget_db = "high"'))
    with pytest.raises(InputError, match=r"budget_db: expected float"):
        load_chip_design(f)
    f.write_text(DESIGN.replace("thru_db = [0.02, 0.05, 0.2]", "thru_db = [0.02]"))
    with pytest.raises(InputError, match=r"ring: .* differ in length"):
        load_chip_design(f)
