//! MPI_Gather / MPI_Scatter programs after ompi/mca/coll/base/coll_base_gather.c and
//! coll_base_scatter.c (v4.1.4): basic_linear (blocking, one peer at a time at the root, in
//! rank order), binomial (in-order binomial tree, whole subtrees per message),
//! linear_sync (gather: the root asks each rank with an empty message for its first
//! segment) and linear_nb (scatter: isends, every max_requests-th a blocking send); and
//! MPI_Gatherv / MPI_Scatterv after coll/basic (coll_basic_gatherv.c, coll_basic_scatterv.c:
//! coll/tuned has none in 4.1), which skip empty blocks.

use super::topo;
use super::util::{seg_count, vrank};
use super::{Algo, CollError, CollKind, Ctx, Program};

pub fn build(at: &Ctx, algo: Algo, prog: &mut Program) -> Result<(), CollError> {
    let (spec, me) = (at.spec, at.me);
    let (p, root, b) = (spec.comm_size, spec.root, spec.bytes);
    match (spec.kind, algo) {
        (CollKind::Gatherv, Algo::Linear) => {
            basic_gatherv(p, root, me, b, &spec.per_peer_bytes, prog);
        }
        (CollKind::Scatterv, Algo::Linear) => {
            basic_scatterv(p, root, me, b, &spec.per_peer_bytes, prog);
        }
        (CollKind::Gather, Algo::Linear) => {
            if me != root {
                prog.send(root, b);
            } else {
                (0..p).filter(|&i| i != me).for_each(|i| prog.recv(i, b));
            }
        }
        (CollKind::Scatter, Algo::Linear) => {
            if me != root {
                prog.recv(root, b);
            } else {
                (0..p).filter(|&i| i != me).for_each(|i| prog.send(i, b));
            }
        }
        (CollKind::Gather, Algo::Binomial) => gather_binomial(p, root, me, b, prog),
        (CollKind::Scatter, Algo::Binomial) => scatter_binomial(p, root, me, b, prog),
        (CollKind::Gather, Algo::LinearSync) => {
            let first = seg_count(at.params.segsize, spec.elem(), spec.count()) * spec.elem();
            gather_linear_sync(p, root, me, b, first.min(b), prog);
        }
        (CollKind::Scatter, Algo::LinearNb) => {
            scatter_linear_nb(p, root, me, b, at.params.max_requests, prog);
        }
        _ => return Err(at.unsupported(algo)),
    }
    Ok(())
}

/// Ranks in the subtree of virtual rank `v` of an in-order binomial tree, as the gather and
/// scatter code computes them (vchild - vrank, capped at size - vchild).
fn subtree(p: u32, v: u32, parent_v: u32) -> u64 {
    u64::from((v - parent_v).min(p - v))
}

/// gather_intra_binomial: a node with children (even virtual rank) receives each child's
/// subtree in tree order (blocking), then everybody but the root sends what it holds to
/// its parent.
fn gather_binomial(p: u32, root: u32, me: u32, b: u64, prog: &mut Program) {
    let tree = topo::in_order_bmtree(p, root, me);
    let v = vrank(me, root, p);
    let mut total = b;
    for &c in &tree.children {
        let n = subtree(p, vrank(c, root, p), v) * b;
        prog.recv(c, n);
        total += n;
    }
    if let Some(parent) = tree.parent {
        prog.send(parent, total);
    }
}

/// scatter_intra_binomial: a leaf (odd virtual rank) receives its block; an inner node
/// receives its subtree's data; then each node sends every child its subtree, last child
/// first (largest subtree first).
fn scatter_binomial(p: u32, root: u32, me: u32, b: u64, prog: &mut Program) {
    let tree = topo::in_order_bmtree(p, root, me);
    let v = vrank(me, root, p);
    if let Some(parent) = tree.parent {
        let n = if v % 2 == 1 {
            b
        } else {
            subtree(p, v, vrank(parent, root, p)) * b
        };
        prog.recv(parent, n);
    }
    for &c in tree.children.iter().rev() {
        prog.send(c, subtree(p, vrank(c, root, p), v) * b);
    }
}

/// gather_intra_linear_sync: each rank waits for the root's empty message, then sends its
/// first segment and the rest (blocking). The root, for i = 0..p-1 in rank order, posts
/// the first-segment receive, sends the empty message (blocking), posts the second-segment
/// receive and waits for the first segment; at the end it waits for all second segments.
/// `first` is COLL_BASE_COMPUTED_SEGCOUNT(segsize) elements (segsize 0: the whole block, the
/// second segment empty).
fn gather_linear_sync(p: u32, root: u32, me: u32, b: u64, first: u64, prog: &mut Program) {
    if me != root {
        prog.recv(root, 0);
        prog.send(root, first);
        prog.send(root, b - first);
        return;
    }
    let mut seconds = Vec::new();
    for i in (0..p).filter(|&i| i != me) {
        let f = prog.irecv(i, first);
        prog.send(i, 0);
        seconds.push(prog.irecv(i, b - first));
        prog.wait(f);
    }
    prog.wait_all(&seconds);
}

/// scatter_intra_linear_nb: the root isends in rank order, except that with max_reqs > 1
/// every destination with i % max_reqs == 0 gets a blocking send; then it waits for all.
fn scatter_linear_nb(p: u32, root: u32, me: u32, b: u64, max_reqs: u32, prog: &mut Program) {
    if me != root {
        prog.recv(root, b);
        return;
    }
    let max = if max_reqs <= 1 { 0 } else { max_reqs };
    let mut reqs = Vec::new();
    for i in (0..p).filter(|&i| i != me) {
        if max == 0 || i % max != 0 {
            reqs.push(prog.isend(i, b));
        } else {
            prog.send(i, b);
        }
    }
    prog.wait_all(&reqs);
}

/// mca_coll_basic_gatherv_intra: non-roots send their block if it is not empty (blocking);
/// the root receives the non-empty blocks in rank order (blocking).
pub fn basic_gatherv(p: u32, root: u32, me: u32, mine: u64, counts: &[u64], prog: &mut Program) {
    if me != root {
        if mine > 0 {
            prog.send(root, mine);
        }
        return;
    }
    for i in (0..p).filter(|&i| i != me) {
        let n = counts.get(i as usize).copied().unwrap_or(0);
        if n > 0 {
            prog.recv(i, n);
        }
    }
}

/// mca_coll_basic_scatterv_intra: the mirror image of basic_gatherv.
pub fn basic_scatterv(p: u32, root: u32, me: u32, mine: u64, counts: &[u64], prog: &mut Program) {
    if me != root {
        if mine > 0 {
            prog.recv(root, mine);
        }
        return;
    }
    for i in (0..p).filter(|&i| i != me) {
        let n = counts.get(i as usize).copied().unwrap_or(0);
        if n > 0 {
            prog.send(i, n);
        }
    }
}
