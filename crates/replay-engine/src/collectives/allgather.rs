//! MPI_Allgather / MPI_Allgatherv schedules after ompi/mca/coll/base/coll_base_allgather.c
//! and coll_base_allgatherv.c (Open MPI 4.1): linear (gather + bcast), Bruck, recursive
//! doubling (power-of-two sizes only, else Bruck), ring, neighbour exchange (even sizes
//! only, else ring) and two-proc. Allgather is allgatherv with equal blocks.

use super::{bcast, Algo, AlgoParams, CollError, CollKind, CollSpec, Step};

pub fn schedule(
    spec: &CollSpec,
    algo: Algo,
    _params: &AlgoParams,
    me: u32,
) -> Result<Vec<Step>, CollError> {
    let p = spec.comm_size;
    let blocks: Vec<u64> = if spec.kind == CollKind::Allgatherv {
        (0..p as usize)
            .map(|r| spec.per_peer_bytes.get(r).copied().unwrap_or(0))
            .collect()
    } else {
        vec![spec.bytes; p as usize]
    };
    let sum = |first: u32, n: u32| {
        (0..n)
            .map(|j| blocks[((first + j) % p) as usize])
            .sum::<u64>()
    };
    Ok(match algo {
        Algo::Linear => linear(spec, me, &blocks)?,
        Algo::RecursiveDoubling if p.is_power_of_two() => {
            // exchange the 2^k blocks gathered so far with rank ^ 2^k
            let mut steps = Vec::new();
            let mut d = 1;
            while d < p {
                let remote = me ^ d;
                let (mine, theirs) = (me & !(d - 1), remote & !(d - 1));
                steps.push(Step::sendrecv(remote, sum(mine, d), remote, sum(theirs, d)));
                d <<= 1;
            }
            steps
        }
        Algo::Bruck | Algo::RecursiveDoubling => {
            // step d: send my first min(d, p-d) blocks to me-d, receive from me+d
            let mut steps = Vec::new();
            let mut d = 1;
            while d < p {
                let k = d.min(p - d);
                let (to, from) = ((me + p - d) % p, (me + d) % p);
                steps.push(Step::sendrecv(to, sum(me, k), from, sum(from, k)));
                d <<= 1;
            }
            steps
        }
        Algo::NeighborExchange if p.is_multiple_of(2) => neighbor_exchange(p, me, &sum),
        Algo::TwoProc if p == 2 => vec![Step::sendrecv(1 - me, sum(me, 1), 1 - me, sum(1 - me, 1))],
        Algo::Ring | Algo::NeighborExchange | Algo::TwoProc => {
            let (left, right) = ((me + p - 1) % p, (me + 1) % p);
            (1..p)
                .map(|i| Step::sendrecv(right, sum(me + p - i + 1, 1), left, sum(me + p - i, 1)))
                .collect()
        }
        _ => {
            return Err(CollError::Unsupported {
                kind: spec.kind,
                algo,
            })
        }
    })
}

/// basic_linear / basic_default: (v)gather to rank 0 (blocking receives in rank order),
/// then a broadcast of the whole buffer (allgather: basic linear; allgatherv: as tuned's
/// fixed rules pick it for the total size).
fn linear(spec: &CollSpec, me: u32, blocks: &[u64]) -> Result<Vec<Step>, CollError> {
    let p = spec.comm_size;
    let total: u64 = blocks.iter().sum();
    let mut steps = if me == 0 {
        (1..p).map(|r| Step::recv(r, blocks[r as usize])).collect()
    } else {
        vec![Step::send(0, blocks[me as usize])]
    };
    if spec.kind == CollKind::Allgather {
        steps.extend(bcast::linear(p, 0, me, total));
    } else {
        let sub = CollSpec::new(CollKind::Bcast, p, 0, total);
        let (algo, params) = super::decide(&sub);
        steps.extend(super::schedule(&sub, algo, &params, me)?);
    }
    Ok(steps)
}

/// neighbor_exchange: p/2 steps alternating between the two neighbours; the first moves
/// one block, the others the two blocks received in the previous step.
fn neighbor_exchange(p: u32, me: u32, sum: &dyn Fn(u32, u32) -> u64) -> Vec<Step> {
    let even = me.is_multiple_of(2);
    let (nb, mut recv_from, offset) = if even {
        ([(me + 1) % p, (me + p - 1) % p], [me, me], [2i64, -2])
    } else {
        (
            [(me + p - 1) % p, (me + 1) % p],
            [(me + p - 1) % p; 2],
            [-2i64, 2],
        )
    };
    let mut steps = vec![Step::sendrecv(nb[0], sum(me, 1), nb[0], sum(nb[0], 1))];
    let mut send_from = if even { me } else { recv_from[0] };
    for i in 1..p / 2 {
        let par = (i % 2) as usize;
        recv_from[par] =
            ((i64::from(recv_from[par]) + offset[par]).rem_euclid(i64::from(p))) as u32;
        steps.push(Step::sendrecv(
            nb[par],
            sum(send_from, 2),
            nb[par],
            sum(recv_from[par], 2),
        ));
        send_from = recv_from[par];
    }
    steps
}
