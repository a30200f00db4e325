//! Hand-derived α-β-γ times of Open MPI 4.1.4's fixed-tree bcast and reduce algorithms —
//! chain, binary, split_binary and in-order binary — at p = 16 and p = 13, single-port and without port
//! limits (see closed_forms.rs for the model and the notation: T = α + nβ one message of
//! n = 1 MiB, T½ = α + (n/2)β, G = nγ one reduction; 1 MiB messages are rendezvous, so data
//! moves once the receive is posted).
//!
//! Forced as `--coll` does (coll_tuned_bcast/reduce_intra_do_this with the forced-mode MCA
//! defaults): segment size 0 = one segment, chain fan-out 4. Pješivac-Grbović et al.
//! (Cluster Computing 2007) publish these trees' costs for segmented messages without
//! contention; the trees here are the ones 4.1.4 builds:
//! - `ompi_coll_base_topo_build_chain(4, …)`: the p-1 non-roots in 4 chains of
//!   consecutive ranks, the longer ones first: p = 16 → 1-4, 5-8, 9-12, 13-15 (heads 1, 5,
//!   9, 13 in the root's child order); p = 13 → 1-3, 4-6, 7-9, 10-12;
//! - `ompi_coll_base_topo_build_tree(2, …)`: rank s at level l has children s + 2^l and
//!   s + 2^(l+1): 0 → 1, 2; 1 → 3, 5; 2 → 4, 6; 3 → 7, 11; 4 → 8, 12; 5 → 9, 13;
//!   6 → 10, 14; 7 → 15 (p = 13 cuts it at 12).
//!
//! `ompi_coll_base_bcast_intra_generic` isends to every child and waits for all: one send
//! port serves them in child order. `ompi_coll_base_reduce_generic` posts child i+1's
//! receive before waiting for child i and reduces each child's data as it arrives: at most
//! two receives are posted at a time, which delays rendezvous children beyond the second.

mod support;

use replay_engine::ops::Op;
use support::*;

fn tt() -> f64 {
    t(MIB)
}

fn gg() -> f64 {
    g(MIB)
}

/// 1 MiB on both port settings.
fn case(what: &str, p: u32, op: Op, coll: &str, single: f64, unlimited: f64) {
    let n = MIB as i64;
    single_and_unlimited(what, p, op, (n, n), coll, single, unlimited);
}

#[test]
fn bcast_chain() {
    // Single port: the root's port sends to the heads at T, 2T, 3T, 4T; a chain of L ranks
    // then takes (L-1)T more. p = 16: heads of chains of 4, 4, 4, 3 → 4T, 5T, 6T, 6T → 6T;
    // unlimited: every head at T, the longest chain 4 → 4T. p = 13: four chains of 3 →
    // 3T + 3T = 6T single-port, 3T unlimited.
    case(
        "bcast chain",
        16,
        Op::Bcast,
        "bcast=chain",
        6.0 * tt(),
        4.0 * tt(),
    );
    case(
        "bcast chain",
        13,
        Op::Bcast,
        "bcast=chain",
        6.0 * tt(),
        3.0 * tt(),
    );
}

#[test]
fn bcast_binary() {
    // Single port: a rank's second child gets the message 2T after the rank, its first T
    // after. p = 16: the path 0 → 2 → 6 → 14 of second children is 6T (15, the only rank
    // at depth 4, comes at 4T via first children 1, 3, 7); unlimited: depth 4 → 4T.
    // p = 13: deepest second-child paths 0 → 2 → 4 → 12 and 0 → 2 → 6 → 10 are 5T;
    // unlimited: depth 3 → 3T.
    case(
        "bcast binary",
        16,
        Op::Bcast,
        "bcast=binary",
        6.0 * tt(),
        4.0 * tt(),
    );
    case(
        "bcast binary",
        13,
        Op::Bcast,
        "bcast=binary",
        5.0 * tt(),
        3.0 * tt(),
    );
}

#[test]
fn bcast_split_binary() {
    // bcast_intra_split_bintree: the left subtree (odd ranks) carries the first half, the
    // right one (even) the second, with blocking sends (so ports never matter), the root
    // sending to 1 then 2; then left/right neighbours swap halves. p = 16 (even): the root
    // also sends the second half to 15. Arrival times in T½: 1: 1, 2: 2, 3: 2, 5: 3, 4: 3,
    // 6: 4, 7: 3, 11: 4, 9: 4, 13: 5, 8: 4, 12: 5, 10: 5, 14: 6, 15: 4; a rank is free
    // after its own sends, so the pair (13, 14) swaps from 6 to 7 and (5, 6) likewise: 7T½.
    // p = 13 (odd, every rank but the root swaps): the last pairs (3, 4), (5, 6), (9, 10),
    // (11, 12) start at 5 → 6T½.
    let half = t(MIB / 2);
    case(
        "bcast split_binary",
        16,
        Op::Bcast,
        "bcast=split_binary",
        7.0 * half,
        7.0 * half,
    );
    case(
        "bcast split_binary",
        13,
        Op::Bcast,
        "bcast=split_binary",
        6.0 * half,
        6.0 * half,
    );
}

#[test]
fn reduce_chain() {
    // Every chain reduces towards its head: tail → …: a chain of L ranks hands its result
    // to the root (L-1)(T + G) after 0, ready at 3(T + G) (p = 16, L = 4) or 2(T + G)
    // (L = 3). The root posts the receives of heads 1 and 5 at 0, of 9 after reducing 1,
    // of 13 after reducing 5.
    // p = 16 unlimited: 1 arrives 4T + 3G (reduced by 4T + 4G), 5 is there (4T + 5G),
    // 9's data moves once its receive is posted at 4T + 4G (arrives 5T + 4G, reduced
    // 5T + 5G), 13's at 4T + 5G (5T + 5G): 5T + 6G.
    // p = 16 single port: 1 and 5 reach the root together at 3T + 3G, 5 after 1 (posting
    // order): 4T + 3G and 5T + 3G; 9 (posted 4T + 4G) takes the port at 5T + 3G and 13
    // (posted 5T + 4G) at 6T + 3G: reduced 7T + 4G.
    case(
        "reduce chain",
        16,
        Op::Reduce,
        "reduce=chain",
        7.0 * tt() + 4.0 * gg(),
        5.0 * tt() + 6.0 * gg(),
    );
    // p = 13 (heads 1, 4, 7, 10 ready at 2T + 2G) unlimited: 1 at 3T + 2G (reduced
    // 3T + 3G), 4 (3T + 4G), 7 posted 3T + 3G arrives 4T + 3G (4T + 4G), 10 posted
    // 3T + 4G arrives 4T + 4G: 4T + 5G. Single port: 1 then 4 at 3T + 2G and 4T + 2G;
    // 7 at 5T + 2G, 10 at 6T + 2G: 6T + 3G.
    case(
        "reduce chain",
        13,
        Op::Reduce,
        "reduce=chain",
        6.0 * tt() + 3.0 * gg(),
        4.0 * tt() + 5.0 * gg(),
    );
}

#[test]
fn reduce_binary() {
    // Two children per rank, both receives posted at once.
    // p = 16 unlimited: 7 (child 15) sends at T + G; 3 reduces 7 and 11: 2T + 3G; 4, 5, 6
    // (two leaves each): T + 2G; 1 gets 3 at 3T + 3G and 5 at 2T + 2G: 3T + 5G; 2 gets 4
    // and 6 at 2T + 2G: 2T + 4G; the root: 1 at 4T + 5G, 2 at 3T + 4G → 4T + 7G.
    // p = 16 single port: two leaves share their parent's port (4: 8 then 12, reduced
    // 2T + G); 3: 11 [0, T], 7's at 2T + G → 2T + 3G; 1: 5's [2T + G, 3T + G] first,
    // 3's waits to [3T + G, 4T + G] → 4T + 3G; 2: 4 then 6 from 2T + G → 4T + 2G; the root:
    // 2's [4T + 2G, 5T + 2G], 1's after it → 6T + 2G, reduced 6T + 4G.
    case(
        "reduce binary",
        16,
        Op::Reduce,
        "reduce=binary",
        6.0 * tt() + 4.0 * gg(),
        4.0 * tt() + 7.0 * gg(),
    );
    // p = 13 (3 → 7, 11; 4 → 8, 12; 5 → 9; 6 → 10) unlimited: 3, 4 send at T + 2G, 5, 6 at
    // T + G; 1 and 2: 2T + 4G; the root: 3T + 6G. Single port: 3 and 4 reduce their
    // two leaves by 2T + G, 5 and 6 send at T + G; 1 takes 5's then 3's ([2T + G,
    // 3T + G]) → 3T + 3G, 2 likewise; the root's port takes 1's then 2's from 3T + 3G:
    // 5T + 4G.
    case(
        "reduce binary",
        13,
        Op::Reduce,
        "reduce=binary",
        5.0 * tt() + 4.0 * gg(),
        3.0 * tt() + 6.0 * gg(),
    );
}

#[test]
fn reduce_in_order_binary() {
    // reduce_intra_in_order_binary: reduce_generic on `build_in_order_bintree` rooted at
    // p-1, then p-1 sends the result to the root (0). p = 16: 15 → 14, 7; 14 → 13, 10;
    // 13 → 12, 11; 10 → 9, 8; 7 → 6, 3; 6 → 5, 4; 3 → 2, 1; 1 → 0.
    // Unlimited: 13, 10, 6 reduce two leaves (T + 2G), 1 its one (T + G); 14 gets 13 and
    // 10 at 2T + 2G (2T + 4G); 3 gets 2 at T and 1 at 2T + G (2T + 2G); 7 gets 6 at
    // 2T + 2G and 3 at 3T + 2G (3T + 3G); 15 gets 14 at 3T + 4G and 7 at 4T + 3G: 4T + 4G;
    // to rank 0: 5T + 4G. Single port: two leaves share a port (13, 10, 6 done 2T + G);
    // 14 takes 13's then 10's from 2T + G (4T + 2G); 3: 2's [0, T], 1's [T + G, 2T + G]
    // (2T + 2G); 7: 6's [2T + G, 3T + G], 3's [3T + G, 4T + G] (4T + 2G); 15: 14's then
    // 7's from 4T + 2G (6T + 3G); to rank 0: 7T + 3G.
    case(
        "reduce in_order_binary",
        16,
        Op::Reduce,
        "reduce=in_order_binary",
        7.0 * tt() + 3.0 * gg(),
        5.0 * tt() + 4.0 * gg(),
    );
    // p = 13: 12 → 11, 5; 11 → 10, 8; 10 → 9; 8 → 7, 6; 5 → 4, 2; 4 → 3; 2 → 1, 0.
    // Unlimited: 11 and 5 send at 2T + 3G, 12 is done at 3T + 5G, rank 0 at 4T + 5G.
    // Single port: 11 takes 10's [T + G, 2T + G] and 8's [2T + G, 3T + G] (3T + 2G), 5
    // likewise; 12 takes 11's then 5's from 3T + 2G (5T + 3G); rank 0: 6T + 3G.
    case(
        "reduce in_order_binary",
        13,
        Op::Reduce,
        "reduce=in_order_binary",
        6.0 * tt() + 3.0 * gg(),
        4.0 * tt() + 5.0 * gg(),
    );
}
