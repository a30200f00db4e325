"""Issue 19 §5 at test scale: 3 000 mutated inputs per text reader give only typed errors,
none takes a second (bench/fuzz_bench.py runs the large counts)."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
from text_fuzz import READERS, fuzz  # bench/, shared with the fuzz bench


@pytest.mark.parametrize("reader", sorted(READERS))
def test_mutated_inputs_give_only_typed_errors(reader: str) -> None:
    counts = fuzz(reader, 3000)
    print(reader, counts.inputs, counts.accepted, dict(counts.typed_errors))
    assert dict(counts.crashes) == {}, counts.examples
    assert counts.slow == 0, counts.max_input_s
    # The mutations keep some inputs valid and make most invalid: both paths ran.
    assert counts.accepted > 0 and sum(counts.typed_errors.values()) > 0
