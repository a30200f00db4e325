//! The seven cases of issue 22 at p = 16 (α = 1 µs, β = 1 ns/B, γ = 0.5 ns/B, OSU's
//! sizes: alltoall carries the per-peer block), each against the time Open MPI 4.1.4's
//! code gives under the α-β-γ model, derived here from α, β and γ.

mod support;

use replay_engine::ops::Op;
use support::*;

const P: u32 = 16;

#[test]
fn reduce_binomial_reduces_each_child_as_it_arrives() {
    // ompi_coll_base_reduce_generic: the receive of child i+1 is posted before child i is
    // waited for and reduced, so the chain 15→14→12→8→0 costs one message and one
    // reduction per hop: 4(α + nβ + nγ), not 4(α + nβ) + 10nγ.
    let n = MIB as i64;
    both(
        "reduce binomial 1MiB",
        P,
        Op::Reduce,
        n,
        "reduce=binomial",
        4.0 * (t(MIB) + g(MIB)),
    );
}

#[test]
fn bcast_linear_is_serialised_at_the_root() {
    // bcast_intra_basic_linear isends p-1 copies; one send port: 15(α + nβ).
    let n = MIB as i64;
    one(
        "bcast linear 1MiB",
        P,
        Op::Bcast,
        n,
        "bcast=linear",
        15.0 * t(MIB),
    );
    let free = time(Ports::Unlimited, P, Op::Bcast, n, n, "bcast=linear");
    check("bcast linear 1MiB unlimited", free, t(MIB));
}

#[test]
fn alltoall_linear_is_port_bound_and_linear_sync_posts_everything() {
    // alltoall_intra_basic_linear posts the receives from me+1, me+2, … then the sends to
    // me-1, me-2, …; the blocks are rendezvous, all ready at 0, and one send port serves
    // them in that order, so each of the 15 steps is a permutation (me → me-k) that every
    // receive port takes one message of: 15(α + nβ) (the issue's ≥ 15nβ, plus 15α).
    let n = MIB as i64;
    one(
        "alltoall linear 1MiB",
        P,
        Op::Alltoall,
        n,
        "alltoall=linear",
        15.0 * t(MIB),
    );
    // coll_tuned_alltoall_max_requests defaults to 0, and alltoall_intra_linear_sync with
    // max_requests 0 posts every request at once: the same program as linear.
    for ports in [Ports::One, Ports::Unlimited] {
        let lin = time(ports, P, Op::Alltoall, n, n, "alltoall=linear");
        let sync = time(ports, P, Op::Alltoall, n, n, "alltoall=linear_sync");
        check(
            &format!("alltoall linear_sync = linear {ports:?}"),
            sync,
            lin,
        );
    }
}

/// basic_linear allreduce without port limits: reduce_intra_basic_linear at root 0 (the
/// message of rank p-1 lands in the result, the other p-2 and the root's own buffer are
/// reduced in turn: α + nβ + (p-1)nγ), then bcast_intra_basic_linear (α + nβ).
fn allreduce_linear(n: u64) -> f64 {
    2.0 * t(n) + f64::from(P - 1) * g(n)
}

#[test]
fn allreduce_rabenseifner_falls_back_below_pof2_elements() {
    // allreduce_intra_redscat_allgather: "if (count < nprocs_pof2 || !ompi_op_is_commute(op))"
    // → allreduce_intra_basic_linear. 8 one-byte elements < 16.
    check(
        "allreduce rabenseifner 8B unlimited",
        time(
            Ports::Unlimited,
            P,
            Op::Allreduce,
            8,
            8,
            "allreduce=rabenseifner",
        ),
        allreduce_linear(8),
    );
    for ports in [Ports::One, Ports::Unlimited] {
        let rab = time(ports, P, Op::Allreduce, 8, 8, "allreduce=rabenseifner");
        let lin = time(ports, P, Op::Allreduce, 8, 8, "allreduce=linear");
        check(
            &format!("allreduce rabenseifner 8B = linear {ports:?}"),
            rab,
            lin,
        );
    }
}

#[test]
fn reduce_rabenseifner_falls_back_below_pof2_elements() {
    // reduce_intra_redscat_gather: the same test → reduce_intra_basic_linear:
    // α + nβ + (p-1)nγ without port limits.
    let want = t(8) + f64::from(P - 1) * g(8);
    let got = time(Ports::Unlimited, P, Op::Reduce, 8, 8, "reduce=rabenseifner");
    check("reduce rabenseifner 8B unlimited", got, want);
    for ports in [Ports::One, Ports::Unlimited] {
        let rab = time(ports, P, Op::Reduce, 8, 8, "reduce=rabenseifner");
        let lin = time(ports, P, Op::Reduce, 8, 8, "reduce=linear");
        check(
            &format!("reduce rabenseifner 8B = linear {ports:?}"),
            rab,
            lin,
        );
    }
}

#[test]
fn four_doubles_fall_back_on_their_element_count() {
    // A program's MPI_Allreduce of 4 MPI_DOUBLE: 32 bytes but 4 elements < 16, so
    // rabenseifner is basic_linear; the same 32 bytes as MPI_CHAR (32 elements) run
    // redscat_allgather proper: 2 lg p α + 2((p-1)/p)nβ + ((p-1)/p)nγ.
    for ports in [Ports::One, Ports::Unlimited] {
        let rab = time_typed(ports, P, Op::Allreduce, 32, 32, 8, "allreduce=rabenseifner");
        let lin = time_typed(ports, P, Op::Allreduce, 32, 32, 8, "allreduce=linear");
        check(
            &format!("allreduce 4 doubles rabenseifner = linear {ports:?}"),
            rab,
            lin,
        );
    }
    let doubles = time_typed(Ports::Unlimited, P, Op::Allreduce, 32, 32, 8, "allreduce=6");
    check(
        "allreduce 4 doubles unlimited",
        doubles,
        allreduce_linear(32),
    );
    let chars = time_typed(Ports::Unlimited, P, Op::Allreduce, 32, 32, 1, "allreduce=6");
    let f = 15.0 / 16.0 * 32.0;
    check(
        "allreduce 32 chars unlimited",
        chars,
        8.0 * ALPHA + 2.0 * f * BETA + f * GAMMA,
    );
}
