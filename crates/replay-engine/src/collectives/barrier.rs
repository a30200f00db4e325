//! MPI_Barrier schedules after ompi/mca/coll/base/coll_base_barrier.c (Open MPI 4.1); all
//! messages are empty.

use super::util::{pof2_ceil, pof2_floor};
use super::{Algo, CollError, CollKind, Step};

pub fn schedule(p: u32, algo: Algo, me: u32) -> Result<Vec<Step>, CollError> {
    Ok(match algo {
        Algo::Linear => linear(p, me),
        Algo::DoubleRing => double_ring(p, me),
        Algo::RecursiveDoubling => recursive_doubling(p, me),
        Algo::Bruck => {
            // dissemination: step d signals me+d and waits for me-d
            let mut steps = Vec::new();
            let mut d = 1;
            while d < p {
                steps.push(Step::sendrecv((me + d) % p, 0, (me + p - d) % p, 0));
                d <<= 1;
            }
            steps
        }
        Algo::TwoProc if p == 2 => vec![Step::sendrecv(1 - me, 0, 1 - me, 0)],
        Algo::TwoProc => recursive_doubling(p, me),
        Algo::Tree => tree(p, me),
        _ => {
            return Err(CollError::Unsupported {
                kind: CollKind::Barrier,
                algo,
            })
        }
    })
}

/// basic_linear: everybody reports to rank 0, rank 0 releases everybody.
fn linear(p: u32, me: u32) -> Vec<Step> {
    if me == 0 {
        let all: Vec<(u32, u64)> = (1..p).map(|r| (r, 0)).collect();
        vec![
            Step {
                recvs: all.clone(),
                ..Step::default()
            },
            Step {
                sends: all,
                ..Step::default()
            },
        ]
    } else {
        vec![Step::send(0, 0), Step::recv(0, 0)]
    }
}

/// double_ring: a token goes around the ring twice, started by rank 0.
fn double_ring(p: u32, me: u32) -> Vec<Step> {
    let (left, right) = ((me + p - 1) % p, (me + 1) % p);
    let round = if me == 0 {
        [Step::send(right, 0), Step::recv(left, 0)]
    } else {
        [Step::recv(left, 0), Step::send(right, 0)]
    };
    round.iter().chain(round.iter()).cloned().collect()
}

/// recursive_doubling: ranks beyond the largest power of two report to rank - p' and are
/// released by it after the pairwise exchanges among the first p' ranks.
fn recursive_doubling(p: u32, me: u32) -> Vec<Step> {
    let adj = pof2_floor(p);
    if me >= adj {
        return vec![Step::send(me - adj, 0), Step::recv(me - adj, 0)];
    }
    let mut steps = Vec::new();
    let has_extra = me + adj < p;
    if has_extra {
        steps.push(Step::recv(me + adj, 0));
    }
    let mut mask = 1;
    while mask < adj {
        let remote = me ^ mask;
        steps.push(Step::sendrecv(remote, 0, remote, 0));
        mask <<= 1;
    }
    if has_extra {
        steps.push(Step::send(me + adj, 0));
    }
    steps
}

/// tree: fan-in along a hypercube embedding (lower rank waits for the upper partner), then
/// fan-out in reverse.
fn tree(p: u32, me: u32) -> Vec<Step> {
    let depth = pof2_ceil(p);
    let mut steps = Vec::new();
    let mut jump = 1;
    while jump < depth {
        let partner = me ^ jump;
        if partner & (jump - 1) == 0 && partner < p {
            steps.push(if partner > me {
                Step::recv(partner, 0)
            } else {
                Step::send(partner, 0)
            });
        }
        jump <<= 1;
    }
    jump = depth >> 1;
    while jump > 0 {
        let partner = me ^ jump;
        if partner & (jump - 1) == 0 && partner < p {
            steps.push(if partner > me {
                Step::send(partner, 0)
            } else {
                Step::recv(partner, 0)
            });
        }
        jump >>= 1;
    }
    steps
}
