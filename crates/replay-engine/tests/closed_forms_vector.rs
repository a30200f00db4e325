//! Hand-derived α-β-γ times of Open MPI 4.1.4's alltoallv and allgatherv algorithms and of
//! alltoall linear_sync with a request window (coll_tuned_alltoall_max_requests > 0), at
//! p = 16 and p = 13, single-port and without port limits (model and notation as in
//! closed_forms.rs: α = 1 µs, β = 1 ns/B, T(n) = α + nβ; blocks here are ≥ 16 KiB, so
//! rendezvous: data moves once both sides are posted).
//!
//! The v-collectives are given per-peer byte lists in the trace rows (`send_counts`,
//! `recv_counts`), as a traced program records them.
//!
//! A recurring argument for algorithms made of `ompi_coll_base_sendrecv` steps (irecv,
//! send, wait both): a step's transfer starts when both its ends have finished the previous
//! step, so every rank has finished step i by Σ_{j ≤ i} T(M_j), M_j the largest message of
//! step j; and when a chain of largest messages exists (the rank that received step j's
//! largest message sends or receives one of step j+1's), that bound is reached exactly.

mod support;

use replay_engine::ops::Op;
use support::*;

type Rows = Vec<CountRow>;

/// Per-rank (send counts, recv counts) of an alltoallv where rank r sends c(k) bytes to
/// r + k (mod p).
fn alltoallv_rows(p: u32, c: impl Fn(u32) -> i64) -> Rows {
    (0..p)
        .map(|r| {
            let send = (0..p).map(|d| c((d + p - r) % p)).collect();
            let recv = (0..p).map(|s| c((r + p - s) % p)).collect();
            (send, recv)
        })
        .collect()
}

fn v_time(ports: Ports, p: u32, op: Op, rows: &Rows, coll: &str) -> f64 {
    let me = |r: usize| -> (i64, i64) {
        let (s, v) = &rows[r];
        (s.iter().sum(), v.iter().sum())
    };
    // every row carries the same totals only when the lists are symmetric; the engine
    // takes the per-peer lists, the totals are what a tracer records (rank 0's here)
    let (s, r) = me(0);
    time_lists(ports, p, op, s, r, SAME_DTYPE, Some(rows), coll)
}

const SAME_DTYPE: i32 = replay_engine::trace::SAME;
const K16: u64 = 16 * 1024;

#[test]
fn alltoallv_pairwise_distance_counts() {
    // alltoallv_intra_pairwise: step k (1..p-1) sendrecvs with me+k / me-k (step 0 is the
    // local copy). Rank r sends c_k = k·16 KiB to r + k, so every message of step k has
    // c_k bytes: Σ_k (α + c_k β) = (p-1)α + 16 KiB·p(p-1)/2·β — Thakur et al.'s pairwise
    // exchange (p-1)α + nβ with the per-step sizes summed. One send and one receive per
    // rank per step: the same single-port.
    for p in [16u32, 13] {
        let rows = alltoallv_rows(p, |k| i64::from(k) * K16 as i64);
        let k = f64::from(p - 1);
        let want = k * ALPHA + K16 as f64 * f64::from(p * (p - 1) / 2) * BETA;
        for ports in [Ports::One, Ports::Unlimited] {
            let got = v_time(ports, p, Op::Alltoallv, &rows, "alltoallv=pairwise");
            check(&format!("alltoallv pairwise p={p} {ports:?}"), got, want);
        }
    }
}

#[test]
fn alltoallv_linear() {
    // alltoallv_intra_basic_linear posts the receives from 0, 1, …, p-1 and then the sends
    // to 0, 1, …, p-1 (self skipped), all at once, and waits for all.
    // Unlimited, distance counts c_k = k·16 KiB: every message moves at once, the largest
    // (c_{p-1}) last: α + (p-1)·16 KiB·β.
    for p in [16u32, 13] {
        let rows = alltoallv_rows(p, |k| i64::from(k) * K16 as i64);
        let got = v_time(
            Ports::Unlimited,
            p,
            Op::Alltoallv,
            &rows,
            "alltoallv=linear",
        );
        let want = t(u64::from(p - 1) * K16);
        check(&format!("alltoallv linear p={p} unlimited"), got, want);
    }
    // Single port, equal counts b = 64 KiB. Unlike alltoall_intra_basic_linear (sends to
    // me-1, me-2, …) every rank sends in rank order, so the send ports start r → d at
    // index(d)·T, index(d) = d for d < r, d-1 for d > r (a send port never waits for the
    // receiver's port: the data waits at the receiver's NIC). Receiver d gets its
    // p-1 messages from (d-1)T on (d ≥ 1) and its port serves them back to back in the
    // order of its receives (sources 0, 1, …): done at (d - 1 + p - 1)T. Rank p-1 gets all
    // its p-1 messages at (p-2)T: (2p - 3)(α + bβ), and their senders wait for that too.
    for p in [16u32, 13] {
        let rows = alltoallv_rows(p, |k| if k == 0 { 0 } else { B as i64 });
        let got = v_time(Ports::One, p, Op::Alltoallv, &rows, "alltoallv=linear");
        let want = f64::from(2 * p - 3) * t(B);
        check(&format!("alltoallv linear p={p} single-port"), got, want);
    }
}

/// Allgatherv rows: rank 0 contributes 2b, everybody else b (b = 64 KiB); every rank's row
/// has that recvcounts list and its own block as send count.
fn allgatherv_rows(p: u32) -> Rows {
    let counts: Vec<i64> = (0..p)
        .map(|r| if r == 0 { 2 * B as i64 } else { B as i64 })
        .collect();
    (0..p)
        .map(|r| (vec![counts[r as usize]; 1], counts.clone()))
        .collect()
}

fn allgatherv(ports: Ports, p: u32, coll: &str) -> f64 {
    let rows = allgatherv_rows(p);
    let total: i64 = rows[0].1.iter().sum();
    // the row's send count is the rank's own block; the per-peer list is recvcounts
    let bare: Rows = rows.iter().map(|(_, r)| (Vec::new(), r.clone())).collect();
    time_lists(
        ports,
        p,
        Op::Allgatherv,
        rows[0].0[0],
        total,
        SAME_DTYPE,
        Some(&bare),
        coll,
    )
}

#[test]
fn allgatherv_ring() {
    // allgatherv_intra_ring: step i sends block me-i to me+1 and receives block me-i-1
    // from me-1. Rank 0's 2b block travels one hop per step (rank i forwards it at step i,
    // having received it at step i-1), every step's largest message: (p-1)(α + 2bβ) on
    // both port settings (one send, one receive per rank per step).
    for p in [16u32, 13] {
        let want = f64::from(p - 1) * t(2 * B);
        for ports in [Ports::One, Ports::Unlimited] {
            let got = allgatherv(ports, p, "allgatherv=ring");
            check(&format!("allgatherv ring p={p} {ports:?}"), got, want);
        }
    }
}

#[test]
fn allgatherv_bruck() {
    // allgatherv_intra_bruck: at distance d = 1, 2, 4, … a rank sends its first k blocks
    // (k = d, or p - d once d > p/2) to me-d and receives k from me+d. A message holds
    // rank 0's 2b block when its k blocks starting at the sender include block 0: (k+1)b
    // against kb. Those chain (p = 16: 0 → 15; 15, 0 → 13, 14; 13..0 → 9..12; 9..0 → …;
    // p = 13: 0 → 12; 12, 0 → 10, 11; 10..0 → 6..9; 9..0 → …), so the time is
    // Σ_d (α + (k_d + 1)bβ) = ⌈lg p⌉α + ((p-1) + ⌈lg p⌉)bβ at p = 16 (k = 1, 2, 4, 8) and
    // at p = 13 (k = 1, 2, 4, 5: 16b): Thakur et al.'s Bruck allgather, ⌈lg p⌉α +
    // ((p-1)/p)nβ, plus the one larger block once per step.
    for (p, blocks) in [(16u32, 19.0), (13, 16.0)] {
        let want = lg(p) * ALPHA + blocks * B as f64 * BETA;
        for ports in [Ports::One, Ports::Unlimited] {
            let got = allgatherv(ports, p, "allgatherv=bruck");
            check(&format!("allgatherv bruck p={p} {ports:?}"), got, want);
        }
    }
}

#[test]
fn allgatherv_neighbor_exchange() {
    // allgatherv_intra_neighborexchange, p = 16: step 0 swaps one block with the first
    // neighbour (0 → 1 carries the 2b block: α + 2bβ), steps 1..p/2-1 pass on the two
    // blocks received in the step before; rank 0's block is in one message of every
    // step (3b), forwarded by the rank that just received it: α + 2bβ + 7(α + 3bβ)
    // = 8α + 23bβ. p = 13 (odd): "switching to ring", (p-1)(α + 2bβ).
    for ports in [Ports::One, Ports::Unlimited] {
        let got = allgatherv(ports, 16, "allgatherv=neighbor_exchange");
        let want = 8.0 * ALPHA + 23.0 * B as f64 * BETA;
        check(
            &format!("allgatherv neighbor_exchange p=16 {ports:?}"),
            got,
            want,
        );
        let got = allgatherv(ports, 13, "allgatherv=4");
        check(
            &format!("allgatherv neighbor_exchange p=13 {ports:?}"),
            got,
            12.0 * t(2 * B),
        );
    }
}

#[test]
fn allgatherv_linear_is_gatherv_then_bcast() {
    // allgatherv_intra_basic_default: c_coll gatherv to 0 (coll/basic: the root receives
    // from 1, 2, …, p-1 with blocking receives, the others send blocking: (p-1)(α + bβ)),
    // then c_coll bcast of one element of an indexed type of N = (p+1)b bytes, here forced
    // binomial: ⌈lg p⌉(α + Nβ) single-port, depth·(α + Nβ) unlimited (closed_forms.rs:
    // depth 4 at p = 16, 3 at p = 13). Every other rank is in the bcast before the root.
    for p in [16u32, 13] {
        let gather = f64::from(p - 1) * t(B);
        let n = u64::from(p + 1) * B;
        let coll = "allgatherv=linear,bcast=binomial";
        let got = allgatherv(Ports::One, p, coll);
        check(
            &format!("allgatherv linear p={p} single-port"),
            got,
            gather + lg(p) * t(n),
        );
        let depth = if p == 16 { 4.0 } else { 3.0 };
        let got = allgatherv(Ports::Unlimited, p, coll);
        check(
            &format!("allgatherv linear p={p} unlimited"),
            got,
            gather + depth * t(n),
        );
    }
}

#[test]
fn alltoall_linear_sync_with_a_request_window() {
    // alltoall_intra_linear_sync, max_requests = k < p-1: k receives (from me+1, me+2, …)
    // and k sends (to me-1, me-2, …) posted, each completion replaced by the next at once
    // (ompi_request_wait_any loop). Blocks of b = 64 KiB.
    // Unlimited: round j moves the messages me → me-(jk+1) … me-(jk+k) together (all
    // partners posted them at the same instant): ⌈(p-1)/k⌉(α + bβ).
    // Single port: a send port serves its posted sends in order, one per T, and the
    // receiver of the i-th has posted it by then (it posts its i-th receive when its
    // (i-k)-th completes, at (i-k)T): (p-1)(α + bβ) for any k.
    for p in [16u32, 13] {
        for k in [1u32, 2, 3] {
            let coll = format!("alltoall=linear_sync:max_requests={k}");
            let bi = B as i64;
            let got = time(Ports::One, p, Op::Alltoall, bi, bi, &coll);
            check(
                &format!("alltoall linear_sync k={k} p={p} single-port"),
                got,
                f64::from(p - 1) * t(B),
            );
            let got = time(Ports::Unlimited, p, Op::Alltoall, bi, bi, &coll);
            let rounds = f64::from((p - 1).div_ceil(k));
            check(
                &format!("alltoall linear_sync k={k} p={p} unlimited"),
                got,
                rounds * t(B),
            );
        }
    }
}

#[test]
fn allgatherv_two_procs_only_on_two_ranks() {
    // allgatherv_intra_two_procs: one sendrecv, rank 0's 2b against rank 1's b: α + 2bβ;
    // on any other size MPI_ERR_UNSUPPORTED_OPERATION, so the replay refuses it at 16, 13.
    for ports in [Ports::One, Ports::Unlimited] {
        let got = allgatherv(ports, 2, "allgatherv=two_proc");
        check(&format!("allgatherv two_proc p=2 {ports:?}"), got, t(2 * B));
    }
    for p in [16u32, 13] {
        let rows = allgatherv_rows(p);
        let bare: Rows = rows.iter().map(|(_, r)| (Vec::new(), r.clone())).collect();
        let total: i64 = rows[0].1.iter().sum();
        let got = try_time_lists(
            Ports::One,
            p,
            Op::Allgatherv,
            rows[0].0[0],
            total,
            SAME_DTYPE,
            Some(&bare),
            "allgatherv=two_proc",
        );
        assert!(got.is_err(), "allgatherv two_proc p={p}: {got:?}");
    }
}
