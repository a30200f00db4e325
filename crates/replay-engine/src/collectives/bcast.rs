//! MPI_Bcast schedules after ompi/mca/coll/base/coll_base_bcast.c (Open MPI 4.1):
//! the segmented tree broadcast `bcast_intra_generic` over binomial, k-nomial, binary, chain
//! and pipeline trees, split-binary, basic linear and the two scatter-allgather variants.

use super::topo::{self, Tree};
use super::util::{real, seg_count, segments, vrank};
use super::{Algo, AlgoParams, CollError, CollSpec, Step};

/// Default k-nomial radix (coll_tuned_bcast_knomial_radix = 4).
pub const KNOMIAL_RADIX: u32 = 4;

pub fn schedule(
    spec: &CollSpec,
    algo: Algo,
    params: &AlgoParams,
    me: u32,
) -> Result<Vec<Step>, CollError> {
    let (p, root) = (spec.comm_size, spec.root);
    let count = spec.count();
    let elem = spec.elem();
    let segcount = seg_count(params.segsize, elem, count);
    let tree = |t: Tree| generic(&t, me == root, count, segcount, elem);
    Ok(match algo {
        Algo::Linear => linear(p, root, me, spec.bytes),
        Algo::Binomial => tree(topo::bmtree(p, root, me)),
        Algo::Knomial => {
            let radix = if params.fanout >= 2 {
                params.fanout
            } else {
                KNOMIAL_RADIX
            };
            tree(topo::kmtree(p, root, me, radix))
        }
        Algo::Binary => tree(topo::ntree(p, root, me, 2)),
        Algo::Pipeline => tree(topo::chain(p, root, me, 1)),
        Algo::Chain => tree(topo::chain(p, root, me, params.fanout)),
        Algo::SplitBinary => split_bintree(p, root, me, count, params.segsize, elem),
        Algo::ScatterAllgather | Algo::ScatterAllgatherRing => {
            if count < u64::from(p) {
                // "count < comm_size: switching to basic linear bcast"
                linear(p, root, me, spec.bytes)
            } else {
                let ring = algo == Algo::ScatterAllgatherRing;
                scatter_allgather(p, root, me, count, elem, ring)
            }
        }
        _ => {
            return Err(CollError::Unsupported {
                kind: spec.kind,
                algo,
            })
        }
    })
}

/// basic_linear: the root isends to everybody and waits for all.
pub fn linear(p: u32, root: u32, me: u32, bytes: u64) -> Vec<Step> {
    if me == root {
        let sends = (0..p).filter(|&r| r != root).map(|r| (r, bytes)).collect();
        vec![Step {
            sends,
            ..Step::default()
        }]
    } else {
        vec![Step::recv(root, bytes)]
    }
}

/// bcast_intra_generic: the root sends each segment to all children (waiting for those
/// sends before the next segment); inner nodes receive segment s while forwarding s-1;
/// leaves receive segment by segment.
pub fn generic(tree: &Tree, is_root: bool, count: u64, segcount: u64, elem: u64) -> Vec<Step> {
    let segs = segments(count, segcount);
    let to_children = |n: u64| {
        tree.children
            .iter()
            .map(|&c| (c, n * elem))
            .collect::<Vec<_>>()
    };
    let mut steps = Vec::new();
    if is_root {
        for &s in &segs {
            steps.push(Step {
                sends: to_children(s),
                ..Step::default()
            });
        }
    } else if let Some(parent) = tree.parent {
        if tree.children.is_empty() {
            steps.extend(segs.iter().map(|&s| Step::recv(parent, s * elem)));
        } else {
            steps.push(Step::recv(parent, segs[0] * elem));
            for w in segs.windows(2) {
                let mut st = Step {
                    sends: to_children(w[0]),
                    ..Step::default()
                };
                st.recvs.push((parent, w[1] * elem));
                steps.push(st);
            }
            let last = *segs.last().unwrap_or(&0);
            steps.push(Step {
                sends: to_children(last),
                ..Step::default()
            });
        }
    }
    steps
}

/// split_bintree: each half of the message goes down one subtree of the binary tree with
/// blocking sends, then left/right partners swap halves (odd size: everybody but the root;
/// even size: the root sends the right half to the last rank).
fn split_bintree(p: u32, root: u32, me: u32, count: u64, segsize: u64, elem: u64) -> Vec<Step> {
    let counts = [count.div_ceil(2), count / 2];
    let too_small = counts[0] == 0 || counts[1] == 0 || segsize > counts[1] * elem;
    if too_small || p < 3 {
        // "call linear version here": chain with one chain (Open MPI passes fan-out 1)
        let segcount = seg_count(segsize, elem, count);
        return generic(
            &topo::chain(p, root, me, 1),
            me == root,
            count,
            segcount,
            elem,
        );
    }
    let segcount = |c: u64| {
        if segsize > 0 {
            (segsize / elem).max(1).min(c)
        } else {
            c
        }
    };
    let segs = [
        segments(counts[0], segcount(counts[0])),
        segments(counts[1], segcount(counts[1])),
    ];
    let tree = topo::ntree(p, root, me, 2);
    let v = vrank(me, root, p);
    let lr = ((v + 1) % 2) as usize; // 0 = left subtree, 1 = right; the root counts as right
    let mut steps = Vec::new();
    if me == root {
        for s in 0..segs[0].len() {
            for (i, &child) in tree.children.iter().enumerate().take(2) {
                if let Some(&n) = segs[i].get(s) {
                    steps.push(Step::send(child, n * elem));
                }
            }
        }
    } else if let Some(parent) = tree.parent {
        for &n in &segs[lr] {
            steps.push(Step::recv(parent, n * elem));
            for &child in &tree.children {
                steps.push(Step::send(child, n * elem));
            }
        }
    }
    let pair_v = if lr == 0 {
        (v + 1) % p
    } else {
        (v + p - 1) % p
    };
    let pair = real(pair_v, root, p);
    let (mine, other) = (counts[lr] * elem, counts[1 - lr] * elem);
    if !p.is_multiple_of(2) {
        if me != root {
            steps.push(Step::sendrecv(pair, mine, pair, other));
        }
    } else if me == root {
        steps.push(Step::send(real(p - 1, root, p), counts[1] * elem));
    } else if v == p - 1 {
        steps.push(Step::recv(root, counts[1] * elem));
    } else {
        steps.push(Step::sendrecv(pair, mine, pair, other));
    }
    steps
}

/// Elements virtual rank `v` owns after the binomial scatter: [v*sc, min(count, (v+low)*sc)).
fn scattered(p: u32, v: u32, count: u64, sc: u64) -> u64 {
    let low = if v == 0 {
        p.next_power_of_two()
    } else {
        v & v.wrapping_neg()
    };
    let end = (u64::from(v) + u64::from(low)) * sc;
    end.min(count).saturating_sub(u64::from(v) * sc)
}

/// Block of virtual rank `b` in the allgather phase: min(sc, count - b*sc).
fn block(count: u64, sc: u64, b: u32) -> u64 {
    count.saturating_sub(u64::from(b) * sc).min(sc)
}

/// scatter_allgather(_ring): binomial scatter of ceil(count/p)-element blocks, then a
/// recursive-doubling allgather (with Open MPI's recursive-halving fix-up for ranks without
/// a partner) or a ring allgather.
fn scatter_allgather(p: u32, root: u32, me: u32, count: u64, elem: u64, ring: bool) -> Vec<Step> {
    let sc = count.div_ceil(u64::from(p));
    let v = vrank(me, root, p);
    let mut steps = Vec::new();
    // scatter: receive from the parent (lowest set bit), then send to children, big first
    let mut mask = 1u32;
    while mask < p {
        if v & mask != 0 {
            let n = scattered(p, v, count, sc);
            if n > 0 {
                steps.push(Step::recv(real(v - mask, root, p), n * elem));
            }
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if v + mask < p {
            let n = scattered(p, v + mask, count, sc);
            if n > 0 {
                steps.push(Step::send(real(v + mask, root, p), n * elem));
            }
        }
        mask >>= 1;
    }
    if ring {
        let (left, right) = ((me + p - 1) % p, (me + 1) % p);
        let (mut send_b, mut recv_b) = (v, (v + p - 1) % p);
        for _ in 1..p {
            let (s, r) = (block(count, sc, send_b), block(count, sc, recv_b));
            steps.push(Step::sendrecv(right, s * elem, left, r * elem));
            send_b = recv_b;
            recv_b = (recv_b + p - 1) % p;
        }
        return steps;
    }
    steps.extend(recursive_doubling_allgather(p, root, me, count, sc, elem));
    steps
}

/// The allgather phase of scatter_allgather, simulated for all ranks at once because a
/// rank's message sizes depend on what its partners gathered before.
fn recursive_doubling_allgather(
    p: u32,
    root: u32,
    me: u32,
    count: u64,
    sc: u64,
    elem: u64,
) -> Vec<Step> {
    let me_v = vrank(me, root, p);
    let mut cur: Vec<u64> = (0..p).map(|b| block(count, sc, b)).collect();
    let mut last = vec![0u64; p as usize];
    let mut steps = Vec::new();
    let rd = |x: u32, m: u32| x & !(m - 1);
    let mut mask = 1u32;
    while mask < p {
        let old = cur.clone();
        for v in 0..p {
            let vr = v ^ mask;
            if vr < p {
                let got = old[vr as usize];
                cur[v as usize] += got;
                last[v as usize] = got;
                if v == me_v {
                    let remote = real(vr, root, p);
                    steps.push(Step::sendrecv(
                        remote,
                        old[v as usize] * elem,
                        remote,
                        got * elem,
                    ));
                }
            }
        }
        let mut rh = mask >> 1;
        while rh > 0 {
            let snapshot = last.clone();
            for v in 0..p {
                let vtr = rd(v, mask);
                if rd(v ^ mask, mask) + mask <= p {
                    continue;
                }
                let nad = p.saturating_sub(vtr + mask);
                let vr = v ^ rh;
                let tr = rd(v, rh << 1);
                if vr > v && v < tr + nad && vr >= tr + nad && vr < p {
                    if v == me_v {
                        steps.push(Step::send(real(vr, root, p), snapshot[v as usize] * elem));
                    }
                } else if vr < v && vr < tr + nad && v >= tr + nad {
                    let got = snapshot[vr as usize];
                    cur[v as usize] += got;
                    last[v as usize] = got;
                    if v == me_v {
                        steps.push(Step::recv(real(vr, root, p), got * elem));
                    }
                }
            }
            rh >>= 1;
        }
        mask <<= 1;
    }
    steps
}
