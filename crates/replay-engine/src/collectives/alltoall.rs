//! MPI_Alltoall / MPI_Alltoallv programs after ompi/mca/coll/base/coll_base_alltoall.c and
//! coll_base_alltoallv.c (v4.1.4). Local (self) copies cost nothing and are omitted.

use super::{Algo, CollError, CollKind, Ctx, Program};

pub fn build(at: &Ctx, algo: Algo, prog: &mut Program) -> Result<(), CollError> {
    let (spec, me) = (at.spec, at.me);
    let p = spec.comm_size;
    let b = spec.bytes;
    if spec.kind == CollKind::Alltoallv {
        let send = |r: u32| spec.per_peer_bytes.get(r as usize).copied().unwrap_or(0);
        let recv = |r: u32| match spec.recv_per_peer_bytes.get(r as usize) {
            Some(&n) => n,
            None => send(r),
        };
        match algo {
            Algo::Linear => linear_v(p, me, &send, &recv, prog),
            Algo::Pairwise => pairwise(p, me, &send, &recv, prog),
            _ => return Err(at.unsupported(algo)),
        }
        return Ok(());
    }
    let uniform = |_: u32| b;
    match algo {
        Algo::Linear => linear(p, me, b, prog),
        Algo::LinearSync => linear_sync(p, me, b, at.params.max_requests, prog),
        Algo::Pairwise => pairwise(p, me, &uniform, &uniform, prog),
        Algo::Bruck => bruck(p, me, b, prog),
        Algo::TwoProc => {
            if p != 2 {
                // alltoall_intra_two_procs: "if (2 != ompi_comm_size(comm)) return
                // MPI_ERR_UNSUPPORTED_OPERATION"
                return Err(super::CollError::Refused(format!(
                    "alltoall two_proc on {p} ranks (MPI_ERR_UNSUPPORTED_OPERATION)"
                )));
            }
            prog.sendrecv(me, 1 - me, b, 1 - me, b);
        }
        _ => return Err(at.unsupported(algo)),
    }
    Ok(())
}

/// alltoall_intra_basic_linear: receives from me+1, me+2, ... first, then sends to me-1,
/// me-2, ... ("post all sends in reverse order"), all started at once, then waitall.
fn linear(p: u32, me: u32, b: u64, prog: &mut Program) {
    let mut reqs: Vec<_> = (1..p).map(|i| prog.irecv((me + i) % p, b)).collect();
    reqs.extend((1..p).map(|i| prog.isend((me + p - i) % p, b)));
    prog.wait_all(&reqs);
}

/// alltoallv_intra_basic_linear: receives from 0..p-1, then sends to 0..p-1 (self
/// skipped, empty transfers included), then waitall.
fn linear_v(
    p: u32,
    me: u32,
    send: &dyn Fn(u32) -> u64,
    recv: &dyn Fn(u32) -> u64,
    prog: &mut Program,
) {
    let others = || (0..p).filter(move |&r| r != me);
    let mut reqs: Vec<_> = others().map(|r| prog.irecv(r, recv(r))).collect();
    reqs.extend(others().map(|r| prog.isend(r, send(r))));
    prog.wait_all(&reqs);
}

/// alltoall_intra_linear_sync: at most `max_requests` receives (from me+1 upwards) and
/// as many sends (to me-1 downwards) in flight, refilled by a waitany loop; 0 (the
/// default) or >= p-1 posts everything at once, as basic_linear but in the other send
/// order.
fn linear_sync(p: u32, me: u32, b: u64, max_requests: u32, prog: &mut Program) {
    let recvs: Vec<(u32, u64)> = (1..p).map(|i| ((me + i) % p, b)).collect();
    let sends: Vec<(u32, u64)> = (1..p).map(|i| ((me + p - i) % p, b)).collect();
    if max_requests == 0 || max_requests >= p - 1 {
        let mut reqs: Vec<_> = recvs.iter().map(|&(r, n)| prog.irecv(r, n)).collect();
        reqs.extend(sends.iter().map(|&(r, n)| prog.isend(r, n)));
        prog.wait_all(&reqs);
    } else {
        prog.window(&recvs, &sends, max_requests);
    }
}

/// alltoall(v)_intra_pairwise: step i sends to me+i and receives from me-i (sendrecv);
/// the self exchange is a local copy.
fn pairwise(
    p: u32,
    me: u32,
    send: &dyn Fn(u32) -> u64,
    recv: &dyn Fn(u32) -> u64,
    prog: &mut Program,
) {
    for i in 1..p {
        let (to, from) = ((me + i) % p, (me + p - i) % p);
        prog.sendrecv(me, to, send(to), from, recv(from));
    }
}

/// Number of blocks the modified Bruck algorithm moves at `distance`: all block indices
/// i in 1..p with that bit set (one indexed datatype per step).
pub fn bruck_blocks(p: u32, distance: u32) -> u64 {
    (1..p).filter(|i| i & distance != 0).count() as u64
}

/// alltoall_intra_bruck (modified Bruck; local rotations are copies): ceil(lg p)
/// sendrecvs, step `distance` to me+distance and from me-distance.
fn bruck(p: u32, me: u32, b: u64, prog: &mut Program) {
    let mut distance = 1;
    while distance < p {
        let n = bruck_blocks(p, distance) * b;
        prog.sendrecv(me, (me + distance) % p, n, (me + p - distance) % p, n);
        distance <<= 1;
    }
}
