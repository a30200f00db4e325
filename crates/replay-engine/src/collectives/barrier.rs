//! MPI_Barrier programs after ompi/mca/coll/base/coll_base_barrier.c (v4.1.4); every
//! message is empty. `sendrecv_zero` is irecv, blocking send, wait.

use super::util::{pof2_ceil, pof2_floor};
use super::{Algo, CollError, CollKind, Program};

pub fn build(p: u32, algo: Algo, me: u32, prog: &mut Program) -> Result<(), CollError> {
    match algo {
        Algo::Linear => linear(p, me, prog),
        Algo::DoubleRing => double_ring(p, me, prog),
        Algo::RecursiveDoubling => recursive_doubling(p, me, prog),
        Algo::Bruck => {
            // barrier_intra_bruck: step d signals me+d and waits for me-d
            let mut d = 1;
            while d < p {
                prog.sendrecv(me, (me + d) % p, 0, (me + p - d) % p, 0);
                d <<= 1;
            }
        }
        Algo::TwoProc => {
            if p != 2 {
                return Err(CollError::Refused(format!(
                    "barrier two_procs on {p} ranks (MPI_ERR_UNSUPPORTED_OPERATION)"
                )));
            }
            prog.sendrecv(me, 1 - me, 0, 1 - me, 0);
        }
        Algo::Tree => tree(p, me, prog),
        _ => {
            return Err(CollError::Unsupported {
                kind: CollKind::Barrier,
                algo,
            })
        }
    }
    Ok(())
}

/// barrier_intra_basic_linear: everybody sends to rank 0 and waits for its answer; rank 0
/// posts p-1 receives (MPI_ANY_SOURCE: matched here by sender, which leaves the waitall's
/// end the same), waits for all, then sends to 1..p-1 in turn (blocking).
fn linear(p: u32, me: u32, prog: &mut Program) {
    if me > 0 {
        prog.send(0, 0);
        prog.recv(0, 0);
        return;
    }
    let reqs: Vec<_> = (1..p).map(|r| prog.irecv(r, 0)).collect();
    prog.wait_all(&reqs);
    (1..p).for_each(|r| prog.send(r, 0));
}

/// barrier_intra_doublering: a token goes around the ring twice, started by rank 0; the
/// second round's sends are synchronous.
fn double_ring(p: u32, me: u32, prog: &mut Program) {
    let (left, right) = ((me + p - 1) % p, (me + 1) % p);
    for sync in [false, true] {
        if me > 0 {
            prog.recv(left, 0);
        }
        if sync {
            prog.ssend(right, 0);
        } else {
            prog.send(right, 0);
        }
        if me == 0 {
            prog.recv(left, 0);
        }
    }
}

/// barrier_intra_recursivedoubling: ranks beyond p' exchange with rank - p'
/// (sendrecv_zero); those below wait for them first and release them with a synchronous
/// send after the pairwise exchanges among the first p' ranks.
fn recursive_doubling(p: u32, me: u32, prog: &mut Program) {
    let adj = pof2_floor(p);
    if adj != p {
        if me >= adj {
            prog.sendrecv(me, me - adj, 0, me - adj, 0);
        } else if me < p - adj {
            prog.recv(me + adj, 0);
        }
    }
    if me < adj {
        let mut mask = 1;
        while mask < adj {
            let remote = me ^ mask;
            mask <<= 1;
            if remote < adj {
                prog.sendrecv(me, remote, 0, remote, 0);
            }
        }
    }
    if adj != p && me < p - adj {
        prog.ssend(me + adj, 0);
    }
}

/// barrier_intra_tree: fan-in along a hypercube embedding (the lower rank waits for the
/// upper partner), then fan-out in reverse; blocking calls.
fn tree(p: u32, me: u32, prog: &mut Program) {
    let depth = pof2_ceil(p);
    let mut jump = 1;
    while jump < depth {
        let partner = me ^ jump;
        if partner & (jump - 1) == 0 && partner < p {
            if partner > me {
                prog.recv(partner, 0);
            } else {
                prog.send(partner, 0);
            }
        }
        jump <<= 1;
    }
    jump = depth >> 1;
    while jump > 0 {
        let partner = me ^ jump;
        if partner & (jump - 1) == 0 && partner < p {
            if partner > me {
                prog.send(partner, 0);
            } else {
                prog.recv(partner, 0);
            }
        }
        jump >>= 1;
    }
}
