//! Open MPI 4.1.4 coll/tuned fixed decision rules, transcribed as data from
//! ompi/mca/coll/tuned/coll_tuned_decision_fixed.c (tag v4.1.4; the tables "generated based
//! off of results that were gathered using the ompi-collectives-tuning package"). Every rule
//! reads `if (communicator_size < P) { if (total_dsize < S) alg = A ...`; a row (P, [(S, A),
//! ...]) encodes one such block, the last S/P being "else". Allreduce and reduce have their
//! own rules for non-commutative ops (`!ompi_op_is_commute(op)`); reduce_scatter and
//! reduce_scatter_block use algorithm 1 for those. The fixed rules pass faninout = 0 and
//! segsize = 0 to `*_intra_do_this` (`AlgoParams::FIXED`), so they never segment.

use super::names::algo_from_id;
use super::{Algo, AlgoParams, CollKind, CollSpec};

const E: u64 = u64::MAX; // "else" of a message-size chain
const P: u32 = u32::MAX; // "else" of a communicator-size chain
type Rule = &'static [(u32, &'static [(u64, u8)])];

const ALLREDUCE: Rule = &[
    (
        4,
        &[
            (8, 4),
            (4096, 3),
            (8192, 4),
            (16384, 3),
            (65536, 4),
            (262144, 5),
            (E, 6),
        ],
    ),
    (8, &[(16, 4), (8192, 3), (E, 6)]),
    (16, &[(8192, 3), (E, 6)]),
    (32, &[(64, 5), (4096, 3), (E, 6)]),
    (64, &[(128, 5), (E, 6)]),
    (128, &[(262144, 3), (E, 6)]),
    (256, &[(131072, 2), (262144, 3), (E, 6)]),
    (512, &[(4096, 2), (E, 6)]),
    (2048, &[(2048, 2), (16384, 3), (E, 6)]),
    (4096, &[(2048, 2), (4096, 5), (16384, 3), (E, 6)]),
    (P, &[(2048, 2), (16384, 5), (32768, 3), (E, 6)]),
];

/// Alltoall decides on the per-peer block (dsize * scount).
/// Allreduce with a non-commutative op.
const ALLREDUCE_NONCOMMUTE: Rule = &[
    (4, &[(131072, 3), (E, 1)]),
    (8, &[(E, 3)]),
    (16, &[(1048576, 3), (E, 2)]),
    (128, &[(E, 3)]),
    (256, &[(131072, 2), (524288, 3), (E, 2)]),
    (512, &[(4096, 2), (524288, 3), (E, 2)]),
    (P, &[(2048, 2), (E, 3)]),
];

const ALLTOALL: Rule = &[
    (
        3,
        &[
            (2, 2),
            (4, 5),
            (16, 2),
            (64, 5),
            (256, 2),
            (4096, 5),
            (32768, 2),
            (262144, 4),
            (1048576, 5),
            (E, 2),
        ],
    ),
    (
        8,
        &[
            (8192, 4),
            (16384, 1),
            (65536, 4),
            (524288, 1),
            (1048576, 2),
            (E, 1),
        ],
    ),
    (16, &[(262144, 4), (E, 1)]),
    (
        32,
        &[
            (4, 4),
            (512, 3),
            (8192, 4),
            (32768, 1),
            (262144, 4),
            (524288, 1),
            (E, 4),
        ],
    ),
    (64, &[(512, 3), (524288, 1), (E, 4)]),
    (128, &[(1024, 3), (2048, 1), (4096, 4), (262144, 1), (E, 2)]),
    (256, &[(1024, 3), (2048, 4), (262144, 1), (E, 2)]),
    (512, &[(1024, 3), (8192, 4), (32768, 1), (E, 2)]),
    (
        1024,
        &[
            (512, 3),
            (8192, 4),
            (16384, 1),
            (131072, 4),
            (262144, 1),
            (E, 2),
        ],
    ),
    (
        2048,
        &[
            (512, 3),
            (1024, 4),
            (2048, 1),
            (16384, 4),
            (262144, 1),
            (E, 4),
        ],
    ),
    (
        4096,
        &[(1024, 3), (4096, 4), (8192, 1), (131072, 4), (E, 1)],
    ),
    (
        P,
        &[
            (2048, 3),
            (8192, 4),
            (16384, 1),
            (32768, 4),
            (65536, 1),
            (E, 4),
        ],
    ),
];

/// Alltoallv: "We can only optimize based on com size".
const ALLTOALLV: Rule = &[
    (4, &[(E, 2)]),
    (64, &[(E, 1)]),
    (128, &[(E, 2)]),
    (256, &[(E, 1)]),
    (1024, &[(E, 2)]),
    (P, &[(E, 1)]),
];

const BARRIER: Rule = &[
    (4, &[(E, 3)]),
    (8, &[(E, 1)]),
    (64, &[(E, 3)]),
    (256, &[(E, 4)]),
    (512, &[(E, 6)]),
    (1024, &[(E, 4)]),
    (4096, &[(E, 6)]),
    (P, &[(E, 4)]),
];

const BCAST: Rule = &[
    (
        4,
        &[
            (32, 3),
            (256, 5),
            (512, 3),
            (1024, 7),
            (32768, 1),
            (131072, 5),
            (262144, 2),
            (524288, 1),
            (1048576, 6),
            (E, 5),
        ],
    ),
    (
        8,
        &[
            (64, 5),
            (128, 6),
            (2048, 5),
            (8192, 6),
            (1048576, 1),
            (E, 2),
        ],
    ),
    (
        16,
        &[(8, 7), (64, 5), (4096, 7), (16384, 5), (32768, 6), (E, 1)],
    ),
    (32, &[(4096, 7), (1048576, 6), (E, 8)]),
    (64, &[(2048, 6), (E, 7)]),
    (128, &[(E, 7)]),
    (256, &[(2, 6), (16384, 5), (32768, 1), (65536, 5), (E, 7)]),
    (1024, &[(16384, 7), (32768, 4), (E, 7)]),
    (2048, &[(524288, 7), (E, 8)]),
    (4096, &[(262144, 7), (E, 8)]),
    (P, &[(8192, 7), (16384, 5), (262144, 7), (E, 8)]),
];

const REDUCE: Rule = &[
    (
        4,
        &[
            (8, 7),
            (16, 4),
            (32, 3),
            (262144, 1),
            (524288, 3),
            (1048576, 2),
            (E, 3),
        ],
    ),
    (
        8,
        &[
            (4096, 4),
            (65536, 2),
            (262144, 5),
            (524288, 1),
            (1048576, 5),
            (E, 1),
        ],
    ),
    (16, &[(8192, 4), (E, 5)]),
    (32, &[(4096, 4), (E, 5)]),
    (256, &[(E, 5)]),
    (512, &[(8192, 5), (16384, 6), (E, 5)]),
    (2048, &[(E, 5)]),
    (4096, &[(512, 5), (1024, 6), (8192, 5), (16384, 6), (E, 5)]),
    (
        P,
        &[
            (16, 5),
            (32, 6),
            (1024, 5),
            (2048, 6),
            (8192, 5),
            (16384, 6),
            (E, 5),
        ],
    ),
];

/// Reduce_scatter decides on the whole vector (sum of rcounts * dsize).
/// Reduce with a non-commutative op ("only linear and in-order binary tree algorithms are
/// capable of non commutative ops").
const REDUCE_NONCOMMUTE: Rule = &[
    (4, &[(8, 6), (E, 1)]),
    (8, &[(E, 1)]),
    (16, &[(1024, 6), (8192, 1), (16384, 6), (262144, 1), (E, 6)]),
    (128, &[(E, 6)]),
    (256, &[(512, 6), (1024, 1), (E, 6)]),
    (P, &[(E, 6)]),
];

const REDUCE_SCATTER: Rule = &[
    (4, &[(65536, 3), (131072, 4), (E, 3)]),
    (8, &[(8, 1), (262144, 2), (E, 3)]),
    (32, &[(262144, 2), (E, 3)]),
    (64, &[(64, 1), (2048, 2), (524288, 4), (E, 3)]),
    (128, &[(256, 1), (512, 2), (2048, 4), (4096, 2), (E, 4)]),
    (256, &[(256, 1), (512, 2), (E, 4)]),
    (512, &[(256, 1), (1024, 2), (E, 4)]),
    (1024, &[(512, 1), (2048, 2), (8192, 4), (16384, 2), (E, 4)]),
    (2048, &[(512, 1), (4096, 2), (16384, 4), (32768, 2), (E, 4)]),
    (4096, &[(512, 1), (4096, 2), (E, 4)]),
    (P, &[(1024, 1), (8192, 2), (E, 4)]),
];

/// Reduce_scatter_block decides on one block (dsize * rcount).
const REDUCE_SCATTER_BLOCK: Rule = &[
    (
        4,
        &[
            (4, 2),
            (8, 4),
            (16, 3),
            (128, 4),
            (256, 3),
            (4096, 4),
            (8192, 3),
            (131072, 4),
            (E, 1),
        ],
    ),
    (
        8,
        &[
            (8, 3),
            (32, 2),
            (256, 4),
            (8192, 3),
            (16384, 4),
            (1048576, 3),
            (E, 1),
        ],
    ),
    (
        16,
        &[(4, 1), (32, 3), (128, 4), (524288, 3), (4194304, 1), (E, 4)],
    ),
    (
        32,
        &[(32, 1), (524288, 3), (2097152, 1), (4194304, 3), (E, 4)],
    ),
    (P, &[(4, 3), (16, 1), (65536, 4), (262144, 1), (E, 4)]),
];

/// Allgather decides on the per-rank block (dsize * scount); size 2 is two_proc.
const ALLGATHER: Rule = &[
    (3, &[(E, 6)]),
    (32, &[(E, 3)]),
    (64, &[(1024, 3), (65536, 5), (E, 4)]),
    (128, &[(512, 3), (65536, 5), (E, 4)]),
    (
        256,
        &[(512, 3), (131072, 5), (524288, 4), (1048576, 5), (E, 4)],
    ),
    (
        512,
        &[
            (32, 3),
            (128, 2),
            (1024, 3),
            (131072, 5),
            (524288, 4),
            (1048576, 5),
            (E, 4),
        ],
    ),
    (1024, &[(64, 3), (256, 2), (2048, 3), (E, 5)]),
    (
        2048,
        &[
            (4, 3),
            (8, 2),
            (16, 3),
            (32, 2),
            (256, 3),
            (512, 2),
            (4096, 3),
            (E, 5),
        ],
    ),
    (4096, &[(32, 2), (128, 3), (512, 2), (4096, 3), (E, 5)]),
    (P, &[(2, 3), (8, 2), (16, 3), (512, 2), (4096, 3), (E, 5)]),
];

/// Allgatherv decides on the average per-rank size (total / communicator size).
const ALLGATHERV: Rule = &[
    (3, &[(2048, 3), (4096, 5), (8192, 3), (E, 5)]),
    (
        8,
        &[
            (256, 1),
            (4096, 4),
            (8192, 3),
            (16384, 4),
            (262144, 2),
            (E, 4),
        ],
    ),
    (16, &[(1024, 1), (E, 2)]),
    (32, &[(128, 1), (262144, 2), (E, 3)]),
    (64, &[(256, 1), (8192, 2), (E, 3)]),
    (128, &[(256, 1), (4096, 2), (E, 3)]),
    (256, &[(1024, 2), (65536, 4), (E, 3)]),
    (512, &[(1024, 2), (E, 3)]),
    (
        1024,
        &[(512, 2), (1024, 1), (4096, 2), (1048576, 4), (E, 3)],
    ),
    (P, &[(4096, 2), (E, 4)]),
];

const GATHER: Rule = &[
    (
        4,
        &[(2, 3), (4, 1), (32768, 2), (65536, 1), (131072, 2), (E, 3)],
    ),
    (8, &[(1024, 2), (8192, 1), (32768, 2), (262144, 1), (E, 3)]),
    (256, &[(E, 2)]),
    (512, &[(2048, 2), (8192, 1), (E, 2)]),
    (P, &[(E, 2)]),
];

const SCATTER: Rule = &[
    (4, &[(2, 3), (131072, 1), (262144, 3), (E, 1)]),
    (
        8,
        &[
            (2048, 2),
            (4096, 1),
            (8192, 2),
            (32768, 1),
            (1048576, 3),
            (E, 1),
        ],
    ),
    (16, &[(16384, 2), (1048576, 3), (E, 1)]),
    (32, &[(16384, 2), (32768, 1), (E, 3)]),
    (64, &[(512, 2), (8192, 3), (16384, 2), (E, 3)]),
    (P, &[(512, 2), (E, 3)]),
];

/// Algorithm 1 whatever the size (reduce_scatter(_block) with a non-commutative op).
const FIRST: Rule = &[(P, &[(E, 1)])];

fn rule(kind: CollKind, commutative: bool) -> Rule {
    match kind {
        CollKind::Allreduce if !commutative => ALLREDUCE_NONCOMMUTE,
        CollKind::Reduce if !commutative => REDUCE_NONCOMMUTE,
        CollKind::ReduceScatter | CollKind::ReduceScatterBlock if !commutative => FIRST,
        // coll/basic's gatherv / scatterv: no decision (one algorithm)
        CollKind::Gatherv | CollKind::Scatterv => FIRST,
        CollKind::Allreduce => ALLREDUCE,
        CollKind::Alltoall => ALLTOALL,
        CollKind::Alltoallv => ALLTOALLV,
        CollKind::Barrier => BARRIER,
        CollKind::Bcast => BCAST,
        CollKind::Reduce => REDUCE,
        CollKind::ReduceScatter => REDUCE_SCATTER,
        CollKind::ReduceScatterBlock => REDUCE_SCATTER_BLOCK,
        CollKind::Allgather => ALLGATHER,
        CollKind::Allgatherv => ALLGATHERV,
        CollKind::Gather => GATHER,
        CollKind::Scatter => SCATTER,
    }
}

/// Open MPI's numeric algorithm id the fixed rules pick for (kind, p, size in bytes,
/// op commutativity).
pub fn fixed_id(kind: CollKind, comm_size: u32, size: u64, commutative: bool) -> u8 {
    let rows = rule(kind, commutative);
    let row = rows
        .iter()
        .find(|(p, _)| comm_size < *p)
        .unwrap_or(&rows[rows.len() - 1]);
    row.1
        .iter()
        .find(|(s, _)| size < *s)
        .map_or(row.1[row.1.len() - 1].1, |x| x.1)
}

/// The size each rule looks at, as coll_tuned_decision_fixed.c computes it: whole buffer
/// (bcast, reduce, allreduce, reduce_scatter), one block (alltoall, allgather, gather,
/// scatter, reduce_scatter_block), the average block (allgatherv), none (barrier, alltoallv).
pub fn decision_size(spec: &CollSpec) -> u64 {
    let p = u64::from(spec.comm_size.max(1));
    match spec.kind {
        CollKind::Allgatherv => spec.per_peer_bytes.iter().sum::<u64>() / p,
        CollKind::ReduceScatter if !spec.per_peer_bytes.is_empty() => {
            spec.per_peer_bytes.iter().sum()
        }
        _ => spec.bytes,
    }
}

pub fn decide(spec: &CollSpec) -> (Algo, AlgoParams) {
    let first = || algo_from_id(spec.kind, 1).unwrap_or(Algo::Linear);
    if spec.comm_size < 2 {
        return (first(), AlgoParams::FIXED);
    }
    let id = fixed_id(
        spec.kind,
        spec.comm_size,
        decision_size(spec),
        spec.commutative,
    );
    let algo = algo_from_id(spec.kind, id).unwrap_or_else(first);
    (algo, AlgoParams::FIXED)
}
