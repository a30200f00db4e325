from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from tailcast.analysis.bimodality import bimodality, dip_test, sarle_coefficient
from tailcast.errors import UsageError


def test_dip_of_a_two_point_sample_is_a_quarter() -> None:
    assert dip_test([0.0, 1.0])[0] == pytest.approx(0.25)
    dip, pval = dip_test(np.repeat([3.0, 7.0], 500))  # two equal point masses
    assert dip == pytest.approx(0.25)
    assert pval < 1e-6


def test_sarle_coefficient_of_normal_quantiles_is_one_third() -> None:
    n = 100_000
    q = scipy.stats.norm.ppf((np.arange(1, n + 1) - 0.5) / n)
    bc, skew, kurt = sarle_coefficient(q)
    assert bc == pytest.approx(1 / 3, abs=0.001)
    assert abs(skew) < 1e-9 and abs(kurt) < 0.01


def test_sarle_coefficient_of_uniform_is_five_ninths() -> None:
    n = 100_000
    bc, _, _ = sarle_coefficient((np.arange(1, n + 1) - 0.5) / n)
    assert bc == pytest.approx(5 / 9, abs=0.002)


def test_two_separated_modes_are_bimodal_and_one_normal_is_not() -> None:
    rng = np.random.default_rng(11)
    two = np.r_[rng.normal(1.0, 0.1, 1500), rng.normal(2.0, 0.1, 500)]
    res = bimodality(two)
    assert res.verdict == "bimodal"
    assert res.dip_pvalue < 0.01 and res.delta_bic > 10
    assert res.means_2[0] == pytest.approx(1.0, abs=0.02)
    assert res.means_2[1] == pytest.approx(2.0, abs=0.02)
    assert res.weights_2[0] == pytest.approx(0.75, abs=0.02)
    one = bimodality(rng.normal(5.0, 1.0, 2000))
    assert one.verdict == "unimodal" and one.delta_bic < 0


def test_too_few_values() -> None:
    with pytest.raises(UsageError):
        bimodality([1.0, 2.0, 3.0])
