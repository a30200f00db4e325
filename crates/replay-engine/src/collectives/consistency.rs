//! Schedule consistency: for every collective, algorithm, size, root and communicator size,
//! every send meets a receive of the same size on the peer, in order, and a lockstep
//! evaluation with eager sends (a step completes once all its receives have arrived) runs
//! every rank to its end with no message left over.

use std::collections::{HashMap, VecDeque};

use super::names::algorithms;
use super::*;

/// Plays all ranks' schedules; returns total bytes sent, or a description of the failure.
pub fn play(all: &[Vec<Step>]) -> Result<u64, String> {
    let p = all.len();
    let mut chan: HashMap<(u32, u32), VecDeque<u64>> = HashMap::new();
    let (mut pos, mut posted) = (vec![0usize; p], vec![false; p]);
    let mut sent = 0u64;
    loop {
        let mut progress = false;
        for r in 0..p {
            let Some(step) = all[r].get(pos[r]) else {
                continue;
            };
            if !posted[r] {
                for &(to, b) in &step.sends {
                    if to as usize >= p || to as usize == r {
                        return Err(format!("rank {r} step {}: bad peer {to}", pos[r]));
                    }
                    chan.entry((r as u32, to)).or_default().push_back(b);
                    sent += b;
                }
                posted[r] = true;
                progress = true;
            }
            let mut need: HashMap<u32, usize> = HashMap::new();
            for &(from, _) in &step.recvs {
                *need.entry(from).or_default() += 1;
            }
            let ready = need
                .iter()
                .all(|(&from, &n)| chan.get(&(from, r as u32)).is_some_and(|q| q.len() >= n));
            if ready {
                for &(from, b) in &step.recvs {
                    let got = chan.get_mut(&(from, r as u32)).and_then(|q| q.pop_front());
                    if got != Some(b) {
                        return Err(format!(
                            "rank {r} step {} expects {b} B from {from}, message has {got:?}",
                            pos[r]
                        ));
                    }
                }
                pos[r] += 1;
                posted[r] = false;
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    let stuck: Vec<usize> = (0..p).filter(|&r| pos[r] < all[r].len()).collect();
    if !stuck.is_empty() {
        return Err(format!(
            "deadlock: ranks {stuck:?} blocked at steps {:?}",
            stuck.iter().map(|&r| pos[r]).collect::<Vec<_>>()
        ));
    }
    if let Some((k, q)) = chan.iter().find(|(_, q)| !q.is_empty()) {
        return Err(format!("unreceived messages on {k:?}: {q:?}"));
    }
    Ok(sent)
}

/// Every rank's schedule; alltoallv ranks get their own send/recv vectors (rank i sends
/// f(i, j) bytes to j).
pub fn all_schedules(spec: &CollSpec, algo: Algo, params: &AlgoParams) -> Vec<Vec<Step>> {
    let p = spec.comm_size;
    let f = |i: u32, j: u32| (spec.bytes + u64::from(i * 7 + j * 3)) % 1000;
    (0..p)
        .map(|me| {
            let mut s = spec.clone();
            if spec.kind == CollKind::Alltoallv {
                s.per_peer_bytes = (0..p).map(|j| f(me, j)).collect();
                s.recv_per_peer_bytes = (0..p).map(|j| f(j, me)).collect();
            }
            schedule(&s, algo, params, me).expect("schedule")
        })
        .collect()
}

fn spec_for(kind: CollKind, p: u32, root: u32, bytes: u64, elem: u32) -> CollSpec {
    let mut s = CollSpec::new(kind, p, root, bytes);
    s.elem_bytes = elem;
    if matches!(kind, CollKind::Alltoallv | CollKind::Allgatherv) {
        s.per_peer_bytes = (0..p).map(|i| (bytes + u64::from(i) * 3) % 1000).collect();
    }
    s
}

const KINDS: [CollKind; 12] = [
    CollKind::Bcast,
    CollKind::Reduce,
    CollKind::Allreduce,
    CollKind::Alltoall,
    CollKind::Alltoallv,
    CollKind::Allgather,
    CollKind::Allgatherv,
    CollKind::Gather,
    CollKind::Scatter,
    CollKind::ReduceScatter,
    CollKind::ReduceScatterBlock,
    CollKind::Barrier,
];

#[test]
fn every_algorithm_is_deadlock_free_and_matched() {
    let params = [
        AlgoParams::default(),
        AlgoParams {
            segsize: 1024,
            fanout: 3,
        },
    ];
    for kind in KINDS {
        for &algo in algorithms(kind) {
            for p in [2u32, 3, 4, 5, 6, 7, 8, 12, 13, 16, 17] {
                for bytes in [0u64, 1, 8, 100, 4096, 65_536] {
                    for root in [0, p - 1, p / 2] {
                        for elem in [1u32, 4] {
                            let spec = spec_for(kind, p, root, bytes, elem);
                            for prm in &params {
                                let all = all_schedules(&spec, algo, prm);
                                if let Err(e) = play(&all) {
                                    panic!("{kind:?} {algo:?} p={p} n={bytes} root={root} elem={elem} {prm:?}: {e}");
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn decided_algorithms_schedule() {
    for kind in KINDS {
        for p in [2u32, 3, 16, 33, 64, 130, 300] {
            for bytes in [8u64, 4096, 1 << 20] {
                let spec = spec_for(kind, p, 0, bytes, 1);
                let (algo, prm) = decide(&spec);
                play(&all_schedules(&spec, algo, &prm))
                    .unwrap_or_else(|e| panic!("{kind:?} {algo:?} p={p} n={bytes}: {e}"));
            }
        }
    }
}

fn total(kind: CollKind, algo: Algo, p: u32, bytes: u64) -> u64 {
    let spec = spec_for(kind, p, 0, bytes, 1);
    play(&all_schedules(&spec, algo, &AlgoParams::default())).unwrap()
}

#[test]
fn bytes_moved_are_the_algorithms() {
    let n = 1u64 << 20;
    // ring allreduce: every rank sends 2 (p-1)/p n
    assert_eq!(
        total(CollKind::Allreduce, Algo::Ring, 16, n),
        16 * 2 * 15 * n / 16
    );
    // recursive doubling: lg p whole vectors per rank
    assert_eq!(
        total(CollKind::Allreduce, Algo::RecursiveDoubling, 16, n),
        16 * 4 * n
    );
    // Rabenseifner: 2 (p-1)/p n per rank
    assert_eq!(
        total(CollKind::Allreduce, Algo::Rabenseifner, 16, n),
        16 * 2 * 15 * n / 16
    );
    // binomial bcast: every non-root receives n once
    assert_eq!(total(CollKind::Bcast, Algo::Binomial, 16, n), 15 * n);
    assert_eq!(total(CollKind::Bcast, Algo::Pipeline, 16, n), 15 * n);
    // pairwise alltoall: p-1 blocks per rank; Bruck: lg p steps of p/2 blocks
    assert_eq!(
        total(CollKind::Alltoall, Algo::Pairwise, 16, 64),
        16 * 15 * 64
    );
    assert_eq!(
        total(CollKind::Alltoall, Algo::Bruck, 16, 64),
        16 * 4 * 8 * 64
    );
    // ring / Bruck / recursive doubling allgather: p-1 blocks per rank
    for algo in [
        Algo::Ring,
        Algo::Bruck,
        Algo::RecursiveDoubling,
        Algo::NeighborExchange,
    ] {
        assert_eq!(
            total(CollKind::Allgather, algo, 16, 64),
            16 * 15 * 64,
            "{algo:?}"
        );
    }
    // scatter-allgather bcast: the binomial scatter moves lg p * p/2 blocks = 2n, the ring
    // allgather p (p-1) blocks = 15n, recursive doubling as much
    assert_eq!(
        total(CollKind::Bcast, Algo::ScatterAllgatherRing, 16, n),
        17 * n
    );
    assert_eq!(
        total(CollKind::Bcast, Algo::ScatterAllgather, 16, n),
        17 * n
    );
    // reduce_scatter ring: (p-1)/p n per rank
    assert_eq!(
        total(CollKind::ReduceScatter, Algo::Ring, 16, n),
        16 * 15 * n / 16
    );
    assert_eq!(
        total(CollKind::ReduceScatter, Algo::RecursiveHalving, 16, n),
        16 * 15 * n / 16
    );
    assert_eq!(total(CollKind::Barrier, Algo::Bruck, 16, 0), 0);
}

#[test]
fn open_mpi_fallbacks_apply() {
    let rd = |p, n| {
        all_schedules(
            &spec_for(CollKind::Allreduce, p, 0, n, 1),
            Algo::RecursiveDoubling,
            &AlgoParams::default(),
        )
    };
    let as_ = |algo, p, n| {
        all_schedules(
            &spec_for(CollKind::Allreduce, p, 0, n, 1),
            algo,
            &AlgoParams::default(),
        )
    };
    // ring with count < p and Rabenseifner with count < p' run recursive doubling
    assert_eq!(as_(Algo::Ring, 16, 8), rd(16, 8));
    assert_eq!(as_(Algo::Rabenseifner, 16, 8), rd(16, 8));
    assert_ne!(as_(Algo::Ring, 16, 16), rd(16, 16));
    // segmented ring with segsize 0 is the plain ring
    assert_eq!(
        as_(Algo::SegmentedRing, 16, 4096),
        as_(Algo::Ring, 16, 4096)
    );
}
