//! Hand-derived α-β-γ times of Open MPI 4.1.4's k-nomial bcast and of the segmented tree
//! algorithms — chain, binary and pipeline bcast, chain and pipeline reduce — at p = 16 and
//! p = 13, single-port and without port limits (model and notation as in closed_forms.rs:
//! α = 1 µs, β = 1 ns/B, γ = 0.5 ns/B, T = α + nβ, G = nγ; messages above 8 KiB are
//! rendezvous, so data moves once the receive is posted).
//!
//! Segments: 4.1.4's fixed rules call `ompi_coll_tuned_{bcast,reduce}_intra_do_this(...,
//! alg, 0, 0)` (coll_tuned_decision_fixed.c), i.e. segment size 0 = one segment, so only a
//! forced `segsize` (coll_tuned_<coll>_algorithm_segmentsize) segments. With
//! `segsize=128K` a 1 MiB message is ns = 8 segments of ms = 128 KiB:
//! S = α + ms β one segment, g = ms γ its reduction, U = S + g.
//!
//! `ompi_coll_base_bcast_intra_generic` (coll_base_bcast.c): the root isends segment k to
//! every child and waits for all before segment k+1; an inner node posts the receive of
//! segment k+1 before it waits for segment k and forwards it (two receives posted), waiting
//! for its sends before the next iteration; a leaf keeps two receives posted.
//! `ompi_coll_base_reduce_generic` (coll_base_reduce.c): per segment and child, post that
//! receive, wait for the one posted before, reduce it; after a segment's last child it
//! reduces and sends the segment to the parent (blocking); leaves send segments with
//! blocking sends (max_outstanding_reqs 0).

mod support;

use replay_engine::ops::Op;
use support::*;

const MS: u64 = 128 * 1024;
const NS: f64 = 8.0;

fn s() -> f64 {
    t(MS)
}

fn gs() -> f64 {
    g(MS)
}

/// 1 MiB on both port settings.
fn case(what: &str, p: u32, op: Op, coll: &str, single: f64, unlimited: f64) {
    let n = MIB as i64;
    single_and_unlimited(what, p, op, (n, n), coll, single, unlimited);
}

#[test]
fn bcast_knomial_radix_4() {
    // ompi_coll_base_bcast_intra_knomial: bcast_intra_generic over
    // ompi_coll_base_topo_build_kmtree(root, radix = coll_tuned_bcast_knomial_radix = 4),
    // one segment. build_kmtree: the parent of v is v rounded down to a multiple of
    // radix·mask for the first mask (1, 4, 16, …) that does not divide v; the children are
    // v + r·mask for the mask below that, largest mask first, r = 1..radix-1.
    // p = 16: 0 → 4, 8, 12, 1, 2, 3; 4 → 5, 6, 7; 8 → 9, 10, 11; 12 → 13, 14, 15.
    // Single port: the root's port sends in child order, 4 at T, 8 at 2T, 12 at 3T, 1, 2,
    // 3 at 4T, 5T, 6T; 12 then reaches 15 at 6T (4's and 8's children by 4T and 5T): 6T.
    // Unlimited: two levels, 2T (Pješivac-Grbović et al.'s tree cost, one segment: depth ×
    // (α + nβ)).
    // p = 13: 0 → 4, 8, 12, 1, 2, 3 (12 is a leaf: 13, 14, 15 do not exist); 4 → 5, 6, 7;
    // 8 → 9, 10, 11. Single port: 3 gets it at 6T (8's children by 5T): 6T; unlimited 2T.
    let tt = t(MIB);
    case(
        "bcast knomial r=4",
        16,
        Op::Bcast,
        "bcast=knomial",
        6.0 * tt,
        2.0 * tt,
    );
    case(
        "bcast knomial r=4",
        13,
        Op::Bcast,
        "bcast=7",
        6.0 * tt,
        2.0 * tt,
    );
}

#[test]
fn bcast_knomial_radix_2_is_a_farthest_first_binomial() {
    // radix 2: the root's children are 8, 4, 2, 1 (farthest first, unlike build_bmtree's
    // 1, 2, 4, 8), 8 → 12, 10, 9; 12 → 14, 13; 14 → 15; … Single port: the root's k-th
    // child gets the message at kT and roots a subtree of depth lg p - k, which it feeds
    // the same way, so everyone has it by ⌈lg p⌉T (Thakur et al.'s binomial broadcast,
    // ⌈lg p⌉(α + nβ)), p = 16 and p = 13 (p = 13: 0 → 8, 4, 2, 1; 8 → 12, 10, 9; 10 → 11;
    // 4 → 6, 5; 6 → 7; 2 → 3: 9, 10 → 11, 5, 6 → 7, 3, 1 are reached at 4T). Unlimited: the
    // depth, popcount of the deepest vrank: 4T at p = 16 (15), 3T at p = 13 (7, 11).
    let tt = t(MIB);
    case(
        "bcast knomial r=2",
        16,
        Op::Bcast,
        "bcast=knomial:radix=2",
        4.0 * tt,
        4.0 * tt,
    );
    case(
        "bcast knomial r=2",
        13,
        Op::Bcast,
        "bcast=knomial:radix=2",
        4.0 * tt,
        3.0 * tt,
    );
}

#[test]
fn bcast_pipeline_segmented_both_ports() {
    // bcast_intra_pipeline = generic over build_chain(1): 0 → 1 → … → p-1. Rank r has
    // segment k at (r + k)S: its parent forwards k once it has it ((r-1+k)S) and its send
    // of k-1 is done ((r-1+k-1)S + S), and r posted the receive of k when its own send of
    // k-2 was done ((r+k-2)S + S) — never later. The last rank has the last segment at
    // (p - 1 + ns - 1)S = (p + ns - 2)(α + ms β) (Pješivac-Grbović et al., pipeline
    // broadcast). One send and one receive per rank at a time: the same single-port.
    for p in [16u32, 13] {
        let want = (f64::from(p) + NS - 2.0) * s();
        case(
            "bcast pipeline 128K",
            p,
            Op::Bcast,
            "bcast=pipeline:segsize=128K",
            want,
            want,
        );
    }
    // segsize 100000 B: ns = ⌈1048576 / 100000⌉ = 11 segments, the last of
    // mL = 1048576 - 10·100000 = 48576 B. Segments 0..9 as above; the last leaves the
    // root at (ns-1)S and rank r forwards it at (r + ns - 1)S, once its send of segment
    // ns-2 is done (the short segment has long arrived): the last rank has it at
    // (p + ns - 3)S + (α + mL β).
    let (m, ml) = (100_000u64, MIB - 10 * 100_000);
    for p in [16u32, 13] {
        let want = (f64::from(p) + 11.0 - 3.0) * t(m) + t(ml);
        case(
            "bcast pipeline 100000",
            p,
            Op::Bcast,
            "bcast=pipeline:segsize=100000",
            want,
            want,
        );
    }
}

#[test]
fn bcast_chain_segmented() {
    // bcast_intra_chain, fan-out 4, 8 segments: heads 1, 5, 9, 13 (chains 1-4, 5-8, 9-12,
    // 13-15; p = 13: 1, 4, 7, 10, chains of 3).
    // Single port: the root sends segment k to the 4 heads one after another and waits for
    // all four, so head j (j = 1..4 in child order) has segment k at (4k + j)S; a chain
    // forwards one segment per S, faster than that, so the tail of a chain of L ranks has
    // it L-1 hops later. Last segment (k = 7): p = 16: max(28+1+3, 28+2+3, 28+3+3,
    // 28+4+2) = 34S; p = 13: 28 + 4 + 2 = 34S.
    // Unlimited: the heads get segment k at (k+1)S and every chain is a pipeline: the tail
    // of a chain of L has the last segment at (ns + L - 1)S: 11S at p = 16 (L = 4), 10S at
    // p = 13 (L = 3).
    let ss = s();
    case(
        "bcast chain 128K",
        16,
        Op::Bcast,
        "bcast=chain:segsize=128K",
        34.0 * ss,
        11.0 * ss,
    );
    case(
        "bcast chain 128K",
        13,
        Op::Bcast,
        "bcast=chain:segsize=128K",
        34.0 * ss,
        10.0 * ss,
    );
}

#[test]
fn bcast_binary_segmented() {
    // bcast_intra_bintree, 8 segments (tree as in closed_forms_trees.rs: 0 → 1, 2; 1 → 3,
    // 5; 2 → 4, 6; 3 → 7, 11; 4 → 8, 12; 5 → 9, 13; 6 → 10, 14; 7 → 15).
    // Unlimited: a node at depth d has segment k at (d + k)S (it sends k to both children
    // at once when it has it, its sends of k-1 having ended then, and a child posts the
    // receive of k when its own sends of k-2 end at (d+1+k-2)S + S): the deepest leaf has
    // the last segment at (D + ns - 1)S — Pješivac-Grbović et al.'s segmented tree,
    // (depth + ns - 1)(α + ms β): 11S at p = 16 (D = 4), 10S at p = 13 (D = 3).
    // Single port: a node sends each segment to its two children one after the other
    // (2S per segment, the root's rate), and a node receives one segment per 2S, so every
    // node forwards segment k exactly 2kS after segment 0 (the receive of k is posted in
    // time: a first child's sends of k-2 end S before its parent starts k, a second
    // child's exactly when its parent starts k). The last leaf has segment ns-1 at its
    // one-segment single-port time plus 2(ns-1)S: p = 16, rank 14 (0 → 2 → 6 → 14, all
    // second children) 6S + 14S = 20S; p = 13, ranks 10 and 12: 5S + 14S = 19S.
    let ss = s();
    case(
        "bcast binary 128K",
        16,
        Op::Bcast,
        "bcast=binary:segsize=128K",
        20.0 * ss,
        11.0 * ss,
    );
    case(
        "bcast binary 128K",
        13,
        Op::Bcast,
        "bcast=binary:segsize=128K",
        19.0 * ss,
        10.0 * ss,
    );
}

#[test]
fn reduce_pipeline_segmented_both_ports() {
    // reduce_intra_pipeline = reduce_generic over build_chain(1): p-1 → p-2 → … → 0,
    // 8 segments. Number the ranks by their distance d from the leaf p-1 (the root is
    // d = p-1). A node with d ≥ 1 starts sending segment k to its parent at (d + k)U and is
    // done (d + k + 1)U - g: it has the segment from its child (by (d+k)U - g), its send
    // of k-1 ended then, it reduces (g), and its parent posted the receive of k when the
    // parent's send of k-2 ended ((d+k)U - g). The leaf sends k by (k+1)U - g. The root
    // gets segment ns-1 at (p - 2 + ns)U - g and reduces it: (p + ns - 2)(α + msβ + msγ)
    // (Pješivac-Grbović et al., pipeline reduce). One send and one receive per rank at a
    // time: the same single-port.
    for p in [16u32, 13] {
        let want = (f64::from(p) + NS - 2.0) * (s() + gs());
        case(
            "reduce pipeline 128K",
            p,
            Op::Reduce,
            "reduce=pipeline:segsize=128K",
            want,
            want,
        );
    }
}

#[test]
fn reduce_pipeline_leaf_window_changes_nothing() {
    // reduce_generic's leaf with max_outstanding_reqs = 2 < ns: two synchronous isends in
    // flight, each completion replaced by the next segment. The leaf may now post segment
    // k when segment k-2 is done instead of k-1, but its parent still posts the receive
    // of k only after sending k-2 up ((d+k)U - g above), and single-port its send port
    // still frees only when segment k-1 is delivered: the leaf sends no later than with
    // blocking sends, and its parent never waited for the leaf. (p + ns - 2)U as above.
    for p in [16u32, 13] {
        let want = (f64::from(p) + NS - 2.0) * (s() + gs());
        case(
            "reduce pipeline 128K max_requests=2",
            p,
            Op::Reduce,
            "reduce=pipeline:segsize=128K:max_requests=2",
            want,
            want,
        );
    }
}

#[test]
fn reduce_chain_segmented() {
    // reduce_intra_chain, fan-out 4, 8 segments. p = 16: chains 1-4, 5-8, 9-12, 13-15
    // reduce towards their heads, which are pipelines as above: head 1, 5, 9 (d = 3) can
    // start sending segment 0 at 3U, head 13 (d = 2) at 2U. The root handles its 32
    // (segment, head) messages in order j = 4k + i: iteration j posts receive j, waits for
    // j-1 and reduces it (one g each; iteration 32 reduces the last), so two receives are
    // posted at a time.
    // Single port: the root's receive port takes one message at a time, from 3U on:
    // message j arrives 3U + (j+1)S (receive j is posted when j-2 is reduced, g < S after
    // j-2 arrived, the heads, one segment per 4S, are always ready): the last at
    // 3U + 32S, reduced: 3U + 32S + g. p = 13 (chains of 3, heads at d = 2): 2U + 32S + g.
    // Unlimited: the two posted receives overlap. With E_j the end of iteration j and
    // a_j the arrival of message j: E_j = max(a_{j-1}, E_{j-1}) + g, a_j = E_{j-1} + S
    // (the heads are ready), E_0 = 0, a_0 = a_1 = 3U + S; by induction E_j = 3U +
    // ⌈j/2⌉S + (⌊j/2⌋ + 1)g for j ≥ 1 (the steps alternate g and S, both ≥ g), and
    // E_32 = max(a_31, E_31) + g = 3U + 16S + 17g. p = 13: 2U + 16S + 17g.
    let (ss, gg) = (s(), gs());
    let u = ss + gg;
    case(
        "reduce chain 128K",
        16,
        Op::Reduce,
        "reduce=chain:segsize=128K",
        3.0 * u + 32.0 * ss + gg,
        3.0 * u + 16.0 * ss + 17.0 * gg,
    );
    case(
        "reduce chain 128K",
        13,
        Op::Reduce,
        "reduce=chain:segsize=128K",
        2.0 * u + 32.0 * ss + gg,
        2.0 * u + 16.0 * ss + 17.0 * gg,
    );
}

#[test]
fn fixed_rules_never_segment() {
    // 4.1.4's fixed rules pass segsize 0 to *_intra_do_this (coll_tuned_decision_fixed.c),
    // so the trees they pick run one segment: no override, the decision of decision.rs.
    let (tt, gg) = (t(MIB), g(MIB));
    // reduce, 1 MiB: p = 16 and p = 13 both pick binomial (5): 4(T + G) at p = 16
    // (closed_forms.rs), 4T + 3G single-port / 3T + 4G unlimited at p = 13
    // (closed_forms_composed.rs) — with segments it would be far less (the pipeline).
    case(
        "reduce fixed 1MiB",
        16,
        Op::Reduce,
        "",
        4.0 * (tt + gg),
        4.0 * (tt + gg),
    );
    case(
        "reduce fixed 1MiB",
        13,
        Op::Reduce,
        "",
        4.0 * tt + 3.0 * gg,
        3.0 * tt + 4.0 * gg,
    );
    // bcast, p = 13 (row comm_size < 16): 32 B picks binary (5), eager messages, one
    // segment: 5T(32) single-port, 3T(32) unlimited (closed_forms_trees.rs: the eager
    // messages leave as the rendezvous ones do, every receive being posted at once);
    // p = 16 (row < 32): 8 B picks knomial (7) with coll_tuned_bcast_knomial_radix 4:
    // 6T(8) single-port, 2T(8) unlimited (above).
    for (p, n, single, free) in [(13u32, 32u64, 5.0, 3.0), (16, 8, 6.0, 2.0)] {
        let ni = n as i64;
        let got = time(Ports::One, p, Op::Bcast, ni, ni, "");
        check(
            &format!("bcast fixed {n}B p={p} single-port"),
            got,
            single * t(n),
        );
        let got = time(Ports::Unlimited, p, Op::Bcast, ni, ni, "");
        check(
            &format!("bcast fixed {n}B p={p} unlimited"),
            got,
            free * t(n),
        );
    }
}

#[test]
fn reduce_binary_two_segments_at_13() {
    // reduce_intra_binary, segsize 512 KiB: two segments (S = α + 512 KiB β, g = 512 KiB γ;
    // S > 2g). Tree at p = 13: 0 ← 1, 2; 1 ← 3, 5; 2 ← 4, 6; 3 ← 7, 11; 4 ← 8, 12; 5 ← 9;
    // 6 ← 10. reduce_generic at a node with children c0, c1: post r(0,c0), r(0,c1) at 0;
    // wait r(0,c0), reduce (g), post r(1,c0); wait r(0,c1), reduce, send segment 0 up
    // (blocking); post r(1,c1); wait r(1,c0), reduce; wait r(1,c1), reduce, send segment 1.
    // With one child: post r(0), r(1); wait r(0), reduce, send 0; wait r(1), reduce, send 1.
    // Leaves send both segments with blocking sends; a send starts once the parent posted
    // the receive.
    // Unlimited: 3 (and 4): leaves' segment 0 at S, reduced S + 2g, sent to 1 by 2S + 2g;
    // 7's segment 1 (posted S + g) at 2S + g, 11's (posted 2S + 2g) at 3S + 2g: 3 is
    // done 3S + 3g. 5 (and 6): 9's segments at S and 2S, sends segment 0 S + g → 2S + g,
    // has segment 1 reduced at 2S + 2g. 1 (and 2): 3's segment 0 at 2S + 2g, 5's at
    // 2S + g: sends to the root 2S + 4g → 3S + 4g; posts 3's segment 1 at 2S + 3g
    // (arrives 4S + 3g), 5's at 3S + 4g (4S + 4g): segment 1 ready 4S + 5g. The root: both
    // segment 0s at 3S + 4g (reduced 3S + 6g), both segment 1s from 4S + 5g:
    // 5S + 5g, reduced 5S + 7g.
    // Single port: 3's receive port takes 7's then 11's segment 0 (S, 2S), 7's segment 1
    // [2S, 3S], 11's (posted when 3 has sent segment 0) after; 3 sends segment 0 from
    // 2S + g, but 1's port is busy with 5's segment 0 [S + g, 2S + g], so [2S + g,
    // 3S + g]; 11's segment 1 [3S + g, 4S + g]: 3 has segment 1 at 4S + 2g. 5: 9's at S
    // and 2S, segment 1 ready 2S + 2g. 1: reduces 3's segment 0 by 3S + 2g, 5's by
    // 3S + 3g and sends it to the root, whose port takes 1's [3S + 3g, 4S + 3g] and then
    // 2's (symmetric) [4S + 3g, 5S + 3g]. 1's port: 3's segment 1 [4S + 2g, 5S + 2g], 5's
    // (posted 4S + 3g) [5S + 2g, 6S + 2g]: 1 has segment 1 at 6S + 3g; 2, whose send
    // ended S later, posts 6's segment 1 at 5S + 3g and has it at 6S + 3g, ready
    // 6S + 4g. The root reduces 1's segment 0 (4S + 4g) and 2's (5S + 4g), gets 1's
    // segment 1 [6S + 3g, 7S + 3g] and 2's [7S + 3g, 8S + 3g]: 8S + 4g.
    let (ss, gg) = (t(512 * 1024), g(512 * 1024));
    case(
        "reduce binary 512K",
        13,
        Op::Reduce,
        "reduce=binary:segsize=512K",
        8.0 * ss + 4.0 * gg,
        5.0 * ss + 7.0 * gg,
    );
}

#[test]
fn reduce_binary_two_segments_at_16() {
    // As above at p = 16: 0 ← 1, 2; 1 ← 3, 5; 2 ← 4, 6; 3 ← 7, 11; 4 ← 8, 12; 5 ← 9, 13;
    // 6 ← 10, 14; 7 ← 15. With t1 (first segment of c0 reduced, receive (1, c0) posted),
    // t2 (segment 0 ready), t3 (segment 0 delivered up, receive (1, c1) posted) and t5
    // (segment 1 ready) per node:
    // Unlimited: 7 sends segment 0 S + g → 2S + g, has segment 1 at 2S + 2g; 4, 5, 6 (two
    // leaves) send segment 0 by 2S + 2g, segment 1 ready 3S + 3g; 3: t1 = 2S + 2g,
    // t2 = 2S + 3g, t3 = 3S + 3g, 7's segment 1 at 3S + 2g, 11's at 4S + 3g: t5 = 4S + 4g;
    // 1: 3's segment 0 at 3S + 3g, 5's at 2S + 2g: t1 = 3S + 4g, t2 = 3S + 5g, t3 =
    // 4S + 5g; 3's segment 1 at 5S + 4g, 5's (posted t3) at 5S + 5g: t5 = 5S + 6g;
    // 2: t1 = 2S + 3g, t2 = 2S + 4g, t3 = 3S + 4g, t5 = 4S + 5g; the root: t1 = 4S + 6g,
    // t2 = 4S + 7g, 1's segment 1 at 6S + 6g, 2's at 5S + 7g: 6S + 8g.
    // Single port: 5's port takes 9's then 13's segment 0 (S, 2S) and 9's segment 1
    // (posted S + g) [2S, 3S]: 5 sends segment 0 [2S + g, 3S + g], 13's segment 1 (posted
    // then) [3S + g, 4S + g]: t5 = 4S + 2g; 4 and 6 the same except that 2's port takes
    // 4's segment 0 [2S + g, 3S + g] before 6's [3S + g, 4S + g] (t5: 4S + 2g and
    // 5S + 2g). 3: 11's segment 0 [0, S], 7's (sent S + g) [S + g, 2S + g], 7's segment
    // 1 [2S + 2g, 3S + 2g]; segment 0 to 1 from 2S + 3g, after 5's on 1's port:
    // [3S + g, 4S + g]; 11's segment 1 (posted 4S + g) [4S + g, 5S + g]: t5 = 5S + 2g.
    // 1: t1 = 4S + 2g, t2 = 4S + 3g; 2: t1 = 3S + 2g, t2 = 4S + 2g. The root's port takes
    // 2's segment 0 [4S + 2g, 5S + 2g] and then 1's [5S + 2g, 6S + 2g]. 2: 4's segment 1
    // [4S + 2g, 5S + 2g], 6's (posted 5S + 2g) [5S + 2g, 6S + 2g]: t5 = 6S + 3g. 1: 3's
    // segment 1 [5S + 2g, 6S + 2g], 5's (posted 6S + 2g) [6S + 2g, 7S + 2g]:
    // t5 = 7S + 3g. The root: t1 = 6S + 3g, t2 = 6S + 4g (posts 2's segment 1), 2's
    // segment 1 [6S + 4g, 7S + 4g], 1's (ready 7S + 3g) after it [7S + 4g, 8S + 4g]:
    // 8S + 6g.
    let (ss, gg) = (t(512 * 1024), g(512 * 1024));
    case(
        "reduce binary 512K",
        16,
        Op::Reduce,
        "reduce=binary:segsize=512K",
        8.0 * ss + 6.0 * gg,
        6.0 * ss + 8.0 * gg,
    );
}
