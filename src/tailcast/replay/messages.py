"""Per-message replay output: the engine's message rows as a table, and per trace row what
the fabric reported about the messages the row sent (circuit setup and admission waits
summed, refused attempts summed, the longest path, the path class)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

KINDS = ("eager", "rendezvous")


def messages_table(columns: dict[str, NDArray[Any]], path_classes: list[str]) -> pa.Table:
    """The engine's message columns → the `replay_messages` table (without replay_id)."""
    paths = pa.array(path_classes, pa.string())
    kinds = pa.array(KINDS, pa.string())
    return pa.table(
        {
            "job": pa.array(columns["job"].astype(np.int32)),
            "src_rank": pa.array(columns["src_rank"].astype(np.int32)),
            "send_seq": pa.array(columns["send_seq"]),
            "dst_rank": pa.array(columns["dst_rank"].astype(np.int32)),
            "bytes": pa.array(columns["bytes"].astype(np.int64)),
            "kind": pc.take(kinds, pa.array(columns["kind"].astype(np.int32))),
            "collective": pa.array(columns["collective"]),
            "tag": pa.array(columns["tag"]),
            "posted_ns": pa.array(columns["posted_ns"]),
            "delivered_ns": pa.array(columns["delivered_ns"]),
            "setup_ns": pa.array(columns["setup_ns"]),
            "wait_ns": pa.array(columns["wait_ns"]),
            "blocked": pa.array(columns["blocked"].astype(np.int32)),
            "hops": pa.array(columns["hops"].astype(np.int32)),
            "path": pc.take(paths, pa.array(columns["path"].astype(np.int32))),
        }
    )


def fabric_columns(ops: pa.Table, messages: pa.Table) -> pa.Table:
    """`ops` (rank, seq, …) with setup_ns, wait_ns, blocked, hops and path of the messages
    each row of the foreground trace (job 0) sent; null for rows that sent none. A row
    whose messages took different path classes says `mixed`."""
    mine = messages.filter(pc.equal(messages.column("job"), 0))
    # In this thread (use_threads=False): Acero's pool workers could still be dropping the
    # last batch over numpy memory when the command returns, and one that needs the GIL
    # during interpreter shutdown aborts the process (std::terminate, exit -6).
    grouped = mine.group_by(["src_rank", "send_seq"], use_threads=False).aggregate(
        [
            ("setup_ns", "sum"),
            ("wait_ns", "sum"),
            ("blocked", "sum"),
            ("hops", "max"),
            ("path", "min"),
            ("path", "max"),
        ]
    )
    lo, hi = grouped.column("path_min"), grouped.column("path_max")
    path = pc.if_else(pc.equal(lo, hi), lo, pa.scalar("mixed"))
    per_row = pa.table(
        {
            "rank": grouped.column("src_rank"),
            "seq": grouped.column("send_seq"),
            "setup_ns": grouped.column("setup_ns_sum"),
            "wait_ns": grouped.column("wait_ns_sum"),
            "blocked": grouped.column("blocked_sum").cast(pa.int32()),
            "hops": grouped.column("hops_max"),
            "path": path,
        }
    )
    order = pa.array(np.arange(ops.num_rows))
    joined = ops.append_column("_order", order).join(
        per_row, ["rank", "seq"], join_type="left outer", use_threads=False
    )
    return joined.sort_by("_order").drop_columns(["_order"])
