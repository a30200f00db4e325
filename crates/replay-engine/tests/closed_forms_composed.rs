//! Hand-derived α-β-γ times of the Open MPI 4.1.4 algorithms that had no closed-form test
//! at both p = 16 and p = 13: the composed ones (allreduce basic_linear and
//! nonoverlapping, allgather basic_linear, reduce_scatter nonoverlapping — built from
//! reduce, bcast, gather, scatter(v)), allreduce segmented ring, reduce_scatter butterfly,
//! gather linear_sync, scatter linear_nb, barrier basic_linear and tree, and binomial
//! reduce single-port at p = 13. Model and notation as in closed_forms.rs: α = 1 µs,
//! β = 1 ns/B, γ = 0.5 ns/B, T(n) = α + nβ, G(n) = nγ; above 8 KiB rendezvous (data moves
//! once both sides are posted), below eager (a blocking eager send returns at once, the
//! data arrives α + nβ later); barrier messages are empty: α.

mod support;

use replay_engine::ops::Op;
use support::*;

const N: (i64, i64) = (MIB as i64, MIB as i64);

#[test]
fn reduce_binomial_single_port_at_13() {
    // reduce_generic over the in-order binomial tree (0 ← 1, 2, 4, 8; 8 ← 9, 10, 12;
    // 4 ← 5, 6; 2 ← 3; 6 ← 7; 10 ← 11), one segment, two receives posted. Single port,
    // T = T(1 MiB), G = G(1 MiB): 2, 6, 10 reduce their leaf by T + G. Rank 8 posts 9's
    // and 10's receives at 0 (9 at T, reduced T + G), 12's at T + G: 10's and 12's data
    // are both ready then and its receive port takes 10's (posted first) then 12's:
    // 2T + G, 3T + G, reduced 3T + 2G. Rank 4: 5 at T, 6 at 2T + G: 2T + 2G. The root: 1
    // at T (T + G), 2's [T + G, 2T + G] (2T + 2G), 4's [2T + 2G, 3T + 2G] (3T + 3G), 8's
    // [3T + 2G, 4T + 2G]: 4T + 3G. (Unlimited, closed_forms.rs: 3T + 4G.)
    let (tt, gg) = (t(MIB), g(MIB));
    single_and_unlimited(
        "reduce binomial",
        13,
        Op::Reduce,
        N,
        "reduce=binomial",
        4.0 * tt + 3.0 * gg,
        3.0 * tt + 4.0 * gg,
    );
}

#[test]
fn allreduce_linear() {
    // allreduce_intra_basic_linear: ompi_coll_base_reduce_intra_basic_linear to 0, then
    // ompi_coll_base_bcast_intra_basic_linear from 0. The reduce: blocking receives from
    // p-1, …, 1, each reduced, plus the own buffer: (p-1)(T + G) (rendezvous: one message
    // at a time whatever the ports). The bcast: p-1 isends from the root, every other rank
    // already waiting: (p-1)T single-port, T unlimited.
    let (tt, gg) = (t(MIB), g(MIB));
    for p in [16u32, 13] {
        let k = f64::from(p - 1);
        single_and_unlimited(
            "allreduce linear",
            p,
            Op::Allreduce,
            N,
            "allreduce=linear",
            k * (tt + gg) + k * tt,
            k * (tt + gg) + tt,
        );
    }
}

#[test]
fn allreduce_nonoverlapping() {
    // allreduce_intra_nonoverlapping: c_coll reduce to 0 then c_coll bcast from 0, here
    // both forced binomial. The bcast starts when the root has reduced, every other rank
    // having entered it when its reduce send completed (before that).
    // p = 16: reduce 4(T + G) (closed_forms.rs), bcast 4T, both port settings.
    // p = 13: reduce 4T + 3G single-port (above), 3T + 4G unlimited; bcast ⌈lg p⌉T = 4T
    // single-port, depth 3T unlimited.
    let (tt, gg) = (t(MIB), g(MIB));
    let coll = "allreduce=nonoverlapping,reduce=binomial,bcast=binomial";
    let p16 = 4.0 * (tt + gg) + 4.0 * tt;
    single_and_unlimited(
        "allreduce nonoverlapping",
        16,
        Op::Allreduce,
        N,
        coll,
        p16,
        p16,
    );
    single_and_unlimited(
        "allreduce nonoverlapping",
        13,
        Op::Allreduce,
        N,
        coll,
        4.0 * tt + 3.0 * gg + 4.0 * tt,
        3.0 * tt + 4.0 * gg + 3.0 * tt,
    );
}

#[test]
fn allreduce_segmented_ring() {
    // allreduce_intra_ring_segmented, n = 2pB, segsize = B = 64 KiB: segcount = B,
    // num_phases = n / (pB) = 2, every block (2B) split into two phase parts of B. Each
    // phase is a ring reduce-scatter: irecv from the left, blocking send of the own part,
    // then p-2 times wait, reduce, send on, and a last wait and reduce:
    // T(B) + (p-2)(G(B) + T(B)) + G(B) = (p-1)(T(B) + G(B)), every rank in step. Then one
    // ring allgather of the whole blocks: (p-1)T(2B). Total 3(p-1)α + 4(p-1)Bβ +
    // 2(p-1)Bγ: Thakur et al.'s ring allreduce 2(p-1)α + 2((p-1)/p)nβ + ((p-1)/p)nγ with
    // (p-1)α more for the second phase. One send, one receive per rank: same single-port.
    for p in [16u32, 13] {
        let k = f64::from(p - 1);
        let n = 2 * u64::from(p) * B;
        let want = 2.0 * k * (t(B) + g(B)) + k * t(2 * B);
        single_and_unlimited(
            "allreduce segmented_ring",
            p,
            Op::Allreduce,
            (n as i64, n as i64),
            "allreduce=segmented_ring:segsize=64K",
            want,
            want,
        );
    }
}

#[test]
fn allgather_linear() {
    // allgather_intra_basic_linear: c_coll gather to 0 (forced basic_linear: blocking
    // receives from 1, …, p-1 of b = 64 KiB, (p-1)T(b)), then c_coll bcast of pb from 0
    // (forced binomial: ⌈lg p⌉T(pb) single-port, depth·T(pb) unlimited, depth 4 at p = 16
    // and 3 at p = 13); every rank is in the bcast before the root.
    let coll = "allgather=linear,gather=linear,bcast=binomial";
    for (p, depth) in [(16u32, 4.0), (13, 3.0)] {
        let gather = f64::from(p - 1) * t(B);
        let n = u64::from(p) * B;
        single_and_unlimited(
            "allgather linear",
            p,
            Op::Allgather,
            (B as i64, B as i64),
            coll,
            gather + lg(p) * t(n),
            gather + depth * t(n),
        );
    }
}

#[test]
fn reduce_scatter_nonoverlapping_and_butterfly() {
    // n = pB, one B = 64 KiB block each.
    // nonoverlapping: c_coll reduce of n to 0 (forced basic_linear: (p-1)(T(n) + G(n))),
    // then coll/basic scatterv (blocking sends to 1, …, p-1: (p-1)T(B)); one message at a
    // time at the root whatever the ports.
    for p in [16u32, 13] {
        let k = f64::from(p - 1);
        let n = u64::from(p) * B;
        let want = k * (t(n) + g(n)) + k * t(B);
        single_and_unlimited(
            "reduce_scatter nonoverlapping",
            p,
            Op::ReduceScatter,
            (n as i64, B as i64),
            "reduce_scatter=nonoverlapping,reduce=linear",
            want,
            want,
        );
    }
    // reduce_scatter_intra_butterfly, p = 16: halves of 8, 4, 2, 1 blocks swapped and
    // reduced at distances 1, 2, 4, 8 (4α + 15B(β + γ)); unlike reduce_scatter_block's
    // butterfly_pof2 (which permutes its blocks locally first) every rank whose
    // bit-reversed vrank differs then swaps its block with that rank: + T(B).
    let b = B as f64;
    let n = 16 * B as i64;
    let want = 5.0 * ALPHA + 16.0 * b * BETA + 15.0 * b * GAMMA;
    single_and_unlimited(
        "reduce_scatter butterfly",
        16,
        Op::ReduceScatter,
        (n, B as i64),
        "reduce_scatter=butterfly",
        want,
        want,
    );
    // p = 13: the schedule of reduce_scatter_block's butterfly at p = 13
    // (closed_forms_block.rs: fold, distance doubling over the virtual blocks, mirror
    // exchange): T(13B) + G(13B) + T(8B) + G(8B) + T(4B) + G(4B) + T(2B) + G(2B) + 2T(B).
    let x = t(13 * B) + g(13 * B) + t(8 * B) + g(8 * B) + t(4 * B) + g(4 * B);
    let want = x + t(2 * B) + g(2 * B) + 2.0 * t(B);
    let n = 13 * B as i64;
    single_and_unlimited(
        "reduce_scatter butterfly",
        13,
        Op::ReduceScatter,
        (n, B as i64),
        "reduce_scatter=butterfly",
        want,
        want,
    );
}

#[test]
fn gather_linear_sync() {
    // gather_intra_linear_sync, b = 64 KiB. For i = 1, …, p-1 the root posts the receive
    // of i's first segment, sends i an empty message (eager: returns at once), posts the
    // receive of the second segment and waits for the first; rank i waits for the empty
    // message (α), then sends both segments with blocking sends.
    // segsize 0 (forced default): the first segment is the whole block, the second empty
    // (eager, α, on the root's receive port while the empty message travels to i+1): rank
    // i's block is in at i(α + T(b)), the last empty second segment α later:
    // (p-1)(2α + bβ) + α, single-port as well.
    for p in [16u32, 13] {
        let want = f64::from(p - 1) * (ALPHA + t(B)) + ALPHA;
        single_and_unlimited(
            "gather linear_sync",
            p,
            Op::Gather,
            (B as i64, B as i64),
            "gather=linear_sync",
            want,
            want,
        );
    }
    // segsize 16 KiB: first f = 16 KiB, second s = 48 KiB, both rendezvous. Unlimited:
    // rank i's second segment moves while the root syncs with i+1: (p-1)(α + T(f)) + T(s).
    // Single port: i+1's first segment reaches the root while i's second holds its receive
    // port, so it waits: c_{i+1} = c_i + T(s) + T(f), c_1 = α + T(f), and the end is
    // c_{p-1} + T(s) = α + (p-1)(T(f) + T(s)) = (2p-1)α + (p-1)bβ — segmenting gains
    // nothing with one receive port.
    let (f, s) = (16 * 1024u64, 48 * 1024u64);
    for p in [16u32, 13] {
        let k = f64::from(p - 1);
        single_and_unlimited(
            "gather linear_sync 16K",
            p,
            Op::Gather,
            (B as i64, B as i64),
            "gather=linear_sync:segsize=16K",
            ALPHA + k * (t(f) + t(s)),
            k * (ALPHA + t(f)) + t(s),
        );
    }
}

#[test]
fn scatter_linear_nb() {
    // scatter_intra_linear_nb, b = 64 KiB: the root isends to 1, …, p-1 in rank order and
    // waits for all; with max_reqs > 1 the send to every i with i % max_reqs == 0 is
    // blocking. max_reqs 0 (forced default): (p-1)T(b) single-port, T(b) unlimited.
    // max_reqs 4, unlimited: 1-3 and 4 (blocking) at 0, 5-8 at T, 9-12 at 2T, 13-15 at 3T:
    // 4T at p = 16, 3T at p = 13 (9-12 last); single-port the root's port serialises them
    // anyway: (p-1)T.
    let bi = (B as i64, B as i64);
    for (p, rounds) in [(16u32, 4.0), (13, 3.0)] {
        let k = f64::from(p - 1);
        let tb = t(B);
        single_and_unlimited(
            "scatter linear_nb",
            p,
            Op::Scatter,
            bi,
            "scatter=linear_nb",
            k * tb,
            tb,
        );
        single_and_unlimited(
            "scatter linear_nb max_requests=4",
            p,
            Op::Scatter,
            bi,
            "scatter=linear_nb:max_requests=4",
            k * tb,
            rounds * tb,
        );
    }
}

#[test]
fn barrier_linear_and_tree() {
    // barrier_intra_basic_linear: everyone sends rank 0 an empty message and waits for the
    // answer; 0 waits for all p-1, then sends to 1, …, p-1 (blocking, eager: at once).
    // Unlimited: 2α. Single port: 0's receive port takes the p-1 messages one by one,
    // then its send port the p-1 answers: 2(p-1)α.
    for p in [16u32, 13] {
        let k = f64::from(p - 1);
        single_and_unlimited(
            "barrier linear",
            p,
            Op::Barrier,
            (0, 0),
            "barrier=linear",
            2.0 * k * ALPHA,
            2.0 * ALPHA,
        );
    }
    // barrier_intra_tree: fan-in over the hypercube (at jump j a rank whose partner
    // r ^ j has no bits below j receives from a higher partner or sends to a lower one),
    // then the mirror-image fan-out, blocking. p = 16: lg p levels each way, one message
    // per receiver at a time: 8α on both port settings (the fan-out sends of a rank are
    // eager and go out one per α single-port, farthest first, so the fan-out is a
    // farthest-first binomial: lg p α).
    single_and_unlimited(
        "barrier tree",
        16,
        Op::Barrier,
        (0, 0),
        "barrier=tree",
        8.0 * ALPHA,
        8.0 * ALPHA,
    );
    // p = 13: 12 has no partner below jump 4 and sends to 8 at once. Unlimited: 10 has 11's
    // at α and sends; 8 has 9 at α, 10's at 2α (12's long there), sends to 0 at 2α; 0 has
    // 1, 2 (2α), 4 (3α), 8 (3α): fan-in 3α; fan-out 0 → 8 → 10 → 11 (and 0 → 4 → 6 → 7):
    // 3α; 6α. Single port: 12's and 9's messages reach 8 at 0 and 9's (a posted receive)
    // goes first, 10's (posted at α) before the unexpected 12's: 8 has all at 3α, 0 at
    // 4α; fan-out farthest first from 4α: 0 → 8 (5α), 8 → 12, 10 (7α), 10 → 11 (8α): 8α.
    single_and_unlimited(
        "barrier tree",
        13,
        Op::Barrier,
        (0, 0),
        "barrier=tree",
        8.0 * ALPHA,
        6.0 * ALPHA,
    );
}

#[test]
fn two_proc_algorithms_exist_only_on_two_ranks() {
    // alltoall_intra_two_procs, allgather(v)_intra_two_procs and barrier_intra_two_procs
    // are one sendrecv with the other rank: α + nβ (b = 64 KiB; barrier: empty, α), and
    // return MPI_ERR_UNSUPPORTED_OPERATION on any other size ("if (2 != size)"), so at
    // p = 16 and 13 there is no time to derive: the replay must refuse the forced call.
    let b = B as i64;
    for (op, coll, bytes, want) in [
        (Op::Alltoall, "alltoall=two_proc", b, t(B)),
        (Op::Allgather, "allgather=two_proc", b, t(B)),
        (Op::Barrier, "barrier=two_proc", 0, ALPHA),
    ] {
        single_and_unlimited(coll, 2, op, (bytes, bytes), coll, want, want);
        for p in [16u32, 13] {
            let got = try_time(Ports::One, p, op, bytes, bytes, coll);
            assert!(got.is_err(), "{coll} p={p}: {got:?}");
        }
    }
}
