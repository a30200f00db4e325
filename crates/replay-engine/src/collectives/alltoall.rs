//! MPI_Alltoall / MPI_Alltoallv schedules after ompi/mca/coll/base/coll_base_alltoall.c and
//! coll_base_alltoallv.c (Open MPI 4.1). Local (self) copies cost nothing and are omitted.

use super::{Algo, AlgoParams, CollError, CollKind, CollSpec, Step};

pub fn schedule(
    spec: &CollSpec,
    algo: Algo,
    params: &AlgoParams,
    me: u32,
) -> Result<Vec<Step>, CollError> {
    let p = spec.comm_size;
    let b = spec.bytes;
    let uniform = |_: u32| b;
    if spec.kind == CollKind::Alltoallv {
        let send = |r: u32| spec.per_peer_bytes.get(r as usize).copied().unwrap_or(0);
        let recv = |r: u32| match spec.recv_per_peer_bytes.get(r as usize) {
            Some(&n) => n,
            None => send(r),
        };
        return Ok(match algo {
            // alltoallv basic_linear posts only the non-empty transfers
            Algo::Linear => vec![linear_step(p, me, &send, &recv, true)],
            Algo::Pairwise => pairwise(p, me, &send, &recv),
            _ => {
                return Err(CollError::Unsupported {
                    kind: spec.kind,
                    algo,
                })
            }
        });
    }
    Ok(match algo {
        Algo::Linear => vec![linear_step(p, me, &uniform, &uniform, false)],
        Algo::LinearSync => linear_sync(p, me, b, params.fanout),
        Algo::Pairwise => pairwise(p, me, &uniform, &uniform),
        Algo::Bruck => bruck(p, me, b),
        Algo::TwoProc if p == 2 => vec![Step::sendrecv(1 - me, b, 1 - me, b)],
        Algo::TwoProc => vec![linear_step(p, me, &uniform, &uniform, false)],
        _ => {
            return Err(CollError::Unsupported {
                kind: spec.kind,
                algo,
            })
        }
    })
}

/// basic_linear: post every receive and every send at once, then wait for all. Peers are
/// visited from me+1 upwards (wrapping), as Open MPI orders its requests.
fn linear_step(
    p: u32,
    me: u32,
    send: &dyn Fn(u32) -> u64,
    recv: &dyn Fn(u32) -> u64,
    skip_empty: bool,
) -> Step {
    let mut st = Step::default();
    for i in 1..p {
        let (to, from) = ((me + i) % p, (me + p - i) % p);
        if !skip_empty || recv(from) > 0 {
            st.recvs.push((from, recv(from)));
        }
        if !skip_empty || send(to) > 0 {
            st.sends.push((to, send(to)));
        }
    }
    st
}

/// linear_sync: at most `max_reqs` transfers in flight each way (0 = all, i.e. linear);
/// modelled as rounds of `max_reqs` peers.
fn linear_sync(p: u32, me: u32, b: u64, max_reqs: u32) -> Vec<Step> {
    let per = if max_reqs == 0 || max_reqs >= p - 1 {
        p - 1
    } else {
        max_reqs
    };
    let peers: Vec<u32> = (1..p).collect();
    peers
        .chunks(per as usize)
        .map(|chunk| Step {
            sends: chunk.iter().map(|&i| ((me + i) % p, b)).collect(),
            recvs: chunk.iter().map(|&i| ((me + p - i) % p, b)).collect(),
            reduce_bytes: 0,
        })
        .collect()
}

/// pairwise: step i sends to me+i and receives from me-i (p-1 steps, self copy last).
fn pairwise(p: u32, me: u32, send: &dyn Fn(u32) -> u64, recv: &dyn Fn(u32) -> u64) -> Vec<Step> {
    (1..p)
        .map(|i| {
            let (to, from) = ((me + i) % p, (me + p - i) % p);
            Step::sendrecv(to, send(to), from, recv(from))
        })
        .collect()
}

/// Number of blocks the modified Bruck algorithm moves at `distance`: all block indices
/// i in 1..p with that bit set (one indexed datatype per step).
pub fn bruck_blocks(p: u32, distance: u32) -> u64 {
    (1..p).filter(|i| i & distance != 0).count() as u64
}

/// alltoall_intra_bruck (modified Bruck, no final rotation cost): ceil(lg p) steps, step
/// `distance` sends to me+distance and receives from me-distance.
fn bruck(p: u32, me: u32, b: u64) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut distance = 1;
    while distance < p {
        let n = bruck_blocks(p, distance) * b;
        steps.push(Step::sendrecv(
            (me + distance) % p,
            n,
            (me + p - distance) % p,
            n,
        ));
        distance <<= 1;
    }
    steps
}
