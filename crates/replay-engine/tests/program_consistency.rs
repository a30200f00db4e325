//! Program consistency: for every collective, algorithm, size, root, element size,
//! commutativity and communicator size, all ranks' programs run to their end when played
//! together with eager standard sends (synchronous ones complete once matched), every
//! message meets a receive of the same size, and none is left over.

use std::collections::{HashMap, VecDeque};

use replay_engine::collectives::names::algorithms;
use replay_engine::collectives::*;

#[derive(Default)]
struct Channel {
    /// Sent, not yet matched: (bytes, sender rank, sender request, synchronous).
    sent: VecDeque<(u64, usize, usize, bool)>,
    /// Posted receives, not yet matched: (bytes, receiver request).
    posted: VecDeque<(u64, usize)>,
}

struct Rank<'a> {
    prog: &'a Program,
    pc: usize,
    done: Vec<bool>,
    /// A running window: (next receive, next send, open receives, open sends).
    window: Option<(usize, usize, Vec<usize>, Vec<usize>)>,
}

/// Matches what can be matched on channel (src, dst).
fn settle(ranks: &mut [Rank], ch: &mut Channel, src: usize, dst: usize) -> Result<(), String> {
    while !ch.sent.is_empty() && !ch.posted.is_empty() {
        let (b, s, sid, sync) = ch.sent.pop_front().expect("sent");
        let (want, rid) = ch.posted.pop_front().expect("posted");
        if b != want {
            return Err(format!(
                "rank {dst} expects {want} B from {src}, the message has {b} B"
            ));
        }
        ranks[dst].done[rid] = true;
        if sync {
            ranks[s].done[sid] = true;
        }
    }
    Ok(())
}

/// Plays all ranks' programs; returns the bytes sent, or what went wrong.
pub fn play(progs: &[Program]) -> Result<u64, String> {
    let p = progs.len();
    let mut ranks: Vec<Rank> = progs
        .iter()
        .map(|prog| Rank {
            prog,
            pc: 0,
            done: Vec::new(),
            window: None,
        })
        .collect();
    let mut chans: HashMap<(usize, usize), Channel> = HashMap::new();
    let mut sent = 0u64;
    loop {
        let mut progress = false;
        for r in 0..p {
            while let Some(&ins) = ranks[r].prog.instrs.get(ranks[r].pc) {
                let step = match ins {
                    Instr::Send { peer, bytes, sync } => {
                        let peer = peer as usize;
                        if peer >= p || peer == r {
                            return Err(format!("rank {r}: send to {peer}"));
                        }
                        let id = ranks[r].done.len();
                        ranks[r].done.push(!sync);
                        let ch = chans.entry((r, peer)).or_default();
                        ch.sent.push_back((bytes, r, id, sync));
                        settle(&mut ranks, ch, r, peer)?;
                        sent += bytes;
                        true
                    }
                    Instr::Recv { peer, bytes } => {
                        let peer = peer as usize;
                        if peer >= p || peer == r {
                            return Err(format!("rank {r}: receive from {peer}"));
                        }
                        let id = ranks[r].done.len();
                        ranks[r].done.push(false);
                        let ch = chans.entry((peer, r)).or_default();
                        ch.posted.push_back((bytes, id));
                        settle(&mut ranks, ch, peer, r)?;
                        true
                    }
                    Instr::Wait { lo, hi } => {
                        let reqs = ranks[r].prog.waited(lo, hi);
                        reqs.iter().all(|&q| ranks[r].done[q as usize])
                    }
                    Instr::Reduce { .. } => true,
                    Instr::Window { lo, mid, hi, k } => {
                        window(&mut ranks, &mut chans, &mut sent, r, (lo, mid, hi, k))?
                    }
                };
                if !step {
                    break;
                }
                ranks[r].pc += 1;
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    for (r, rank) in ranks.iter().enumerate() {
        let mut waited = vec![0u32; rank.prog.requests as usize];
        for &q in &rank.prog.waits {
            waited[q as usize] += 1;
        }
        if let Some(q) = waited.iter().position(|&n| n != 1) {
            return Err(format!("rank {r}: request {q} waited {} times", waited[q]));
        }
    }
    let stuck: Vec<(usize, usize)> = (0..p)
        .filter(|&r| ranks[r].pc < ranks[r].prog.instrs.len())
        .map(|r| (r, ranks[r].pc))
        .collect();
    if !stuck.is_empty() {
        return Err(format!("deadlock: (rank, instruction) {stuck:?}"));
    }
    if let Some((k, ch)) = chans
        .iter()
        .find(|(_, c)| !c.sent.is_empty() || !c.posted.is_empty())
    {
        return Err(format!(
            "left over on {k:?}: {:?} / {:?}",
            ch.sent, ch.posted
        ));
    }
    Ok(sent)
}

/// Advances rank `r`'s window; true when it has completed.
fn window(
    ranks: &mut [Rank],
    chans: &mut HashMap<(usize, usize), Channel>,
    sent: &mut u64,
    r: usize,
    (lo, mid, hi, k): (u32, u32, u32, u32),
) -> Result<bool, String> {
    let prog = ranks[r].prog;
    let recvs = &prog.window[lo as usize..mid as usize];
    let sends = &prog.window[mid as usize..hi as usize];
    if ranks[r].window.is_none() {
        ranks[r].window = Some((0, 0, Vec::new(), Vec::new()));
    }
    loop {
        let (mut nr, mut ns, mut open_r, mut open_s) = ranks[r].window.take().expect("window");
        open_r.retain(|&q| !ranks[r].done[q]);
        open_s.retain(|&q| !ranks[r].done[q]);
        let mut posted = false;
        while open_r.len() < k as usize && nr < recvs.len() {
            let (peer, bytes) = recvs[nr];
            let id = ranks[r].done.len();
            ranks[r].done.push(false);
            let ch = chans.entry((peer as usize, r)).or_default();
            ch.posted.push_back((bytes, id));
            settle(ranks, ch, peer as usize, r)?;
            open_r.push(id);
            nr += 1;
            posted = true;
        }
        while open_s.len() < k as usize && ns < sends.len() {
            let (peer, bytes) = sends[ns];
            let id = ranks[r].done.len();
            ranks[r].done.push(true);
            let ch = chans.entry((r, peer as usize)).or_default();
            ch.sent.push_back((bytes, r, id, false));
            settle(ranks, ch, r, peer as usize)?;
            *sent += bytes;
            open_s.push(id);
            ns += 1;
            posted = true;
        }
        let finished = nr == recvs.len() && ns == sends.len() && open_r.is_empty();
        ranks[r].window = if finished {
            None
        } else {
            Some((nr, ns, open_r, open_s))
        };
        if finished || !posted {
            return Ok(finished);
        }
    }
}

/// Every rank's program; alltoallv ranks get their own send/recv vectors (rank i sends
/// f(i, j) bytes to j).
pub fn all_programs(spec: &CollSpec, algo: Algo, params: &AlgoParams) -> Vec<Program> {
    let p = spec.comm_size;
    let f = |i: u32, j: u32| (spec.bytes + u64::from(i * 7 + j * 3)) % 1000 * spec.elem();
    let sel = Selector::fixed();
    (0..p)
        .map(|me| {
            let mut s = spec.clone();
            match spec.kind {
                CollKind::Alltoallv => {
                    s.per_peer_bytes = (0..p).map(|j| f(me, j)).collect();
                    s.recv_per_peer_bytes = (0..p).map(|j| f(j, me)).collect();
                }
                CollKind::Gatherv | CollKind::Scatterv => {
                    s.bytes = s.per_peer_bytes[me as usize];
                }
                _ => {}
            }
            schedule(&s, algo, params, me, &sel)
                .unwrap_or_else(|e| panic!("{:?} {algo:?} p={p}: {e}", spec.kind))
        })
        .collect()
}

fn spec_for(kind: CollKind, p: u32, root: u32, bytes: u64, elem: u32, commute: bool) -> CollSpec {
    let mut s = CollSpec::new(kind, p, root, bytes);
    s.elem_bytes = elem;
    s.commutative = commute;
    let e = u64::from(elem);
    if matches!(
        kind,
        CollKind::Alltoallv | CollKind::Allgatherv | CollKind::Gatherv | CollKind::Scatterv
    ) {
        s.per_peer_bytes = (0..p)
            .map(|i| (bytes + u64::from(i) * 3) % 1000 * e)
            .collect();
    }
    if kind == CollKind::ReduceScatter && bytes / e == 100 {
        s.per_peer_bytes = (0..p).map(|i| u64::from(i % 3) * e * 5).collect();
    }
    s
}

const KINDS: [CollKind; 14] = [
    CollKind::Bcast,
    CollKind::Reduce,
    CollKind::Allreduce,
    CollKind::Alltoall,
    CollKind::Alltoallv,
    CollKind::Allgather,
    CollKind::Allgatherv,
    CollKind::Gather,
    CollKind::Gatherv,
    CollKind::Scatter,
    CollKind::Scatterv,
    CollKind::ReduceScatter,
    CollKind::ReduceScatterBlock,
    CollKind::Barrier,
];

fn refused(algo: Algo, p: u32) -> bool {
    algo == Algo::TwoProc && p != 2
}

#[test]
fn every_algorithm_is_deadlock_free_and_matched() {
    let params = [
        AlgoParams::FIXED,
        AlgoParams::FORCED,
        AlgoParams {
            segsize: 1024,
            fanout: 3,
            max_requests: 2,
            radix: 3,
        },
        AlgoParams {
            segsize: 3,
            fanout: 1,
            max_requests: 5,
            radix: 2,
        },
    ];
    for kind in KINDS {
        for &algo in algorithms(kind) {
            for p in [2u32, 3, 4, 5, 7, 8, 12, 13, 16, 17] {
                if refused(algo, p) {
                    continue;
                }
                for bytes in [0u64, 1, 8, 100, 40_000] {
                    for root in [0, p - 1, p / 3] {
                        for (elem, commute) in [(1u32, true), (8, false)] {
                            let spec =
                                spec_for(kind, p, root, bytes * u64::from(elem), elem, commute);
                            for prm in &params {
                                let all = all_programs(&spec, algo, prm);
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
                for commute in [true, false] {
                    let spec = spec_for(kind, p, 0, bytes, 1, commute);
                    let (algo, prm) = decide(&spec);
                    play(&all_programs(&spec, algo, &prm))
                        .unwrap_or_else(|e| panic!("{kind:?} {algo:?} p={p} n={bytes}: {e}"));
                }
            }
        }
    }
}

#[test]
fn refused_calls_are_errors() {
    let sel = Selector::fixed();
    for kind in [CollKind::Alltoall, CollKind::Allgather, CollKind::Barrier] {
        let spec = CollSpec::new(kind, 3, 0, 8);
        let err = schedule(&spec, Algo::TwoProc, &AlgoParams::FORCED, 0, &sel).unwrap_err();
        assert!(matches!(err, CollError::Refused(_)), "{kind:?}: {err}");
    }
}

fn total(kind: CollKind, algo: Algo, p: u32, bytes: u64) -> u64 {
    let spec = spec_for(kind, p, 0, bytes, 1, true);
    play(&all_programs(&spec, algo, &AlgoParams::FIXED)).unwrap()
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
    // binomial / pipeline bcast: every non-root receives n once
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
    // ring / Bruck / recursive doubling / neighbour exchange allgather: p-1 blocks per rank
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
    // reduce_scatter ring / recursive halving: (p-1)/p n per rank
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
    let sel = Selector::fixed();
    let progs = |kind, algo, p: u32, n: u64, elem: u32, commute: bool| {
        let mut spec = CollSpec::new(kind, p, 0, n);
        spec.elem_bytes = elem;
        spec.commutative = commute;
        (0..p)
            .map(|me| schedule(&spec, algo, &AlgoParams::FIXED, me, &sel).unwrap())
            .collect::<Vec<_>>()
    };
    let ar = |algo, n, elem, commute| progs(CollKind::Allreduce, algo, 16, n, elem, commute);
    // ring with count < p runs recursive doubling; segmented ring with segsize 0 is ring
    assert_eq!(
        ar(Algo::Ring, 8, 1, true),
        ar(Algo::RecursiveDoubling, 8, 1, true)
    );
    assert_eq!(
        ar(Algo::SegmentedRing, 4096, 1, true),
        ar(Algo::Ring, 4096, 1, true)
    );
    assert_ne!(
        ar(Algo::Ring, 16, 1, true),
        ar(Algo::RecursiveDoubling, 16, 1, true)
    );
    // Rabenseifner with count < p' or a non-commutative op runs basic_linear
    assert_eq!(
        ar(Algo::Rabenseifner, 8, 1, true),
        ar(Algo::Linear, 8, 1, true)
    );
    assert_eq!(
        ar(Algo::Rabenseifner, 1 << 20, 1, false),
        ar(Algo::Linear, 1 << 20, 1, false)
    );
    // ... judged on elements: 32 bytes of doubles are 4 elements < 16
    assert_eq!(
        ar(Algo::Rabenseifner, 32, 8, true),
        ar(Algo::Linear, 32, 8, true)
    );
    assert_ne!(
        ar(Algo::Rabenseifner, 32, 1, true),
        ar(Algo::Linear, 32, 1, true)
    );
    // reduce Rabenseifner likewise falls back to basic linear
    let red = |algo, n| progs(CollKind::Reduce, algo, 16, n, 1, true);
    assert_eq!(red(Algo::Rabenseifner, 8), red(Algo::Linear, 8));
    // scatter-allgather bcast with count < p runs basic linear
    let bc = |algo, n| progs(CollKind::Bcast, algo, 16, n, 1, true);
    assert_eq!(bc(Algo::ScatterAllgather, 8), bc(Algo::Linear, 8));
    // alltoall linear_sync with no request limit posts everything at once
    let a2a = progs(CollKind::Alltoall, Algo::LinearSync, 16, 64, 1, true);
    assert!(a2a.iter().all(|p| !p.has_window()));
}
