//! MPI_Reduce schedules after ompi/mca/coll/base/coll_base_reduce.c (Open MPI 4.1):
//! `reduce_generic` over chain / pipeline / binary / binomial (in-order binomial tree) /
//! in-order binary trees with segmentation, basic linear, and Rabenseifner
//! (`reduce_intra_redscat_gather`).

use super::halving::{self, Fold};
use super::topo::{self, Tree};
use super::util::{seg_count, segments};
use super::{Algo, AlgoParams, CollError, CollSpec, Step};

pub fn schedule(
    spec: &CollSpec,
    algo: Algo,
    params: &AlgoParams,
    me: u32,
) -> Result<Vec<Step>, CollError> {
    let (p, root) = (spec.comm_size, spec.root);
    let (count, elem) = (spec.count(), spec.elem());
    let segcount = seg_count(params.segsize, elem, count);
    let tree = |t: Tree| generic(&t, count, segcount, elem);
    Ok(match algo {
        Algo::Linear => linear(p, root, me, spec.bytes),
        Algo::Chain => tree(topo::chain(p, root, me, params.fanout)),
        Algo::Pipeline => tree(topo::chain(p, root, me, 1)),
        Algo::Binary => tree(topo::ntree(p, root, me, 2)),
        Algo::Binomial => tree(topo::in_order_bmtree(p, root, me)),
        Algo::InOrderBinary => in_order_binary(p, root, me, count, segcount, elem),
        Algo::Rabenseifner => {
            if count < u64::from(Fold::new(p).pof2) {
                // "count < nprocs_pof2: fall back to binomial" (segsize 0)
                generic(&topo::in_order_bmtree(p, root, me), count, count, elem)
            } else {
                rabenseifner(p, root, me, count, elem)
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

/// basic_linear: the root receives from p-1, p-2, ..., 0 in turn (blocking) and reduces
/// each contribution; everybody else sends its buffer.
pub fn linear(p: u32, root: u32, me: u32, bytes: u64) -> Vec<Step> {
    if me != root {
        return vec![Step::send(root, bytes)];
    }
    let mut steps = Vec::new();
    if root != p - 1 {
        steps.push(Step::recv(p - 1, bytes));
    }
    for i in (0..p - 1).rev() {
        let st = if i == me {
            Step::default()
        } else {
            Step::recv(i, bytes)
        };
        steps.push(st.reducing(bytes));
    }
    steps
}

/// reduce_generic: per segment, receive from every child and reduce, then pass the reduced
/// segment to the parent while the next segment arrives; leaves send segment by segment.
pub fn generic(tree: &Tree, count: u64, segcount: u64, elem: u64) -> Vec<Step> {
    let segs = segments(count, segcount);
    let nchild = tree.children.len() as u64;
    let from_children = |n: u64| {
        let recvs = tree.children.iter().map(|&c| (c, n * elem)).collect();
        Step {
            recvs,
            sends: Vec::new(),
            reduce_bytes: nchild * n * elem,
        }
    };
    let mut steps = Vec::new();
    match tree.parent {
        None => steps.extend(segs.iter().map(|&n| from_children(n))),
        Some(parent) if nchild == 0 => {
            steps.extend(segs.iter().map(|&n| Step::send(parent, n * elem)));
        }
        Some(parent) => {
            steps.push(from_children(segs[0]));
            for w in segs.windows(2) {
                let mut st = from_children(w[1]);
                st.sends.push((parent, w[0] * elem));
                steps.push(st);
            }
            steps.push(Step::send(parent, *segs.last().unwrap_or(&0) * elem));
        }
    }
    steps
}

/// in_order_binary: reduce along the in-order binary tree rooted at p-1, then that rank
/// hands the result to the real root.
fn in_order_binary(p: u32, root: u32, me: u32, count: u64, segcount: u64, elem: u64) -> Vec<Step> {
    let io_root = p - 1;
    let mut steps = generic(&topo::in_order_bintree(p, me), count, segcount, elem);
    if io_root != root {
        if me == io_root {
            steps.push(Step::send(root, count * elem));
        } else if me == root {
            steps.push(Step::recv(io_root, count * elem));
        }
    }
    steps
}

/// redscat_gather: fold to p' ranks, reduce-scatter by recursive halving, then a binomial
/// gather of the 1/p' pieces to the root in the reverse order of the halving steps. An
/// odd root among the first 2r ranks is served by its even neighbour at the end.
fn rabenseifner(p: u32, root: u32, me: u32, count: u64, elem: u64) -> Vec<Step> {
    let fold = Fold::new(p);
    let mut steps = fold.fold_in(me, count, elem);
    let collector = if root < 2 * fold.rem {
        root - root % 2
    } else {
        root
    };
    if let Some(v) = fold.vrank(me) {
        steps.extend(halving::reduce_scatter(&fold, v, count, elem));
        let vroot = fold.vrank(collector).unwrap_or(0);
        let w = halving::windows(count, fold.pof2, v);
        for s in (0..w.len()).rev() {
            let vdest = v ^ (1 << s);
            let dest = fold.real(vdest);
            if (vdest >> s) == (vroot >> s) {
                steps.push(Step::send(dest, w[s].0 * elem));
                break;
            }
            steps.push(Step::recv(dest, w[s].1 * elem));
        }
    }
    if collector != root {
        if me == collector {
            steps.push(Step::send(root, count * elem));
        } else if me == root {
            steps.push(Step::recv(collector, count * elem));
        }
    }
    steps
}
