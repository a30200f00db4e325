"""The eager threshold a replay of a measured run uses: the one the run's MPI library
applied, from the protocol the agent recorded with the run (collectors/mpi_protocol.py).
None — no record (runs stored before the record existed), or a library whose threshold
the record does not give — leaves the fabric's [host] eager_threshold_bytes in force.

Open MPI's ob1 sends a message eagerly when its bytes fit in one eager fragment with ob1's
header: size <= btl_eager_limit - sizeof(mca_pml_ob1_hdr_t) (pml_ob1_sendreq.h,
mca_pml_ob1_send_request_start_btl). The header is a union whose largest member, the RDMA
header (common 2 B padded to 8, six 8-byte fields), is 56 bytes on LP64 without
heterogeneous support (pml_ob1_hdr.h). Measured on Open MPI 4.1.4's TCP BTL: with the
default btl_tcp_eager_limit of 65536 a blocking send of 65480 bytes returns before the
receiver posts its receive and one of 65481 waits for it (the rendezvous); with 4096,
4040 and 4041 (tests/replay/test_eager_limit.py measures it).

Which BTL's limit: the one of the run's transport (the record's `transport`). A replay has
one threshold, so a run mixing pairs on one node (vader, 4096) with pairs across nodes
(tcp, 65536) takes the inter-node one, and its record says so in its notes. With UCX as
the PML, messages of UCX_RNDV_THRESH bytes and more take the rendezvous, when the run set a
number (ucp tag send: `length >= rndv_thresh`); UCX's own default
(`auto`, chosen per transport at run time) is not recorded, so None.
"""

from __future__ import annotations

from tailcast.collectors.mpi_protocol import MpiProtocol, ucx_bytes

OB1_HEADER_BYTES = 56


def eager_threshold(protocol: MpiProtocol | None) -> int | None:
    """Largest message the run's library sent eagerly, in bytes (None: unknown)."""
    if protocol is None:
        return None
    if protocol.pml == "ob1":
        limit = protocol.eager_limits.get(protocol.transport)
        return None if limit is None else max(limit - OB1_HEADER_BYTES, 0)
    if protocol.pml == "ucx":
        thresh = ucx_bytes(protocol.ucx_rndv_thresh)
        return None if thresh is None else max(thresh - 1, 0)
    return None


def run_eager_threshold(protocol_json: str | None) -> int | None:
    """`eager_threshold` of a stored `runs.protocol_json` (null: unknown)."""
    if not protocol_json:
        return None
    return eager_threshold(MpiProtocol.from_json(protocol_json))
