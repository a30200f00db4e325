//! Open MPI 4.1.4 coll/tuned fixed decision points, each read off
//! ompi/mca/coll/tuned/coll_tuned_decision_fixed.c (tag v4.1.4). The comment on each line
//! quotes the `communicator_size` row and `total_dsize` condition.

use replay_engine::collectives::{decide, Algo, AlgoParams, CollKind, CollSpec};

fn pick(kind: CollKind, p: u32, bytes: u64) -> Algo {
    let (algo, params) = decide(&CollSpec::new(kind, p, 0, bytes));
    // 4.1 calls *_intra_do_this(..., alg, 0, 0): no fan-out, no segmentation
    assert_eq!(params, AlgoParams::FIXED);
    algo
}

fn pick_noncommutative(kind: CollKind, p: u32, bytes: u64) -> Algo {
    let mut spec = CollSpec::new(kind, p, 0, bytes);
    spec.commutative = false;
    decide(&spec).0
}

fn pick_v(kind: CollKind, p: u32, per_rank: u64) -> Algo {
    let mut spec = CollSpec::new(kind, p, 0, per_rank);
    spec.per_peer_bytes = vec![per_rank; p as usize];
    decide(&spec).0
}

use Algo::*;
use CollKind::*;

#[test]
fn allreduce_rules() {
    assert_eq!(pick(Allreduce, 16, 8), SegmentedRing); // size < 32: total_dsize < 64 -> 5
    assert_eq!(pick(Allreduce, 16, 4095), RecursiveDoubling); // size < 32: < 4096 -> 3
    assert_eq!(pick(Allreduce, 16, 1 << 20), Rabenseifner); // size < 32: else -> 6
    assert_eq!(pick(Allreduce, 2, 4), Ring); // size < 4: < 8 -> 4
    assert_eq!(pick(Allreduce, 2, 200_000), SegmentedRing); // size < 4: < 262144 -> 5
    assert_eq!(pick(Allreduce, 8, 8191), RecursiveDoubling); // size < 16: < 8192 -> 3
    assert_eq!(pick(Allreduce, 200, 100_000), Nonoverlapping); // size < 256: < 131072 -> 2
    assert_eq!(pick(Allreduce, 5000, 20_000), RecursiveDoubling); // else: < 32768 -> 3
}

#[test]
fn alltoall_rules() {
    assert_eq!(pick(Alltoall, 2, 100), Pairwise); // size == 2: < 256 -> 2
    assert_eq!(pick(Alltoall, 2, 1000), TwoProc); // size == 2: < 4096 -> 5
    assert_eq!(pick(Alltoall, 16, 8), Bruck); // size < 32: < 512 -> 3 (modified_bruck)
    assert_eq!(pick(Alltoall, 16, 1 << 20), LinearSync); // size < 32: else -> 4
    assert_eq!(pick(Alltoall, 16, 20_000), Linear); // size < 32: < 32768 -> 1
    assert_eq!(pick(Alltoall, 100, 300_000), Pairwise); // size < 128: else -> 2
    assert_eq!(pick(Alltoallv, 100, 0), Pairwise); // size < 128 -> 2
    assert_eq!(pick(Alltoallv, 16, 0), Linear); // size < 64 -> 1
}

#[test]
fn barrier_rules() {
    assert_eq!(pick(Barrier, 3, 0), RecursiveDoubling); // size < 4 -> 3
    assert_eq!(pick(Barrier, 5, 0), Linear); // size < 8 -> 1
    assert_eq!(pick(Barrier, 16, 0), RecursiveDoubling); // size < 64 -> 3
    assert_eq!(pick(Barrier, 100, 0), Bruck); // size < 256 -> 4
    assert_eq!(pick(Barrier, 300, 0), Tree); // size < 512 -> 6
}

#[test]
fn bcast_rules() {
    assert_eq!(pick(Bcast, 16, 8), Knomial); // size < 32: < 4096 -> 7
    assert_eq!(pick(Bcast, 16, 5000), Binomial); // size < 32: < 1048576 -> 6
    assert_eq!(pick(Bcast, 16, 1 << 20), ScatterAllgather); // size < 32: else -> 8
    assert_eq!(pick(Bcast, 10, 20_000), Binomial); // size < 16: < 32768 -> 6
    assert_eq!(pick(Bcast, 10, 1 << 20), Linear); // size < 16: else -> 1
    assert_eq!(pick(Bcast, 6, 100), Binomial); // size < 8: < 128 -> 6
    assert_eq!(pick(Bcast, 7, 2 << 20), Chain); // size < 8: else -> 2
    assert_eq!(pick(Bcast, 3, 16), Pipeline); // size < 4: < 32 -> 3
    assert_eq!(pick(Bcast, 300, 20_000), SplitBinary); // size < 1024: < 32768 -> 4
    assert_eq!(pick(Bcast, 200, 1000), Binary); // size < 256: < 16384 -> 5
}

#[test]
fn reduce_rules() {
    assert_eq!(pick(Reduce, 16, 8), Binary); // size < 32: < 4096 -> 4
    assert_eq!(pick(Reduce, 16, 1 << 20), Binomial); // size < 32: else -> 5
    assert_eq!(pick(Reduce, 2, 4), Rabenseifner); // size < 4: < 8 -> 7
    assert_eq!(pick(Reduce, 5, 10_000), Chain); // size < 8: < 65536 -> 2
    assert_eq!(pick(Reduce, 300, 10_000), InOrderBinary); // size < 512: < 16384 -> 6
}

#[test]
fn reduce_scatter_rules() {
    assert_eq!(pick(ReduceScatter, 16, 1000), RecursiveHalving); // size < 32: < 262144 -> 2
    assert_eq!(pick(ReduceScatter, 16, 1 << 20), Ring); // size < 32: else -> 3
    assert_eq!(pick(ReduceScatter, 50, 10_000), Butterfly); // size < 64: < 524288 -> 4
    assert_eq!(pick(ReduceScatter, 5, 4), Nonoverlapping); // size < 8: < 8 -> 1
    assert_eq!(pick(ReduceScatterBlock, 16, 8), Linear); // size < 32: < 32 -> 1
    assert_eq!(pick(ReduceScatterBlock, 16, 100_000), RecursiveHalving); // size < 32: < 524288 -> 3
    assert_eq!(pick(ReduceScatterBlock, 5, 16), RecursiveDoubling); // size < 8: < 32 -> 2
}

#[test]
fn allgather_gather_scatter_rules() {
    assert_eq!(pick(Allgather, 2, 1 << 20), TwoProc); // size == 2 -> 6
    assert_eq!(pick(Allgather, 16, 1 << 20), RecursiveDoubling); // size < 32 -> 3
    assert_eq!(pick(Allgather, 40, 2000), NeighborExchange); // size < 64: < 65536 -> 5
    assert_eq!(pick(Allgather, 40, 1 << 20), Ring); // size < 64: else -> 4
    assert_eq!(pick(Allgather, 600, 100), Bruck); // size < 1024: < 256 -> 2
    assert_eq!(pick_v(Allgatherv, 16, 100), Linear); // size < 32: per_rank < 128 -> 1 (default)
    assert_eq!(pick_v(Allgatherv, 16, 1000), Bruck); // size < 32: < 262144 -> 2
    assert_eq!(pick_v(Allgatherv, 40, 100_000), Ring); // size < 64: else -> 3
    assert_eq!(pick(Gather, 16, 1 << 20), Binomial); // size < 256 -> 2
    assert_eq!(pick(Gather, 6, 100_000), Linear); // size < 8: < 262144 -> 1
    assert_eq!(pick(Gather, 3, 1 << 20), LinearSync); // size < 4: else -> 3
    assert_eq!(pick(Scatter, 16, 1000), Binomial); // size < 32: < 16384 -> 2
    assert_eq!(pick(Scatter, 16, 20_000), Linear); // size < 32: < 32768 -> 1
    assert_eq!(pick(Scatter, 16, 100_000), LinearNb); // size < 32: else -> 3
}

#[test]
fn non_commutative_rules() {
    // "if( !ompi_op_is_commute(op) )" branches
    assert_eq!(pick_noncommutative(Allreduce, 2, 100), RecursiveDoubling); // size < 4: < 131072 -> 3
    assert_eq!(pick_noncommutative(Allreduce, 2, 1 << 20), Linear); // size < 4: else -> 1
    assert_eq!(pick_noncommutative(Allreduce, 10, 1 << 20), Nonoverlapping); // size < 16: else -> 2
    assert_eq!(
        pick_noncommutative(Allreduce, 16, 1 << 20),
        RecursiveDoubling
    ); // size < 128 -> 3
    assert_eq!(pick_noncommutative(Allreduce, 600, 1000), Nonoverlapping); // else: < 2048 -> 2
    assert_eq!(pick_noncommutative(Reduce, 16, 1 << 20), InOrderBinary); // size < 128 -> 6
    assert_eq!(pick_noncommutative(Reduce, 10, 5000), Linear); // size < 16: < 8192 -> 1
    assert_eq!(pick_noncommutative(Reduce, 5, 8), Linear); // size < 8 -> 1
    assert_eq!(
        pick_noncommutative(ReduceScatter, 16, 1 << 20),
        Nonoverlapping
    ); // -> 1
    assert_eq!(pick_noncommutative(ReduceScatterBlock, 16, 100_000), Linear); // -> 1
                                                                              // the commutative rules for the same calls differ
    assert_eq!(pick(Reduce, 16, 1 << 20), Binomial);
    assert_eq!(pick(Allreduce, 16, 1 << 20), Rabenseifner);
}
