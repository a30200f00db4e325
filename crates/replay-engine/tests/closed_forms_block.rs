//! Hand-derived α-β-γ times of Open MPI 4.1.4's MPI_Reduce_scatter_block algorithms
//! (coll_base_reduce_scatter_block.c: basic_linear, recursivedoubling, recursivehalving,
//! butterfly) at p = 16 and p = 13, single-port and without port limits (model as in
//! closed_forms.rs: α = 1 µs, β = 1 ns/B, γ = 0.5 ns/B). Every rank gets one block of
//! B = 64 KiB (rcount), the vector is pB; Tk = α + kBβ moves k blocks, Gk = kBγ reduces
//! them. All messages are rendezvous.
//!
//! In every algorithm here a rank has at most one send and one receive in flight (pairwise
//! sendrecvs, blocking sends and receives), so single-port and unlimited give the same
//! time; each case checks both.

mod support;

use replay_engine::ops::Op;
use support::*;

fn tk(k: u64) -> f64 {
    t(k * B)
}

fn gk(k: u64) -> f64 {
    g(k * B)
}

fn rsb(p: u32, coll: &str, want: f64) {
    for ports in [Ports::One, Ports::Unlimited] {
        // the row: send = the whole vector, recv = one block (rcount)
        let send = i64::from(p) * B as i64;
        let got = time(ports, p, Op::ReduceScatterBlock, send, B as i64, coll);
        check(&format!("{coll} p={p} {ports:?}"), got, want);
    }
}

#[test]
fn reduce_scatter_block_linear() {
    // reduce_scatter_block_basic_linear: c_coll reduce of the pB vector to 0, then c_coll
    // scatter of one block each; forced here to basic_linear reduce and scatter.
    // reduce_intra_basic_linear at root 0: blocking receives from p-1 (into the result),
    // then from p-2, …, 1 each followed by its reduction, then the own buffer's:
    // (p-1)(α + pBβ + pBγ). scatter_intra_basic_linear: blocking sends to 1, …, p-1, the
    // receivers long posted: (p-1)(α + Bβ).
    for p in [16u32, 13] {
        let k = f64::from(p - 1);
        let n = u64::from(p);
        let want = k * (tk(n) + gk(n)) + k * tk(1);
        rsb(
            p,
            "reduce_scatter_block=linear,reduce=linear,scatter=linear",
            want,
        );
    }
}

#[test]
fn reduce_scatter_block_recursive_doubling() {
    // reduce_scatter_block_intra_recursivedoubling: at distance mask a rank swaps with
    // rank ^ mask every block outside its partner's subtree and reduces what it got.
    // p = 16: (p - mask) blocks at masks 1, 2, 4, 8: 15 + 14 + 12 + 8 = 49 blocks,
    // 4α + 49B(β + γ) = lg p α + n(lg p - (p-1)/p)(β + γ) (Thakur et al., recursive
    // doubling reduce-scatter, n = pB).
    rsb(
        16,
        "reduce_scatter_block=recursive_doubling",
        4.0 * ALPHA + 49.0 * B as f64 * (BETA + GAMMA),
    );
    // p = 13. mask 1: 0-11 swap 12 blocks (T12 + G12); 12 has no partner (13 ≥ p) and its
    // subtree half-search is empty. mask 2: 0-11 swap 11 (E2 = T12 + G12 + T11 + G11).
    // mask 4: 0-7 swap 9 (E2 + T9 + G9); 8 ↔ 12 from E2 (8 sends 9, gets 12: E2 + T12;
    // 12 reduces 9); 9, 10, 11 have no partner and 12's subtree ends beyond p, so the
    // half-search runs with one rank holding data (nprocs_alldata = 1): 8 sends its 12
    // received blocks to 10, then to 9 (blocking), 10 passes them to 11; all four reduce
    // 12: E2 + 3T12 + G12. mask 8: 0 ↔ 8, 1 ↔ 9, 2 ↔ 10, 3 ↔ 11, 4 ↔ 12 (the lower rank
    // gets 8 blocks, sends 5); 5, 6, 7 get their 8 blocks from 1, 2, 3 (nprocs_alldata =
    // 5). 1 ↔ 9 starts at 9's E2 + 3T12 + G12, takes T8, then 1 sends 8 blocks to 5 (T8)
    // and both reduce (G8): 4T12 + T11 + 2T8 + 2G12 + G11 + G8 = 7α + 75Bβ + 43Bγ.
    let want = 4.0 * tk(12) + tk(11) + 2.0 * tk(8) + 2.0 * gk(12) + gk(11) + gk(8);
    rsb(13, "reduce_scatter_block=recursive_doubling", want);
}

#[test]
fn reduce_scatter_block_recursive_halving() {
    // reduce_scatter_block_intra_recursivehalving, p = 16: halves of 8, 4, 2, 1 blocks:
    // 4α + 15B(β + γ) = lg p α + ((p-1)/p)n(β + γ) (Thakur et al.).
    rsb(
        16,
        "reduce_scatter_block=recursive_halving",
        4.0 * ALPHA + 15.0 * B as f64 * (BETA + GAMMA),
    );
    // p = 13 (pof2 = 8, rem = 5): the even ranks of 0-9 send all 13 blocks to rank+1,
    // which reduces them (T13 + G13); virtual blocks 0-4 stand for two blocks. Mask 4:
    // the lower half (vranks 0-3: ranks 1, 3, 5, 7) gets 8 blocks and sends 5 (T8 + G8);
    // mask 2: 4 each (T4 + G4); mask 1: 2 (T2 + G2); then ranks 1, 3, 5, 7, 9 send the
    // excluded even ranks their block (T1): 5α + 28Bβ + 27Bγ (the upper half has fewer
    // blocks at every step).
    let want = tk(13) + gk(13) + tk(8) + gk(8) + tk(4) + gk(4) + tk(2) + gk(2) + tk(1);
    rsb(13, "reduce_scatter_block=recursive_halving", want);
}

#[test]
fn reduce_scatter_block_butterfly() {
    // reduce_scatter_block_intra_butterfly_pof2, p = 16: sendrecv half of the remaining
    // vector at distances 1, 2, 4, 8 (8, 4, 2, 1 blocks) and reduce it:
    // 4α + 15B(β + γ).
    rsb(
        16,
        "reduce_scatter_block=butterfly",
        4.0 * ALPHA + 15.0 * B as f64 * (BETA + GAMMA),
    );
    // p = 13: the same fold (T13 + G13 at ranks 1, 3, 5, 7, 9; 10, 11, 12 wait for their
    // partners, except 11 ↔ 12 at mask 1, which start at 0). Distance doubling over the
    // virtual blocks (0-4 double): mask 1, even vranks get [0..3] = 8 blocks, send
    // [4..7] = 5 (T8; G8 even, G5 odd); mask 2, vranks 0, 2, 4, 6 swap 4 (T4 + G4), 1, 3,
    // 5, 7 swap 3 against 2 (T3); mask 4, 0 ↔ 4 and 2 ↔ 6 swap 2 (T2 + G2), the odd ones
    // less. So vranks 0, 2, 4, 6 end at X = T13 + G13 + T8 + G8 + T4 + G4 + T2 + G2, the
    // others earlier. Mirror permutation (bit reversal on 3 bits): vrank 4 (rank 9) sends
    // excluded rank 2 its block (T1), then swaps with its mirror vrank 1 (rank 3): T1;
    // vrank 6 (rank 11) sends rank 6 its block, then swaps with vrank 3 (rank 7): X + 2T1
    // = 6α + 29Bβ + 27Bγ.
    let x = tk(13) + gk(13) + tk(8) + gk(8) + tk(4) + gk(4) + tk(2) + gk(2);
    rsb(13, "reduce_scatter_block=butterfly", x + 2.0 * tk(1));
}
