//! MPI_Bcast programs after ompi/mca/coll/base/coll_base_bcast.c (v4.1.4): the segmented
//! tree broadcast `ompi_coll_base_bcast_intra_generic` over binomial, k-nomial, binary,
//! chain and pipeline trees, split_bintree, basic_linear and the two scatter-allgather
//! variants.

use super::topo::{self, Tree};
use super::util::{real, rounddown, seg_count, vrank};
use super::{Algo, CollError, Ctx, Program};

pub fn build(at: &Ctx, algo: Algo, prog: &mut Program) -> Result<(), CollError> {
    let (spec, prm, me) = (at.spec, at.params, at.me);
    let (p, root) = (spec.comm_size, spec.root);
    let (count, elem) = (spec.count(), spec.elem());
    // COLL_BASE_COMPUTED_SEGCOUNT in each bcast_intra_<tree> wrapper
    let segcount = seg_count(prm.segsize, elem, count);
    let mut tree = |t: Tree| generic(&t, me == root, count, segcount, elem, prog);
    match algo {
        Algo::Linear => linear(p, root, me, spec.bytes, prog),
        Algo::Binomial => tree(topo::bmtree(p, root, me)),
        // coll_tuned_bcast_knomial_radix; build_kmtree needs radix >= 2
        Algo::Knomial => tree(topo::kmtree(p, root, me, prm.radix.max(2))),
        Algo::Binary => tree(topo::ntree(p, root, me, 2)),
        Algo::Pipeline => tree(topo::chain(p, root, me, 1)),
        // build_chain forces a fan-out < 1 (what the fixed rules pass) to 1
        Algo::Chain => tree(topo::chain(p, root, me, prm.fanout)),
        Algo::SplitBinary => split_bintree(p, root, me, count, prm.segsize, elem, prog),
        Algo::ScatterAllgather | Algo::ScatterAllgatherRing => {
            if count < u64::from(p) {
                // bcast_intra_scatter_allgather(_ring): "count < comm_size: switching to
                // basic linear bcast"
                linear(p, root, me, spec.bytes, prog);
            } else {
                let ring = algo == Algo::ScatterAllgatherRing;
                scatter_allgather(p, root, me, count, elem, ring, prog);
            }
        }
        _ => return Err(at.unsupported(algo)),
    }
    Ok(())
}

/// bcast_intra_basic_linear: the root isends to 0..p-1 in rank order and waits for all;
/// the others receive (blocking).
pub fn linear(p: u32, root: u32, me: u32, bytes: u64, prog: &mut Program) {
    if me != root {
        prog.recv(root, bytes);
        return;
    }
    let reqs: Vec<_> = (0..p)
        .filter(|&r| r != root)
        .map(|r| prog.isend(r, bytes))
        .collect();
    prog.wait_all(&reqs);
}

/// Element counts of the segments of a `count`-element message cut into `segcount`
/// pieces (num_segments = ceil(count / segcount); the last one holds the rest).
fn segments(count: u64, segcount: u64) -> Vec<u64> {
    super::util::segments(count, segcount)
}

/// bcast_intra_generic: the root isends each segment to all children and waits for those
/// sends before the next segment; an inner node keeps two receives posted (segment s+1 is
/// posted before segment s is waited for), forwards each segment to all children and waits
/// for those sends; a leaf keeps two receives posted.
pub fn generic(
    tree: &Tree,
    is_root: bool,
    count: u64,
    segcount: u64,
    elem: u64,
    prog: &mut Program,
) {
    let segs = segments(count, segcount);
    let to_children = |n: u64, prog: &mut Program| {
        let reqs: Vec<_> = tree
            .children
            .iter()
            .map(|&c| prog.isend(c, n * elem))
            .collect();
        prog.wait_all(&reqs);
    };
    if is_root {
        for &s in &segs {
            to_children(s, prog);
        }
        return;
    }
    let Some(parent) = tree.parent else { return };
    // The receives are posted for count_by_segment elements; the message carries the
    // segment the parent sends.
    let mut pending = prog.irecv(parent, segs[0] * elem);
    for w in segs.windows(2) {
        let next = prog.irecv(parent, w[1] * elem);
        prog.wait(pending);
        if !tree.children.is_empty() {
            to_children(w[0], prog);
        }
        pending = next;
    }
    prog.wait(pending);
    if !tree.children.is_empty() {
        to_children(*segs.last().unwrap_or(&0), prog);
    }
}

/// split_bintree: the two halves of the message go down the two subtrees of the binary
/// tree (blocking sends, the root alternating between its children segment by segment),
/// then left/right partners swap halves (odd size: everybody but the root; even size: the
/// root sends the right half to the last rank).
fn split_bintree(
    p: u32,
    root: u32,
    me: u32,
    count: u64,
    segsize: u64,
    elem: u64,
    prog: &mut Program,
) {
    let counts = [count.div_ceil(2), count / 2];
    // "segsize < type_size: push segsize up to hold one type"
    let seg = if segsize > 0 { segsize.max(elem) } else { 0 };
    let segcount = |c: u64| if seg > 0 { seg / elem } else { c };
    let too_small =
        counts[0] == 0 || counts[1] == 0 || seg > counts[0] * elem || seg > counts[1] * elem;
    if too_small {
        // "call linear version here": bcast_intra_chain(..., segsize, 1)
        let segcount = seg_count(segsize, elem, count);
        let chain = topo::chain(p, root, me, 1);
        generic(&chain, me == root, count, segcount, elem, prog);
        return;
    }
    let segs = [
        segments(counts[0], segcount(counts[0])),
        segments(counts[1], segcount(counts[1])),
    ];
    let tree = topo::ntree(p, root, me, 2);
    let v = vrank(me, root, p);
    let lr = ((v + 1) % 2) as usize; // 0 = left subtree, 1 = right; the root counts as right
    if me == root {
        for s in 0..segs[0].len() {
            for (i, &child) in tree.children.iter().enumerate().take(2) {
                if let Some(&n) = segs[i].get(s) {
                    prog.send(child, n * elem);
                }
            }
        }
    } else if !tree.children.is_empty() {
        let mine = &segs[lr];
        let mut base = prog.irecv(me_parent(&tree), mine[0] * elem);
        for s in 1..mine.len() {
            let new = prog.irecv(me_parent(&tree), mine[s] * elem);
            prog.wait(base);
            // forwards segcount[lr] elements: a full segment
            for &c in &tree.children {
                prog.send(c, mine[s - 1] * elem);
            }
            base = new;
        }
        prog.wait(base);
        for &c in &tree.children {
            prog.send(c, mine[mine.len() - 1] * elem);
        }
    } else {
        for &n in &segs[lr] {
            prog.recv(me_parent(&tree), n * elem);
        }
    }
    let pair = if lr == 0 {
        (me + 1) % p
    } else {
        (me + p - 1) % p
    };
    let (mine, other) = (counts[lr] * elem, counts[1 - lr] * elem);
    if !p.is_multiple_of(2) {
        if me != root {
            prog.sendrecv(me, pair, mine, pair, other);
        }
    } else if me == root {
        prog.send((root + p - 1) % p, counts[1] * elem);
    } else if me == (root + p - 1) % p {
        prog.recv(root, counts[1] * elem);
    } else {
        prog.sendrecv(me, pair, mine, pair, other);
    }
}

fn me_parent(tree: &Tree) -> u32 {
    tree.parent.expect("a non-root rank has a parent")
}

/// The binomial scatter of bcast_intra_scatter_allgather(_ring): a rank receives its
/// part from `rank - mask` (lowest set bit of its virtual rank), then sends each child
/// `rank + mask` (largest mask first) `curr_count - scatter_count * mask` elements.
/// Followed for all ranks from the root down (a parent has a smaller virtual rank).
fn scatter_phase(p: u32, root: u32, me: u32, count: u64, elem: u64, prog: &mut Program) {
    let sc = count.div_ceil(u64::from(p));
    let mut curr = vec![0u64; p as usize];
    curr[0] = count;
    let me_v = vrank(me, root, p);
    for v in 0..p {
        let top = if v == 0 {
            p.next_power_of_two()
        } else {
            v & v.wrapping_neg()
        };
        if v != 0 && count > u64::from(v) * sc && v == me_v {
            prog.recv((me + p - top) % p, curr[v as usize] * elem);
        }
        let mut mask = top >> 1;
        while mask > 0 {
            if v + mask < p {
                let send = curr[v as usize].saturating_sub(sc * u64::from(mask));
                if send > 0 {
                    curr[(v + mask) as usize] = send;
                    curr[v as usize] -= send;
                    if v == me_v {
                        prog.send((me + mask) % p, send * elem);
                    }
                }
            }
            mask >>= 1;
        }
    }
}

/// bcast_intra_scatter_allgather(_ring): binomial scatter of ceil(count/p)-element
/// blocks, then a ring allgather or a recursive-doubling allgather with the
/// recursive-halving fix-up for subtrees beyond p. Message sizes there depend on what
/// partners received before (`curr_count`, and the `recv_count` variable a fix-up sender
/// sends), so every rank's counters are followed mask by mask.
fn scatter_allgather(
    p: u32,
    root: u32,
    me: u32,
    count: u64,
    elem: u64,
    ring: bool,
    prog: &mut Program,
) {
    scatter_phase(p, root, me, count, elem, prog);
    let sc = count.div_ceil(u64::from(p));
    let block = |b: u32| count.saturating_sub(u64::from(b) * sc).min(sc);
    let v = vrank(me, root, p);
    if ring {
        let (left, right) = ((me + p - 1) % p, (me + 1) % p);
        let (mut send_b, mut recv_b) = (v, (v + p - 1) % p);
        for _ in 1..p {
            let (s, r) = (block(send_b) * elem, block(recv_b) * elem);
            prog.sendrecv(me, right, s, left, r);
            send_b = recv_b;
            recv_b = (recv_b + p - 1) % p;
        }
        return;
    }
    let mut curr: Vec<u64> = (0..p).map(block).collect();
    // recv_count as the scatter left it: the upper bound count - vrank * scatter_count
    // (0 at the root), then the size of each receive.
    let mut recv_count: Vec<u64> = (0..p)
        .map(|x| {
            if x == 0 {
                0
            } else {
                count.saturating_sub(u64::from(x) * sc)
            }
        })
        .collect();
    let mut mask = 1u32;
    while mask < p {
        let before = curr.clone();
        for x in 0..p {
            let xr = x ^ mask;
            if xr < p {
                let got = before[xr as usize];
                recv_count[x as usize] = got;
                curr[x as usize] += got;
                if x == v {
                    let remote = real(xr, root, p);
                    prog.sendrecv(me, remote, before[x as usize] * elem, remote, got * elem);
                }
            }
        }
        // "if (vremote_tree_root + mask > comm_size)": rounds of distance halving, a
        // receive in one round feeding the receiver's send in the next.
        let mut rh = mask >> 1;
        while rh > 0 {
            let sizes = recv_count.clone();
            for x in 0..p {
                if rounddown(x ^ mask, mask) + mask <= p {
                    continue;
                }
                let alldata = p.saturating_sub(rounddown(x, mask) + mask);
                let xr = x ^ rh;
                let tree_root = rounddown(x, rh << 1);
                if xr > x && x < tree_root + alldata && xr >= tree_root + alldata {
                    if x == v {
                        prog.send(real(xr, root, p), sizes[x as usize] * elem);
                    }
                } else if xr < x && xr < tree_root + alldata && x >= tree_root + alldata {
                    let got = sizes[xr as usize];
                    recv_count[x as usize] = got;
                    curr[x as usize] += got;
                    if x == v {
                        prog.recv(real(xr, root, p), got * elem);
                    }
                }
            }
            rh >>= 1;
        }
        mask <<= 1;
    }
}
