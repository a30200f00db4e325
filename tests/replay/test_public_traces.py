"""The public traces in ../shared/data/traces (OTF2, DUMPI, SimGrid TiT), converted to
tailcast Parquet by the importers, replay to completion on every bundled fabric."""

from __future__ import annotations

from pathlib import Path

import pytest

from tailcast.replay.fabric import bundled_fabrics, load_fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.traces.convert import convert

SOURCES = [
    "otf2/sst-macro-10rank/traces.otf2",
    "dumpi/testbgp.meta",
    "dumpi/testtrace.meta",
    "simgrid-tit/ti_traces_32_1",
    "simgrid-tit/actions_allgatherv.txt",
    "simgrid-tit/actions_allreduce.txt",
    "simgrid-tit/actions_alltoall.txt",
    "simgrid-tit/actions_alltoallv.txt",
    "simgrid-tit/actions_barrier.txt",
    "simgrid-tit/actions_bcast.txt",
    "simgrid-tit/actions_bcast_reduce_datatypes.txt",
    "simgrid-tit/actions_gather.txt",
    "simgrid-tit/actions_reducescatter.txt",
    "simgrid-tit/actions_waitall.txt",
    "simgrid-tit/actions_with_isend.txt",
]


@pytest.mark.parametrize("source", SOURCES)
def test_public_trace_replays_on_every_bundled_fabric(
    shared_data: Path, tmp_path: Path, source: str
) -> None:
    parquet = tmp_path / "trace.parquet"
    convert(shared_data / "traces" / source, parquet)
    totals = {}
    for name in bundled_fabrics():
        outcome = replay_trace(parquet, load_fabric(name), ReplayOptions())
        ends = outcome.ops.column("sim_end_ns").to_numpy()
        starts = outcome.ops.column("sim_start_ns").to_numpy()
        assert outcome.stats["actions"] == outcome.ops.num_rows
        assert (ends >= starts).all()
        assert outcome.total_time_ns == pytest.approx(ends.max(), abs=1.0)
        totals[name] = outcome.total_time_ns
    assert all(t > 0 for t in totals.values()), totals
