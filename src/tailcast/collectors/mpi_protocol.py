"""The MPI library's point-to-point protocol in a run: which transport carried the run's
messages and the limits that decide eager or rendezvous, as the agent records it with each
run (`runs.protocol_json`, `runs.mpi_transport`).

Open MPI (from `ompi_info`, collectors/ompi_params.py) picks, per the Open MPI 4.1 MCA
rules:
- the PML: the components the `pml` parameter lets in (`a,b` includes, `^a,b` excludes),
  highest priority first; UCX (`pml_ucx_priority` 51 > ob1's 20) declines without a device
  matching `pml_ucx_devices` (`mlx*`; `any` takes any, TCP too) under /sys/class/infiniband,
  and so do the RDMA BTLs (openib, uct, ofi, usnic) below; the cm PML (MTL-based) is not
  modelled.
- with ob1, per pair of ranks the BTLs the `btl` parameter lets in that reach the peer,
  the highest `btl_X_exclusivity` winning (bml/r2 keeps only those for eager sends): for
  ranks on different nodes a network BTL (tcp unless an RDMA one is usable), for ranks on
  one node shared memory (vader, 65536) over tcp (100).
A run across nodes with more than one rank on a node mixes both; the record then names
the inter-node transport (what carries the messages that cross the network) and says so
in its notes. How a replay turns the record into a threshold: replay/eager_limit.py.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tailcast.collectors.ompi_params import McaParam, OmpiInfo
from tailcast.errors import StoreError

RDMA_BTLS = ("openib", "uct", "ofi", "usnic")  # need RDMA hardware to be selected
SHARED_MEMORY_BTLS = ("vader", "sm", "smcuda")
INFINIBAND = Path("/sys/class/infiniband")


@dataclass(frozen=True)
class MpiProtocol:
    library: str  # "Open MPI 4.1.4"
    pml: str  # ob1 | ucx | unknown
    transport: str  # what carried the run's messages: tcp, vader, ucx, ... or unknown
    inter_node: str | None = None  # ob1: the BTL between ranks on different nodes
    intra_node: str | None = None  # ob1: the BTL between ranks on one node
    eager_limits: dict[str, int] = field(default_factory=dict)  # btl -> btl_X_eager_limit
    rndv_eager_limits: dict[str, int] = field(default_factory=dict)  # btl_X_rndv_eager_limit
    ucx_rndv_thresh: str | None = None  # UCX_RNDV_THRESH as set (UCX's default: auto)
    params: dict[str, str] = field(default_factory=dict)  # deciding ones: "value (source)"
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> MpiProtocol:
        """A stored record (StoreError: not one)."""
        try:
            return cls(**json.loads(text))
        except (TypeError, json.JSONDecodeError) as exc:
            raise StoreError(f"runs.protocol_json is not an MPI protocol record ({exc})") from exc


def _selected(available: list[str], selection: str) -> list[str]:
    """The components an MCA selection string lets in (empty: all)."""
    names = [n.strip() for n in selection.lstrip("^").split(",") if n.strip()]
    if not selection.strip():
        return list(available)
    if selection.strip().startswith("^"):
        return [c for c in available if c not in names]
    return [c for c in names if c in available]


def _int(params: dict[str, McaParam], name: str) -> int | None:
    p = params.get(name)
    try:
        return int(p.value) if p is not None else None
    except ValueError:
        return None


def _rdma_devices(pattern: str = "*") -> list[str]:
    if not INFINIBAND.is_dir():
        return []
    return sorted(p.name for p in INFINIBAND.glob(pattern))


def _pml(info: OmpiInfo, notes: list[str]) -> str:
    params = info.params
    selection = params["pml"].value if "pml" in params else ""
    allowed = _selected(info.components.get("pml", []), selection)
    if "ucx" in allowed:
        devices = params.get("pml_ucx_devices")
        pattern = devices.value if devices is not None else "mlx*"
        wanted = [p.strip() for p in pattern.split(",") if p.strip()]
        if "any" in wanted or any(_rdma_devices(p) for p in wanted):  # any: UCX's tcp too
            return "ucx"
        notes.append(f"pml ucx allowed but no device matches {pattern!r}: it declines")
    if "ob1" in allowed:
        return "ob1"
    notes.append(f"pml selection {selection!r} leaves neither ob1 nor ucx")
    return "unknown"


def _btl_for(candidates: list[str], params: dict[str, McaParam]) -> str | None:
    ranked = sorted(candidates, key=lambda b: -(_int(params, f"btl_{b}_exclusivity") or 0))
    return ranked[0] if ranked else None


def open_mpi_protocol(info: OmpiInfo, nodes: int, ranks: int, env: dict[str, str]) -> MpiProtocol:
    """What an Open MPI run of `ranks` ranks on `nodes` distinct nodes used, from the
    parameters its ranks saw (`info`, read with the run's environment `env`)."""
    params, notes = info.params, list[str]()
    pml = _pml(info, notes)
    selection = params["btl"].value if "btl" in params else ""
    btls = [b for b in _selected(info.components.get("btl", []), selection) if b != "self"]
    usable = [b for b in btls if b not in RDMA_BTLS or _rdma_devices()]
    if len(usable) < len(btls):
        notes.append(f"no RDMA device: {sorted(set(btls) - set(usable))} cannot be used")
    inter = _btl_for([b for b in usable if b not in SHARED_MEMORY_BTLS], params)
    intra = _btl_for(usable, params)
    if pml == "ucx":
        transport = "ucx"
    elif nodes > 1:
        transport = inter or "unknown"
        if ranks > nodes and intra != inter:
            notes.append(
                f"{ranks} ranks on {nodes} nodes: pairs on one node use {intra}; the record "
                f"names {inter}, the transport of the pairs across nodes"
            )
    else:
        transport = intra or "unknown"
    kept = ["pml", "btl", *(f"btl_{b}_{k}" for b in usable for k in ("exclusivity",
            "eager_limit", "rndv_eager_limit", "max_send_size"))]  # fmt: skip
    return MpiProtocol(
        library=f"Open MPI {info.version}".strip(),
        pml=pml,
        transport=transport,
        inter_node=inter if pml == "ob1" else None,
        intra_node=intra if pml == "ob1" else None,
        eager_limits={
            b: v for b in usable if (v := _int(params, f"btl_{b}_eager_limit")) is not None
        },
        rndv_eager_limits={
            b: v for b in usable if (v := _int(params, f"btl_{b}_rndv_eager_limit")) is not None
        },
        ucx_rndv_thresh=env.get("UCX_RNDV_THRESH") if pml == "ucx" else None,
        params={k: f"{params[k].value} ({params[k].source})" for k in kept if k in params},
        notes=notes,
    )


_UCX_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def ucx_bytes(text: str | None) -> int | None:
    """A UCX memory-units value in bytes ("8k", "65536", "1M"); None for auto, inf or
    anything else."""
    found = re.fullmatch(r"\s*(\d+)\s*([bkmg]?)b?\s*", (text or "").lower())
    return int(found.group(1)) * _UCX_UNITS[found.group(2)] if found else None


def run_columns(protocol: MpiProtocol | None) -> dict[str, Any]:
    """The `runs` columns of a protocol record (nulls: unknown)."""
    if protocol is None:
        return {"mpi_transport": None, "protocol_json": None}
    transport = (
        protocol.pml
        if protocol.pml == protocol.transport
        else (f"{protocol.pml}/{protocol.transport}")
    )
    return {"mpi_transport": transport, "protocol_json": protocol.to_json()}
