"""Open MPI's parameters from `ompi_info --parsable` (collectors/ompi_params.py) and the
protocol record made of them (collectors/mpi_protocol.py): on outputs captured from this
machine's Open MPI 4.1.4 (tests/data/ompi-4.1.4) and on the live ompi_info."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tailcast.collectors.mpi_protocol import MpiProtocol, open_mpi_protocol, run_columns
from tailcast.collectors.ompi_params import OmpiInfo, mca_env, parse_ompi_info, read_ompi_params
from tailcast.errors import StoreError

DATA = Path(__file__).resolve().parents[1] / "data" / "ompi-4.1.4"


def _captured(btl: str = "btl-all-level9.txt") -> OmpiInfo:
    info = parse_ompi_info((DATA / btl).read_text())
    info.update(parse_ompi_info((DATA / "pml-all-level9.txt").read_text()))
    return info


def test_parses_values_sources_and_components() -> None:
    info = _captured()
    assert info.version == "4.1.4"
    assert info.components["btl"] == ["ofi", "openib", "tcp", "vader", "self"]
    assert set(info.components["pml"]) == {"v", "cm", "ob1", "ucx", "monitoring"}
    tcp = info.params["btl_tcp_eager_limit"]
    assert (tcp.value, tcp.source, tcp.type, tcp.component) == ("65536", "default", "size_t", "tcp")
    assert info.params["btl_vader_eager_limit"].value == "4096"
    assert info.params["btl_self_eager_limit"].value == "1024"
    assert info.params["btl_tcp_rndv_eager_limit"].value == "65536"
    # a source holding colons of its own stays whole
    assert info.params["btl"].source == "file (/etc/openmpi/openmpi-mca-params.conf:68)"
    assert info.params["pml"].value == "^ucx"
    assert info.params["pml_ucx_priority"].value == "51"


def test_environment_values_are_the_runs() -> None:
    info = _captured("btl-all-level9-tcp-eager4096.txt")
    assert info.params["btl_tcp_eager_limit"].value == "4096"
    assert info.params["btl_tcp_eager_limit"].source == "environment"
    assert info.params["btl"].value == "self,tcp"


def test_launcher_mca_options_become_variables() -> None:
    args = ["--mca", "btl_tcp_eager_limit", "4096", "--bind-to", "none", "-mca", "btl", "tcp"]
    assert mca_env(args) == {"OMPI_MCA_btl_tcp_eager_limit": "4096", "OMPI_MCA_btl": "tcp"}
    assert mca_env(["--mca", "btl"]) == {}


def test_protocol_of_the_default_configuration() -> None:
    """pml ^ucx leaves ob1; btl ^uct,openib,ofi leaves tcp, vader, self: tcp across nodes
    (the only network BTL), vader (exclusivity 65536 > 100) on one node."""
    info = _captured()
    across = open_mpi_protocol(info, nodes=4, ranks=4, env={})
    assert (across.library, across.pml, across.transport) == ("Open MPI 4.1.4", "ob1", "tcp")
    assert (across.inter_node, across.intra_node) == ("tcp", "vader")
    assert across.eager_limits == {"tcp": 65536, "vader": 4096}
    assert across.notes == []
    assert across.params["btl_tcp_eager_limit"] == "65536 (default)"
    one_node = open_mpi_protocol(info, nodes=1, ranks=2, env={})
    assert one_node.transport == "vader"
    mixed = open_mpi_protocol(info, nodes=2, ranks=4, env={})
    assert mixed.transport == "tcp"
    assert any("pairs on one node use vader" in n for n in mixed.notes)


def test_protocol_with_btl_self_tcp() -> None:
    info = _captured("btl-all-level9-tcp-eager4096.txt")
    p = open_mpi_protocol(info, nodes=1, ranks=2, env={})
    assert (p.transport, p.intra_node, p.eager_limits) == ("tcp", "tcp", {"tcp": 4096})
    assert run_columns(p)["mpi_transport"] == "ob1/tcp"


def test_record_round_trip_and_unknown() -> None:
    p = open_mpi_protocol(_captured(), nodes=2, ranks=2, env={})
    assert MpiProtocol.from_json(p.to_json()) == p
    assert run_columns(None) == {"mpi_transport": None, "protocol_json": None}
    with pytest.raises(StoreError, match="protocol_json"):
        MpiProtocol.from_json('{"pml": "ob1"}')


@pytest.mark.mpi
def test_live_ompi_info_reads_the_runs_environment(mpi_available: None) -> None:
    if shutil.which("ompi_info") is None:
        pytest.skip("no ompi_info")
    live = read_ompi_params()
    captured = _captured()
    for name in ("btl_tcp_eager_limit", "btl_vader_eager_limit", "btl_self_eager_limit"):
        assert live.params[name].value == captured.params[name].value
    assert live.version == captured.version
    tuned = read_ompi_params(mca_env(["--mca", "btl_tcp_eager_limit", "4096"]))
    assert tuned.params["btl_tcp_eager_limit"].value == "4096"
    assert tuned.params["btl_tcp_eager_limit"].source == "environment"


def test_agent_records_no_open_mpi_protocol_for_another_library() -> None:
    from tailcast.agent.protocol import ProtocolRecorder

    said: list[str] = []
    recorder = ProtocolRecorder([], said.append)
    assert recorder(2, 2, "MPICH Version: 4.0.2 MPICH Release date: ...") is None
    assert said == []  # ompi_info was not even asked


def test_pml_selection_rules(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With ucx let in, UCX (priority 51) wins where a device matches pml_ucx_devices and
    declines elsewhere, leaving ob1; an include list names the only candidates."""
    import dataclasses

    from tailcast.collectors import mpi_protocol

    info = _captured()

    def with_params(**values: str) -> OmpiInfo:
        params = dict(info.params)
        for name, value in values.items():
            params[name] = dataclasses.replace(params[name], value=value, source="environment")
        return OmpiInfo(info.version, info.components, params)

    monkeypatch.setattr(mpi_protocol, "INFINIBAND", tmp_path / "no-infiniband")
    quiet = open_mpi_protocol(with_params(pml=""), nodes=2, ranks=2, env={})
    assert quiet.pml == "ob1" and "no device matches 'mlx*'" in quiet.notes[0]
    anywhere = open_mpi_protocol(
        with_params(pml="", pml_ucx_devices="any"), 2, 2, {"UCX_RNDV_THRESH": "16k"}
    )
    assert (anywhere.pml, anywhere.transport, anywhere.ucx_rndv_thresh) == ("ucx", "ucx", "16k")
    assert run_columns(anywhere)["mpi_transport"] == "ucx"
    (tmp_path / "ib" / "mlx5_0").mkdir(parents=True)
    monkeypatch.setattr(mpi_protocol, "INFINIBAND", tmp_path / "ib")
    assert open_mpi_protocol(with_params(pml=""), 2, 2, {}).pml == "ucx"
    assert open_mpi_protocol(with_params(pml="ob1"), 2, 2, {}).pml == "ob1"
