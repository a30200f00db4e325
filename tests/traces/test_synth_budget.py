"""`trace synth`'s memory check: the row counts it estimates before building are the rows the
generators then write, and the estimate is held against MemAvailable."""

from __future__ import annotations

from pathlib import Path

import pytest

from tailcast.errors import UsageError
from tailcast.traces.synth import (
    OSU_COLLECTIVES,
    WORKLOADS,
    WorkloadParams,
    osu_trace,
    poisson_trace,
    seed002_mix_trace,
    workload_trace,
)
from tailcast.traces.synth.budget import available_bytes, check_fits, estimate_bytes
from tailcast.traces.synth.mix import mix_rows
from tailcast.traces.synth.osu import osu_rows
from tailcast.traces.synth.poisson import poisson_rows
from tailcast.traces.synth.workloads import workload_rows


@pytest.mark.parametrize("collective", OSU_COLLECTIVES)
def test_osu_rows_and_list_elements_are_exact(collective: str) -> None:
    table, _ = osu_trace(collective, 6, [4, 64, 1024], iterations=3, warmup=2)
    rows, elements = osu_rows(collective, 6, 3, iterations=3, warmup=2)
    assert rows == table.num_rows
    listed = sum(
        len(v or ()) for name in ("send_counts", "recv_counts") for v in table[name].to_pylist()
    )
    assert elements == listed


def test_mix_rows_are_exact() -> None:
    assert mix_rows(12, 7) == seed002_mix_trace(12, messages=7).num_rows


@pytest.mark.parametrize("kind", WORKLOADS)
def test_workload_rows_bound_the_rows_written(kind: str) -> None:
    params = WorkloadParams(tasks=16, flows=300, flow_bytes=1000, seed=3)
    written = workload_trace(kind, params).num_rows
    estimate = workload_rows(kind, params)
    # Exact for the regular patterns; an irregular one's ranks without a send skip waitall.
    assert written <= estimate <= written + params.tasks


def test_poisson_rows_are_the_mean() -> None:
    # The counts are Poisson with mean `messages` whatever the rate (one message per µs).
    written = poisson_trace(16, 1e-3, messages=400, mean_bytes=1 << 20).num_rows
    assert abs(written - poisson_rows(16, 400)) < 0.05 * written


def test_memavailable_is_read_in_bytes(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:  8000 kB\nMemFree:  100 kB\nMemAvailable:  2048 kB\n")
    assert available_bytes(meminfo) == 2048 * 1024
    assert available_bytes(tmp_path / "none") is None
    assert isinstance(available_bytes(), int)  # this machine's /proc/meminfo


def test_check_fits_names_estimate_and_available(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemAvailable:   1000000 kB\n")  # 1.02 GB
    rows = 1_000_000_000 // 600  # 1.0 GB at ROW_BYTES
    check_fits("small", rows, meminfo=meminfo)
    with pytest.raises(UsageError) as err:
        check_fits("trace synth all2all -n 3000", 2 * rows, meminfo=meminfo)
    text = str(err.value)
    assert text.startswith("trace synth all2all -n 3000: 3,333,332 rows need about 2.0 GB")
    assert "1.0 GB available (MemAvailable" in text
    assert estimate_bytes(10, 4) == 10 * 600 + 4 * 16
