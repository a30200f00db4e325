//! Hand-derived α-β-γ times of Open MPI 4.1.4's algorithms, replayed through the engine
//! (`replay_engine::replay`, one collective per rank, the algorithm forced as `--coll`
//! does) at p = 16 and p = 13. α = 1 µs, β = 1 ns/B, γ = 0.5 ns/B; T(n) = α + nβ is one
//! message, G(n) = nγ one reduction. Messages above 8 KiB are rendezvous (data moves once
//! both sides are posted), smaller ones eager.
//!
//! `Ports::One` is the alpha_beta default: single-port, full-duplex endpoints, the Hockney
//! model Pješivac-Grbović, Bosilca, Fagg, Angskun & Dongarra ("Performance analysis of MPI
//! collective operations", Cluster Computing 10(2), 2007) use for Open MPI's collectives;
//! `Ports::Unlimited` is the contention-free form. The published forms are those of
//! Thakur, Rabenseifner & Gropp (IJHPCA 19(1), 2005) and of Pješivac-Grbović et al.;
//! where a form is stated for a power of two only, p = 13 is derived for 4.1.4's code
//! (named in each test) and the derivation is in the comment.

mod support;

use replay_engine::ops::Op;
use support::*;

#[test]
fn bcast_linear_is_p_minus_1_messages_at_the_root() {
    // bcast_intra_basic_linear: the root isends p-1 copies; its port sends one at a time:
    // (p-1)(α + nβ) (Pješivac-Grbović et al., linear broadcast).
    for p in [16, 13] {
        let want = f64::from(p - 1) * t(MIB);
        one(
            "bcast linear 1MiB",
            p,
            Op::Bcast,
            MIB as i64,
            "bcast=linear",
            want,
        );
    }
}

#[test]
fn bcast_pipeline_is_p_plus_segments_minus_2_hops() {
    // bcast_intra_pipeline with segsize 128 KiB: 8 segments down a chain; an inner node
    // receives segment s+1 while it forwards segment s: (p + ns - 2)(α + ms β).
    let (ms, ns) = (128 * 1024u64, 8.0);
    for p in [16, 13] {
        let want = (f64::from(p) + ns - 2.0) * t(ms);
        one(
            "bcast pipeline",
            p,
            Op::Bcast,
            MIB as i64,
            "bcast=pipeline:segsize=128K",
            want,
        );
    }
}

#[test]
fn bcast_binomial_is_lg_p_hops() {
    // ompi_coll_base_topo_build_bmtree: the children of index i are i | m for every power
    // of two m above i's highest bit, nearest first (1, 2, 4, 8 at the root), so the
    // first child roots the largest subtree. Without port limits a rank is reached after
    // popcount(index) hops, max over 0..p-1: lg p at p = 16, 3 at p = 13 (7 and 11). With
    // one send at a time a node feeds its largest subtree first and the root's k-th child
    // is reached at hop k: ⌈lg p⌉(α + nβ) (Thakur et al., binomial broadcast) at both p.
    let depth = |p: u32| f64::from((0..p).map(u32::count_ones).max().unwrap_or(0));
    for p in [16, 13] {
        for n in [8u64, MIB] {
            let ni = n as i64;
            one(
                "bcast binomial",
                p,
                Op::Bcast,
                ni,
                "bcast=binomial",
                lg(p) * t(n),
            );
            let got = time(Ports::Unlimited, p, Op::Bcast, ni, ni, "bcast=binomial");
            check(
                &format!("bcast binomial p={p} n={n} unlimited"),
                got,
                depth(p) * t(n),
            );
        }
    }
}

#[test]
fn bcast_scatter_allgather_van_de_geijn() {
    // bcast_intra_scatter_allgather_ring, n = p·B: the binomial scatter sends the halves
    // down (the root's sends to children 8, 4, 2, 1 one after the other; rank 1's block
    // comes last, at ⌈lg p⌉α + (p-1)Bβ), then p-1 ring steps carry it around:
    // (⌈lg p⌉ + p - 1)α + 2((p-1)/p)nβ (Thakur et al.).
    for p in [16u32, 13] {
        let n = u64::from(p) * B;
        let want = (lg(p) + f64::from(p - 1)) * ALPHA + 2.0 * f64::from(p - 1) * B as f64 * BETA;
        both(
            "bcast scatter_allgather_ring",
            p,
            Op::Bcast,
            n as i64,
            "bcast=9",
            want,
        );
    }
    // bcast_intra_scatter_allgather (recursive doubling), p = 16: 2 lg p α + 2((p-1)/p)nβ.
    let n = 16 * B;
    let want = 8.0 * ALPHA + 2.0 * 15.0 * B as f64 * BETA;
    both(
        "bcast scatter_allgather",
        16,
        Op::Bcast,
        n as i64,
        "bcast=8",
        want,
    );
    // p = 13, n = 13B (scatter_count = B). Binomial scatter with blocking sends: the root
    // sends 5B to 8, 4B to 4, 2B to 2, B to 1 (ranks 0-7 are done at 4α + 12Bβ); 8 sends
    // B to 12, 2B to 10, B to 9 (8-11 done at 4α + 9Bβ, 12 at 2α + 6Bβ). Allgather:
    // masks 1 and 2 pair ranks within 0-7 and 8-11 (B, then 2B: 0-7 at 6α + 15Bβ);
    // mask 4: 0-7 swap 4B (7α + 19Bβ), 8 swaps with 12 (4B out, B in), and since 12's
    // subtree ends beyond p the recursive-halving fix-up runs: 8 sends block 12 to 10
    // then to 9, 10 passes it to 11 (all done by 9α + 18Bβ); mask 8: 0↔8, …, 4↔12 swap
    // 8B against 5B from 7α + 19Bβ (the later side) to 8α + 27Bβ; 5, 6, 7 have no
    // partner and get the 5B from 1, 2, 3 by the fix-up: 9α + 32Bβ. Each rank sends at
    // most one message at a time and receives one, so single-port is the same.
    let n = 13 * B;
    both(
        "bcast scatter_allgather",
        13,
        Op::Bcast,
        n as i64,
        "bcast=8",
        9.0 * ALPHA + 32.0 * B as f64 * BETA,
    );
}

#[test]
fn reduce_linear_and_pipeline() {
    // reduce_intra_basic_linear: the root receives from p-1, ..., 1 in turn and reduces
    // each (and its own buffer): (p-1)(α + nβ + nγ) (Pješivac-Grbović et al.).
    for p in [16, 13] {
        let want = f64::from(p - 1) * (t(MIB) + g(MIB));
        one(
            "reduce linear 1MiB",
            p,
            Op::Reduce,
            MIB as i64,
            "reduce=linear",
            want,
        );
    }
    // reduce_intra_pipeline, 8 segments of 128 KiB: each node reduces a segment and sends
    // it on while the next arrives: (p + ns - 2)(α + msβ + msγ).
    let ms = 128 * 1024u64;
    for p in [16, 13] {
        let want = (f64::from(p) + 6.0) * (t(ms) + g(ms));
        one(
            "reduce pipeline",
            p,
            Op::Reduce,
            MIB as i64,
            "reduce=pipeline:segsize=128K",
            want,
        );
    }
}

#[test]
fn reduce_binomial_reduces_children_as_they_arrive() {
    // reduce_generic over the in-order binomial tree: a parent reduces each child's data as
    // it arrives (the next child's receive is already posted), so the chain 15→14→12→8→0
    // costs one message and one reduction per hop: lg p (α + nβ + nγ) (Thakur et al.).
    both(
        "reduce binomial",
        16,
        Op::Reduce,
        MIB as i64,
        "reduce=binomial",
        4.0 * (t(MIB) + g(MIB)),
    );
    // p = 13, unlimited ports, in-order bmtree (children vrank + 1, 2, 4, … below the
    // lowest set bit): 0 ← 1, 2, 4, 8; 8 ← 9, 10, 12; 4 ← 5, 6; 2 ← 3; 6 ← 7; 10 ← 11.
    // reduce_generic reduces children in that order, each once it has arrived and the
    // previous one is reduced. Rank 8: 9 at t+g, 10 (after reducing 11) arrives 2t+g →
    // 2t+2g, 12 (arrived) → 2t+3g, at the root 3t+3g. Rank 4: 6 arrives 2t+g → 2t+2g, at the
    // root 3t+2g. Root: 1 → t+g, 2 (arrives 2t+g) → 2t+2g, 4 → 3t+3g, 8 → 3t+4g.
    let got = time(
        Ports::Unlimited,
        13,
        Op::Reduce,
        MIB as i64,
        MIB as i64,
        "reduce=binomial",
    );
    check(
        "reduce binomial p=13 unlimited",
        got,
        3.0 * t(MIB) + 4.0 * g(MIB),
    );
}

#[test]
fn reduce_rabenseifner() {
    // reduce_intra_redscat_gather, p = 16: reduce-scatter by recursive halving, binomial
    // gather of the pieces: 2 lg p α + 2((p-1)/p)nβ + ((p-1)/p)nγ (Thakur et al.).
    let n = MIB;
    let f = 15.0 / 16.0 * n as f64;
    let want = 8.0 * ALPHA + 2.0 * f * BETA + f * GAMMA;
    both(
        "reduce rabenseifner",
        16,
        Op::Reduce,
        n as i64,
        "reduce=rabenseifner",
        want,
    );
    // p = 13 (p' = 8, r = 5), root 0: the first 10 ranks swap halves (α + n/2 β), reduce
    // (n/2 γ), the odd ones send their reduced half to the even ones (α + n/2 β), which
    // become vranks 0..4; p' ranks halve (3α + (7/8)nβ + (7/8)nγ) and the binomial gather
    // brings the pieces to vroot 0 (3α + (7/8)nβ).
    // Every step pairs ranks (or has a parent receive its children one blocking receive
    // at a time), so no port ever holds two messages: the same single-port.
    let f8 = 7.0 / 8.0 * n as f64;
    let want = 2.0 * t(n / 2) + g(n / 2) + 6.0 * ALPHA + 2.0 * f8 * BETA + f8 * GAMMA;
    both(
        "reduce rabenseifner",
        13,
        Op::Reduce,
        n as i64,
        "reduce=rabenseifner",
        want,
    );
}

#[test]
fn allreduce_recursive_doubling() {
    // allreduce_intra_recursivedoubling: lg p (α + nβ + nγ) (Thakur et al.). p = 13: the
    // even ranks of the first 2·5 send their vector to rank+1, which reduces it, 3
    // exchanges follow, then the result goes back: (⌊lg p⌋ + 2)(α + nβ) + (⌊lg p⌋ + 1)nγ
    // on both port settings. Single port, 1 MiB (rendezvous: data moves once both sides
    // posted): 10's first-exchange message to 9 waits for 9 to post its receive after
    // reducing 8's vector (T + G), so no port is ever shared. 8 B (eager): 10's message
    // reaches 9 with 8's at 0; 9's receive port serves the receive it posted first (8's),
    // so 10's lands at 2T, before 9 needs it at 2T + G: no delay either.
    for n in [8u64, MIB] {
        both(
            "allreduce rd",
            16,
            Op::Allreduce,
            n as i64,
            "allreduce=3",
            4.0 * (t(n) + g(n)),
        );
        let want = 5.0 * t(n) + 4.0 * g(n);
        let ni = n as i64;
        both("allreduce rd", 13, Op::Allreduce, ni, "allreduce=3", want);
    }
}

#[test]
fn allreduce_ring() {
    // allreduce_intra_ring, n = p·B: p-1 reduce-scatter steps (receive, reduce, send on)
    // and p-1 allgather steps: 2(p-1)α + 2((p-1)/p)nβ + ((p-1)/p)nγ.
    for p in [16u32, 13] {
        let n = u64::from(p) * B;
        let k = f64::from(p - 1);
        let want = 2.0 * k * ALPHA + 2.0 * k * B as f64 * BETA + k * B as f64 * GAMMA;
        both(
            "allreduce ring",
            p,
            Op::Allreduce,
            n as i64,
            "allreduce=ring",
            want,
        );
    }
}

#[test]
fn allreduce_rabenseifner() {
    // allreduce_intra_redscat_allgather, p = 16: 2 lg p α + 2((p-1)/p)nβ + ((p-1)/p)nγ.
    let n = MIB;
    let f = 15.0 / 16.0 * n as f64;
    let want = 8.0 * ALPHA + 2.0 * f * BETA + f * GAMMA;
    both(
        "allreduce rabenseifner",
        16,
        Op::Allreduce,
        n as i64,
        "allreduce=6",
        want,
    );
    // p = 13 (p' = 8, r = 5), n = 1 MiB: the first 10 ranks swap halves (α + n/2 β),
    // reduce (n/2 γ), the odd ones send their half to the even ones (α + n/2 β); p' ranks
    // halve and double (2·3α + 2(7/8)nβ + (7/8)nγ); the even ones send the result back
    // (α + nβ).
    let f8 = 7.0 / 8.0 * n as f64;
    let want = 2.0 * t(n / 2) + g(n / 2) + 6.0 * ALPHA + 2.0 * f8 * BETA + f8 * GAMMA + t(n);
    both(
        "allreduce rabenseifner",
        13,
        Op::Allreduce,
        n as i64,
        "allreduce=6",
        want,
    );
}

#[test]
fn allgather_ring_recursive_doubling_bruck() {
    // b = 64 KiB blocks (n = p·b gathered): ring (p-1)(α + bβ); recursive doubling (p = 16)
    // lg p α + (p-1)bβ; Bruck ⌈lg p⌉α + (p-1)bβ (Thakur et al.); recursive doubling on 13
    // ranks is Bruck (allgather_intra_recursivedoubling: "switching to bruck").
    let b = B;
    for p in [16u32, 13] {
        let k = f64::from(p - 1);
        let (bi, coll) = (b as i64, |a: &str| format!("allgather={a}"));
        both(
            "allgather ring",
            p,
            Op::Allgather,
            bi,
            &coll("ring"),
            k * t(b),
        );
        let log = lg(p) * ALPHA + k * b as f64 * BETA;
        both("allgather bruck", p, Op::Allgather, bi, &coll("bruck"), log);
        both(
            "allgather rd",
            p,
            Op::Allgather,
            bi,
            &coll("recursive_doubling"),
            log,
        );
    }
}

#[test]
fn allgather_neighbor_exchange() {
    // allgather_intra_neighborexchange (Chen et al. 2005), p = 16: one block with the first
    // neighbour, then p/2 - 1 sendrecvs of two blocks: (p/2)α + (p-1)bβ. Odd p = 13:
    // "odd size, switching to ring algorithm": (p-1)(α + bβ).
    let b = B as i64;
    let want = 8.0 * ALPHA + 15.0 * B as f64 * BETA;
    both(
        "allgather neighbor_exchange",
        16,
        Op::Allgather,
        b,
        "allgather=5",
        want,
    );
    both(
        "allgather neighbor_exchange",
        13,
        Op::Allgather,
        b,
        "allgather=5",
        12.0 * t(B),
    );
}

#[test]
fn alltoall_pairwise_bruck_linear() {
    // pairwise: (p-1)(α + bβ); modified Bruck: ⌈lg p⌉ steps, step d moving the blocks with
    // bit d set: p = 16: 4α + 32bβ = lg p α + (n/2) lg p β; p = 13: 6+6+5+5 = 22 blocks.
    for (p, blocks) in [(16u32, 32.0), (13, 22.0)] {
        let k = f64::from(p - 1);
        let bi = B as i64;
        both(
            "alltoall pairwise",
            p,
            Op::Alltoall,
            bi,
            "alltoall=pairwise",
            k * t(B),
        );
        let bruck = lg(p) * ALPHA + blocks * B as f64 * BETA;
        both(
            "alltoall bruck",
            p,
            Op::Alltoall,
            bi,
            "alltoall=bruck",
            bruck,
        );
    }
}

#[test]
fn alltoall_linear_single_port() {
    // alltoall_intra_basic_linear posts the receives from me+1, me+2, … and the sends to
    // me-1, me-2, … all at once. Eager (8 B): each port sends in post order, step k is the
    // permutation me → me-k, every receiver takes one message per step: (p-1)(α + nβ).
    // Unlimited ports: one message time.
    for p in [16u32, 13] {
        let k = f64::from(p - 1);
        one(
            "alltoall linear 8B",
            p,
            Op::Alltoall,
            8,
            "alltoall=linear",
            k * t(8),
        );
        let got = time(Ports::Unlimited, p, Op::Alltoall, 8, 8, "alltoall=linear");
        check(&format!("alltoall linear 8B p={p} unlimited"), got, t(8));
    }
    // Rendezvous blocks (64 KiB) start once both sides are posted: every rank posts
    // everything at 0, so every message is ready at 0 and each send port serves them in
    // the order the rank posted them (me-1, me-2, …): step k is again the permutation
    // me → me-k, and every receive port gets one message per step (from me+k, the k-th
    // receive it posted): (p-1)(α + nβ), the same as eager.
    for p in [16u32, 13] {
        let k = f64::from(p - 1);
        one(
            "alltoall linear 64KiB",
            p,
            Op::Alltoall,
            B as i64,
            "alltoall=linear",
            k * t(B),
        );
    }
}

#[test]
fn reduce_scatter_recursive_halving_and_ring() {
    // n = p·B, one block each. Recursive halving (p = 16): lg p α + ((p-1)/p)n(β + γ);
    // ring: (p-1)(α + Bβ + Bγ) (Thakur et al.).
    //
    // Recursive halving at p = 13 (reduce_scatter_intra_basic_recursivehalving: 5 extra
    // ranks, blocks of the 8 remaining ranks 2B ×5 and B ×3): the even ranks of 0-9 send
    // all 13B to rank+1, which reduces it (P = α + 13Bβ + 13Bγ); ranks 10-12 post at 0
    // but their rendezvous data waits for their partners' receives at P. Halving: mask 4
    // swaps 5B against 8B (the lower ranks 1, 3, 5, 7 receive and reduce 8B:
    // α + 8Bβ + 8Bγ), mask 2 4B each (lower half), mask 1 2B each: the lower ranks are done
    // at P + 3α + 14Bβ + 14Bγ and send their B to 0, 2, 4, 6: 5α + 28Bβ + 27Bγ (the upper
    // half, with smaller blocks, ends earlier). One message each way per rank and step:
    // the same single-port.
    let n = 13 * B;
    let b = B as f64;
    both(
        "reduce_scatter halving",
        13,
        Op::ReduceScatter,
        n as i64,
        "reduce_scatter=2",
        5.0 * ALPHA + 28.0 * b * BETA + 27.0 * b * GAMMA,
    );
    let n = 16 * B;
    let f = 15.0 * B as f64;
    let want = 4.0 * ALPHA + f * (BETA + GAMMA);
    both(
        "reduce_scatter halving",
        16,
        Op::ReduceScatter,
        n as i64,
        "reduce_scatter=2",
        want,
    );
    for p in [16u32, 13] {
        let n = u64::from(p) * B;
        let want = f64::from(p - 1) * (t(B) + g(B));
        both(
            "reduce_scatter ring",
            p,
            Op::ReduceScatter,
            n as i64,
            "reduce_scatter=ring",
            want,
        );
    }
}

#[test]
fn gather_scatter_binomial_and_linear() {
    // Binomial (in-order tree, whole subtrees per message): ⌈lg p⌉α + (p-1)bβ (Thakur
    // et al.); basic_linear one block at a time at the root: (p-1)(α + bβ).
    for p in [16u32, 13] {
        let k = f64::from(p - 1);
        let bi = B as i64;
        let binomial = lg(p) * ALPHA + k * B as f64 * BETA;
        both(
            "gather binomial",
            p,
            Op::Gather,
            bi,
            "gather=binomial",
            binomial,
        );
        both(
            "scatter binomial",
            p,
            Op::Scatter,
            bi,
            "scatter=binomial",
            binomial,
        );
        one(
            "gather linear",
            p,
            Op::Gather,
            bi,
            "gather=linear",
            k * t(B),
        );
        one(
            "scatter linear",
            p,
            Op::Scatter,
            bi,
            "scatter=linear",
            k * t(B),
        );
    }
}

#[test]
fn barriers() {
    // Bruck (dissemination): ⌈lg p⌉α; recursive doubling: lg p α, on 13 ranks lg 8 α plus
    // the extra ranks' entry and release: 5α without port limits (the release is a
    // synchronous send, complete once matched: the model has no acknowledgement message).
    for p in [16u32, 13] {
        both(
            "barrier bruck",
            p,
            Op::Barrier,
            0,
            "barrier=bruck",
            lg(p) * ALPHA,
        );
    }
    both("barrier rd", 16, Op::Barrier, 0, "barrier=3", 4.0 * ALPHA);
    // barrier_intra_doublering: the token goes round twice, 0 → 1 → … → p-1 → 0, one
    // message at a time: 2pα.
    for p in [16u32, 13] {
        both(
            "barrier double_ring",
            p,
            Op::Barrier,
            0,
            "barrier=2",
            2.0 * f64::from(p) * ALPHA,
        );
    }
    // Single port at p = 13: 5 → 4 (first exchange) and 12 → 4 (entry) reach 4 together;
    // 4's port serves the receive 4 posted (12's) first, 5's message at 2α, when 4 is
    // ready for it anyway; 6 → 4 and 7 → 5 (second exchange, sent at α) wait for 4's
    // and 5's ports to 3α, when 4 and 5 need them: every step still ends at kα, 5α.
    both("barrier rd", 13, Op::Barrier, 0, "barrier=3", 5.0 * ALPHA);
}
