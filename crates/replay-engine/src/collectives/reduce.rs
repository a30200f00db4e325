//! MPI_Reduce programs after ompi/mca/coll/base/coll_base_reduce.c (v4.1.4):
//! `ompi_coll_base_reduce_generic` over chain / pipeline / binary / in-order binomial /
//! in-order binary trees with segmentation and leaf request windows, basic_linear, and
//! Rabenseifner (`reduce_intra_redscat_gather`).

use super::halving::{self, Fold};
use super::topo::{self, Tree};
use super::util::{seg_count, segments};
use super::{Algo, CollError, Ctx, Program};

pub fn build(at: &Ctx, algo: Algo, prog: &mut Program) -> Result<(), CollError> {
    let (spec, prm, me) = (at.spec, at.params, at.me);
    let (p, root) = (spec.comm_size, spec.root);
    let (count, elem) = (spec.count(), spec.elem());
    let segcount = seg_count(prm.segsize, elem, count);
    let window = prm.max_requests;
    let mut tree = |t: Tree| generic(&t, count, segcount, elem, window, prog);
    match algo {
        Algo::Linear => linear(p, root, me, spec.bytes, prog),
        Algo::Chain => tree(topo::chain(p, root, me, prm.fanout)),
        Algo::Pipeline => tree(topo::chain(p, root, me, 1)),
        Algo::Binary => tree(topo::ntree(p, root, me, 2)),
        Algo::Binomial => tree(topo::in_order_bmtree(p, root, me)),
        Algo::InOrderBinary => in_order_binary(p, root, me, count, segcount, elem, window, prog),
        Algo::Rabenseifner => {
            let pof2 = Fold::new(p).pof2;
            if pof2 < 2 || count < u64::from(pof2) || !spec.commutative {
                // reduce_intra_redscat_gather: "switching to basic linear reduce"
                linear(p, root, me, spec.bytes, prog);
            } else {
                redscat_gather(p, root, me, count, elem, prog);
            }
        }
        _ => return Err(at.unsupported(algo)),
    }
    Ok(())
}

/// reduce_intra_basic_linear: the root receives from p-1 (into its result buffer), then
/// from p-2, ..., 0 in turn (blocking), reducing each contribution (its own included);
/// everybody else sends its buffer.
pub fn linear(p: u32, root: u32, me: u32, bytes: u64, prog: &mut Program) {
    if me != root {
        prog.send(root, bytes);
        return;
    }
    if root != p - 1 {
        prog.recv(p - 1, bytes);
    }
    for i in (0..p - 1).rev() {
        if i != me {
            prog.recv(i, bytes);
        }
        prog.reduce(bytes);
    }
}

/// reduce_generic. A node with children keeps two receives posted: for each segment and
/// each child it posts the receive of (segment, child), waits for the one posted before,
/// and reduces it (the first child's data is received into the accumulator, so child 1's
/// turn reduces the own data with it); when a segment's last child is reduced it sends the
/// segment to its parent (blocking) before going on. A leaf sends its segments with
/// blocking sends, or, with `max_requests` > 0 and more segments than that, keeps
/// `max_requests` synchronous isends in flight, waiting for them round-robin.
pub fn generic(
    tree: &Tree,
    count: u64,
    segcount: u64,
    elem: u64,
    max_requests: u32,
    prog: &mut Program,
) {
    let segs = segments(count, segcount);
    if tree.children.is_empty() {
        let Some(parent) = tree.parent else { return };
        let k = max_requests as usize;
        if k == 0 || segs.len() <= k {
            for &n in &segs {
                prog.send(parent, n * elem);
            }
            return;
        }
        let mut slots: Vec<_> = segs[..k]
            .iter()
            .map(|&n| prog.issend(parent, n * elem))
            .collect();
        for (i, &n) in segs[k..].iter().enumerate() {
            let c = i % k;
            prog.wait(slots[c]);
            slots[c] = prog.issend(parent, n * elem);
        }
        prog.wait_all(&slots);
        return;
    }
    let nseg = segs.len();
    let mut prev = None; // the request posted last, in reqs[inbi ^ 1]
    for s in 0..=nseg {
        for (i, &child) in tree.children.iter().enumerate() {
            let posted = (s < nseg).then(|| prog.irecv(child, segs[s] * elem));
            if let Some(r) = prev {
                prog.wait(r);
            }
            if i > 0 {
                prog.reduce(segs[s] * elem);
            } else if s > 0 {
                prog.reduce(segs[s - 1] * elem);
                if let Some(parent) = tree.parent {
                    prog.send(parent, segs[s - 1] * elem);
                }
                if s == nseg {
                    break;
                }
            }
            prev = posted;
        }
    }
}

/// reduce_intra_in_order_binary: reduce_generic over the in-order binary tree rooted at
/// p-1, then that rank sends the result to the real root.
#[allow(clippy::too_many_arguments)]
fn in_order_binary(
    p: u32,
    root: u32,
    me: u32,
    count: u64,
    segcount: u64,
    elem: u64,
    window: u32,
    prog: &mut Program,
) {
    let io_root = p - 1;
    generic(
        &topo::in_order_bintree(p, me),
        count,
        segcount,
        elem,
        window,
        prog,
    );
    if io_root != root {
        if me == root {
            prog.recv(io_root, count * elem);
        } else if me == io_root {
            prog.send(root, count * elem);
        }
    }
}

/// reduce_intra_redscat_gather: fold to p' ranks, reduce-scatter by recursive halving,
/// then a binomial gather of the pieces to the root in the reverse order of the halving
/// steps. An odd root among the first 2r ranks takes rank 0's place: rank 0 sends it its
/// piece after the reduce-scatter and leaves.
fn redscat_gather(p: u32, root: u32, me: u32, count: u64, elem: u64, prog: &mut Program) {
    let fold = Fold::new(p);
    fold.fold_in(me, count, elem, prog);
    let mut vrank = fold.vrank(me);
    let mut w = vrank.map(|v| halving::windows(count, fold.pof2, v));
    if let Some(v) = vrank {
        halving::reduce_scatter(&fold, v, count, elem, prog);
    }
    let nsteps = fold.pof2.trailing_zeros() as usize;
    let odd_root = root < 2 * fold.rem && !root.is_multiple_of(2);
    let vroot = if odd_root {
        0
    } else {
        fold.vrank(root)
            .expect("an even or unfolded root keeps a virtual rank")
    };
    if odd_root {
        // vrank 0's windows (the lower rank of every pair): recv = wsize / 2 each step
        let w0 = halving::windows(count, fold.pof2, 0);
        if me == root {
            prog.recv(0, w0[nsteps - 1].0 * elem);
            vrank = Some(0);
            w = Some(w0);
        } else if vrank == Some(0) {
            prog.send(root, w0[nsteps - 1].0 * elem);
            vrank = None;
        }
    }
    let (Some(v), Some(w)) = (vrank, w) else {
        return;
    };
    for step in (0..nsteps).rev() {
        let vdest = v ^ (1 << step);
        let dest = if vdest == 0 && odd_root {
            root
        } else {
            fold.real(vdest)
        };
        if (vdest >> step) == (vroot >> step) {
            prog.send(dest, w[step].0 * elem);
            break;
        }
        prog.recv(dest, w[step].1 * elem);
    }
}
